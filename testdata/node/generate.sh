#!/usr/bin/env bash
# testdata/node/generate.sh OUTDIR - profiles a real Node.js program with
# gperftools and keeps what V8 writes for Linux perf, for the tests of the
# perf map and jitdump JIT sources.
#
# Runs work.js twice under node with libprofiler preloaded
# (CPUPROFILESIGNAL=12: the script starts and stops the profiler itself,
# so the profile is written while the JIT code is still mapped):
#
#   OUTDIR/basic: node --perf-basic-prof -> cpu.prof, perf-PID.map
#   OUTDIR/prof:  node --perf-prof --interpreted-frames-native-stack
#                 -> cpu.prof, jit-PID.dump
#
# and checks that each profile has samples and the JIT files exist. The
# profiles and V8's files name OUTDIR's files (work.js, the jitdump) by
# their paths: testdata/golden.sh makes the checked-in ones under a
# neutral prefix.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
node=$(command -v node) || { echo "generate.sh: node not found (apt-get install nodejs)" >&2; exit 1; }
lib=/usr/lib/x86_64-linux-gnu/libprofiler.so
[[ -f $lib ]] || { echo "generate.sh: $lib not found (apt-get install libgoogle-perftools-dev)" >&2; exit 1; }

run() { # DIR NODE-FLAGS...: sets pid, node's PID
  local dir=$1
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/work.js" "$dir/work.js"
  # The subshell execs node: its PID is node's.
  (
    cd "$dir"
    CPUPROFILE=$dir/cpu.prof CPUPROFILESIGNAL=12 CPUPROFILE_FREQUENCY=200 LD_PRELOAD=$lib \
      exec "$node" "$@" work.js 2000 >/dev/null 2>"$dir/stderr.txt"
  ) &
  pid=$!
  wait "$pid"
  # gperftools appends .0 to the file of the first profiling period.
  mv "$dir/cpu.prof.0" "$dir/cpu.prof"
  rm -f "$dir"/isolate-*.log "$dir/stderr.txt"
}

run "$out/basic" --perf-basic-prof
# V8 writes its perf map into /tmp, by its PID.
mv "/tmp/perf-$pid.map" "$out/basic/"
run "$out/prof" --perf-prof --interpreted-frames-native-stack
ls "$out"/prof/jit-*.dump >/dev/null
for d in basic prof; do
  [[ -s $out/$d/cpu.prof ]] || { echo "generate.sh: no profile in $out/$d" >&2; exit 1; }
done
echo "node $("$node" --version): $(ls "$out"/basic/perf-*.map) $(ls "$out"/prof/jit-*.dump)"
