#!/usr/bin/env bash
# generate.sh [--build-only] OUTDIR - build the MCJIT fixture generator, run
# it, check the results. With --build-only, stop after building bin/jit_host
# and build/workload{1,2}.bc (for tests that run the host themselves).
#
# Leaves in OUTDIR:
#   cpu.prof          gperftools CPU profile (legacy binary format)
#   heap.prof         heap profile from HeapProfilerStart, 4 values per sample
#   heap_sample.prof  tcmalloc heap sample (GetHeapSample), 2 values per sample
#   maps.txt          /proc/self/maps of the host at the end of the run
#   jit/NAME.elf      JIT debug objects written by pprof_jit::DumpListener,
#   jit/NAME.meta     one pair per JIT-compiled module (two modules)
#   bin/jit_host      the host and the library the profiles' MAPPED_LIBRARIES
#   bin/libleaf.so    name (by their absolute path under OUTDIR/bin)
#   build/            intermediate files (bitcode)
#
# The profiles name OUTDIR's files by their paths: testdata/golden.sh
# makes the checked-in ones (golden/) under a neutral prefix.
#
# Environment: JIT_HOST_SECONDS (CPU seconds per thread, default 4),
# JIT_HOST_THREADS (default 2), JITPPROF_LLVM (the LLVM version, default
# 14), JITPPROF_JIT (the JIT mode of jit_host --jit: mcjit, the default,
# orc-rtdyld, orc-jitlink or orc-gdb; the ORC modes write no jitdump/ and
# skip the layout checks), JITPPROF_BUILD_CACHE (a directory where the
# built bin/ and bitcode are kept by a hash of everything that goes into
# them: sources, this script, the compilers' and LLVM's versions and
# flags; a later run with the same inputs copies them instead of
# compiling). Needs the Debian packages in packages.txt.
#
# Exits non-zero, naming the failed check, unless the JIT region sits directly
# below libleaf.so's r-xp mapping in the profiles, the CPU and heap profiles
# sample addresses inside the dumped JIT sections, and llvm-symbolizer turns
# sampled JIT addresses into workload.c functions with file:line.
set -euo pipefail

build_only=false
if [[ ${1:-} == --build-only ]]; then
  build_only=true
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: $0 [--build-only] OUTDIR" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
build=$out/build
bin=$out/bin

# libleaf.so's preferred load address. The dynamic loader passes it to mmap
# as a hint, which the kernel honours when the range is free. It lies far
# below where Linux puts shared libraries and thread stacks (just under
# 0x7f0000000000 by default, growing down) and far above the heap, so the
# 32 MiB below it stay free for jit_host's code and data regions. A fixed
# address also makes every run load the JIT code at the same addresses.
leaf_base=0x500000000000

# JITPPROF_LLVM picks the LLVM version (14 by default; Debian 12 has 14,
# 15, 16 and 19): its clang, headers, libraries and llvm-symbolizer.
llvm=${JITPPROF_LLVM:-14}
for tool in clang-$llvm llvm-config-$llvm llvm-symbolizer-$llvm g++ python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "generate.sh: $tool not found; install the packages in $here/packages.txt" >&2
    exit 1
  fi
done

# The outputs of a previous run are replaced; refuse to touch anything else.
for entry in "$out"/* "$out"/.[!.]*; do
  [[ -e $entry ]] || continue
  case ${entry##*/} in
    build | bin | jit | jitdump | cpu.prof | heap.prof | heap_sample.prof | maps.txt) ;;
    *)
      echo "generate.sh: $out holds $entry, which generate.sh did not make; use an empty or new OUTDIR" >&2
      exit 1
      ;;
  esac
done
rm -rf "$build" "$bin" "$out/jit" "$out/jitdump"
rm -f "$out/cpu.prof" "$out/heap.prof" "$out/heap_sample.prof" "$out/maps.txt"
mkdir -p "$build" "$bin"

# Compile from this directory with relative source names and record
# /proc/self/cwd/testdata/mcjit as the compilation directory (Bazel's
# convention, which pprof's reports trim): debug info names sources
# /proc/self/cwd/testdata/mcjit/FILE, reports show testdata/mcjit/FILE, and
# -list and the web UI's source page find the file from the checkout's top
# directory with no -source_path or -trim_path. (A relative compilation
# directory would be joined twice by DWARF 5 readers, because clang also
# stores it as include directory 0: testdata/mcjit/testdata/...)
cd "$here"
prefix_map=-fdebug-prefix-map=$here=/proc/self/cwd/testdata/mcjit

llvm_inc=$("llvm-config-$llvm" --includedir)
read -r -a llvm_ldflags <<<"$("llvm-config-$llvm" --ldflags)"
read -r -a llvm_libs <<<"$("llvm-config-$llvm" --libs)"

# The build cache key: every input of the build below.
cache=${JITPPROF_BUILD_CACHE:-}
key=$({
  cat generate.sh jit_host.cpp code_layout.cpp code_layout.h leaf.c leaf.h workload.c \
    ../../jitlistener/pprof_jit_listener.h
  "clang-$llvm" --version
  g++ --version
  "llvm-config-$llvm" --version --cxxflags --ldflags --libs
  dpkg-query -W libgoogle-perftools-dev 2>/dev/null || true
  echo "$here"
} | sha256sum | cut -c1-32)
if [[ -n $cache && -f $cache/$key/bin/jit_host ]]; then
  cp -a "$cache/$key/bin/." "$bin/"
  cp -a "$cache/$key/build/." "$build/"
  echo "generate.sh: LLVM $llvm build taken from the cache ($cache/$key), nothing compiled" >&2
  built=cached
else
  built=compiled
fi

if [[ $built == compiled ]]; then
echo "generate.sh: compiling workload.c to bitcode" >&2
for part in 1 2; do
  "clang-$llvm" -g -O1 -fno-omit-frame-pointer "$prefix_map" -Wall -Wextra -Werror \
    -DWORKLOAD_PART=$part -emit-llvm -c workload.c -o "$build/workload$part.bc"
done

echo "generate.sh: building libleaf.so" >&2
# -z noseparate-code: the first mapping of the library is its r-xp text at
# file offset 0, with no r--p header page below it, so JIT code placed
# directly below touches the executable mapping.
"clang-$llvm" -g -O1 -fno-omit-frame-pointer "$prefix_map" -Wall -Wextra -Werror \
  -fPIC -shared leaf.c -o "$bin/libleaf.so" \
  -Wl,-soname,libleaf.so -Wl,-z,noseparate-code -Wl,-Ttext-segment=$leaf_base

echo "generate.sh: building jit_host" >&2
# -no-pie: the host itself loads at a fixed address too.
# --no-as-needed: jit_host never calls libleaf; the JIT code does, so the
# library must be loaded at startup (at its preferred address) regardless.
g++ -std=c++17 -O1 -fno-omit-frame-pointer "$prefix_map" -Wall -Wextra \
  -Werror -no-pie -isystem "$llvm_inc" \
  -D_GNU_SOURCE -D__STDC_CONSTANT_MACROS -D__STDC_FORMAT_MACROS \
  -D__STDC_LIMIT_MACROS jit_host.cpp code_layout.cpp -o "$bin/jit_host" \
  -L"$bin" -Wl,--push-state,--no-as-needed -lleaf -Wl,--pop-state \
  "-Wl,-rpath,\$ORIGIN" "${llvm_ldflags[@]}" "${llvm_libs[@]}" \
  -ltcmalloc_and_profiler

if [[ -n $cache ]]; then
  # Into a temporary directory first: an interrupted copy is never a hit.
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
  mkdir -p "$tmp/bin" "$tmp/build"
  cp -a "$bin/." "$tmp/bin/"
  cp -a "$build"/workload1.bc "$build"/workload2.bc "$tmp/build/"
  rm -rf "${cache:?}/$key"
  mv "$tmp" "$cache/$key"
fi
fi

if $build_only; then
  echo "generate.sh: built $bin/jit_host and $build/workload{1,2}.bc" >&2
  exit 0
fi

jit=${JITPPROF_JIT:-mcjit}
echo "generate.sh: running jit_host --jit $jit" >&2
if [[ $jit == mcjit ]]; then
  # LLVM's perf listener writes a jitdump of the same code under
  # $JITDUMPDIR/.debug/jit/llvm-IR-jit-DATE-RANDOM/; it is moved to jitdump/.
  JIT_HOST_PERF=1 JITDUMPDIR=$build/jitdump-run \
    "$bin/jit_host" --out "$out" --seconds "${JIT_HOST_SECONDS:-4}" \
    --threads "${JIT_HOST_THREADS:-2}" \
    "$build/workload1.bc" "$build/workload2.bc"
  mkdir -p "$out/jitdump"
  mv "$build"/jitdump-run/.debug/jit/llvm-IR-jit-*/jit-*.dump "$out/jitdump/"
  layout=()
else
  # orc-gdb: jit_host runs jitsnap on itself, built from this checkout.
  (cd "$here/../.." && go build -o "$build/jitsnap" ./cmd/jitsnap)
  JIT_HOST_JITSNAP=$build/jitsnap "$bin/jit_host" --jit "$jit" --out "$out" \
    --seconds "${JIT_HOST_SECONDS:-4}" --threads "${JIT_HOST_THREADS:-2}" \
    "$build/workload1.bc" "$build/workload2.bc"
  layout=(--no-layout)
fi

echo "generate.sh: checking the results" >&2
python3 check.py --symbolizer "llvm-symbolizer-$llvm" --summary "${layout[@]}" "$out"
