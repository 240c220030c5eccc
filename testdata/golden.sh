#!/usr/bin/env bash
# testdata/golden.sh [-o DIR] NAME... - regenerate the checked-in fixtures
# testdata/NAME/golden (NAME: mcjit, node, java, perf) with NAME's
# generate.sh, under the neutral prefix /mnt/jitpprof-fixtures.
#
# Profiles and recordings name the files they were made of by their
# absolute paths (gperftools' memory maps, perf's MMAP records, V8's perf
# maps and jitdumps), and a checked-in fixture must not name the machine
# or the checkout it was made in. So each generator runs in mount and UTS
# namespaces of its own (unshare; a user namespace too when not run as
# root), where a scratch directory is mounted on /mnt and the host name
# is jitpprof-fixtures: it writes into /mnt/jitpprof-fixtures/NAME, and
# that is the path its outputs name. Programs, libraries and perf run
# there unchanged (the kernel, gperftools and perf see the namespace's
# paths); nothing outside the namespace sees the mount. The files the
# tests use are then copied into testdata/NAME/golden (into DIR/NAME
# with -o, to look at a run without touching the checkout), replacing
# what was there. TestFixturesNameNoMachinePath checks the result.
#
# Each NAME's provenance note (testdata/NAME/README.md, PROVENANCE.md
# for mcjit) says what its golden/ holds: update its date, tool versions
# and figures after a run. Needs what NAME's generate.sh needs, and
# util-linux's unshare.
set -euo pipefail

prefix=/mnt/jitpprof-fixtures
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  echo "usage: $0 [-o DIR] mcjit|node|java|perf..." >&2
  exit 2
}

if [[ ${JITPPROF_GOLDEN_INSIDE:-} != 1 ]]; then
  dest=$here
  if [[ ${1:-} == -o ]]; then
    [[ $# -ge 2 ]] || usage
    mkdir -p "$2"
    dest=$(cd "$2" && pwd)
    shift 2
  fi
  [[ $# -ge 1 ]] || usage
  for name in "$@"; do
    case $name in
      mcjit | node | java | perf) ;;
      *) usage ;;
    esac
  done
  # /mnt is the scratch directory inside: what is under it is hidden.
  for d in "$here" "$dest"; do
    case $d/ in
      /mnt/*)
        echo "golden.sh: $d is under /mnt, which the namespace covers; use a checkout elsewhere" >&2
        exit 1
        ;;
    esac
  done
  command -v unshare >/dev/null || { echo "golden.sh: unshare not found (apt-get install util-linux)" >&2; exit 1; }
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir "$scratch/${prefix##*/}"
  if [[ $(id -u) == 0 ]]; then
    ns=(unshare --mount --uts --propagation private)
  else
    ns=(unshare --user --map-root-user --mount --uts)
  fi
  # Not exec: the trap removes the scratch directory afterwards.
  JITPPROF_GOLDEN_INSIDE=1 JITPPROF_GOLDEN_SCRATCH=$scratch JITPPROF_GOLDEN_DEST=$dest \
    "${ns[@]}" bash "${BASH_SOURCE[0]}" "$@"
  exit
fi

# Inside the namespaces.
mount --bind "$JITPPROF_GOLDEN_SCRATCH" /mnt
echo jitpprof-fixtures >/proc/sys/kernel/hostname
dest=$JITPPROF_GOLDEN_DEST
unset JITPPROF_GOLDEN_INSIDE JITPPROF_GOLDEN_SCRATCH JITPPROF_GOLDEN_DEST JITPPROF_BUILD_CACHE

# copy NAME FILE...: the files (relative to the run's directory, globs
# allowed) into NAME's golden directory, emptied first.
copy() {
  local name=$1 golden f
  shift
  if [[ $dest == "$here" ]]; then
    golden=$here/$name/golden
  else
    golden=$dest/$name
  fi
  rm -rf "$golden"
  mkdir -p "$golden"
  (
    cd "$prefix/$name"
    for f in "$@"; do
      # Unquoted: the globs expand here; each must match.
      for g in $f; do
        [[ -e $g ]] || { echo "golden.sh: $name made no $f" >&2; exit 1; }
        mkdir -p "$golden/$(dirname "$g")"
        cp -a "$g" "$golden/$g"
      done
    done
  )
  echo "golden.sh: $name: $golden"
}

for name in "$@"; do
  echo "golden.sh: $name: running $name/generate.sh $prefix/$name" >&2
  case $name in
    mcjit)
      "$here/mcjit/generate.sh" "$prefix/mcjit"
      copy mcjit cpu.prof heap.prof heap_sample.prof maps.txt 'jit/*' 'jitdump/*' 'bin/*'
      ;;
    node)
      "$here/node/generate.sh" "$prefix/node"
      copy node basic/cpu.prof 'basic/perf-*.map' basic/work.js prof/cpu.prof 'prof/jit-*.dump' prof/work.js
      ;;
    java)
      "$here/java/generate.sh" "$prefix/java"
      copy java cpu.prof 'perf-*.map' App.java
      ;;
    perf)
      "$here/perf/generate.sh" "$prefix/perf" >/dev/null
      copy perf work single.data single.report threads.data threads.report zstd.data zstd.report \
        group.data group.report jitreuse/jitreuse-bin jitreuse/jitreuse.data jitreuse/jitreuse.report jitreuse/nok.data \
        'jitreuse/jit-*.dump'
      ;;
  esac
done
