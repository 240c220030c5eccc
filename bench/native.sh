#!/usr/bin/env bash
# bench/native.sh - how fast are native binaries symbolized, measured side
# by side: jitpprof's in-process object tool against upstream pprof's
# binutils.
#
# Builds a large -g executable (FUNCS small C++ functions with inlined
# helpers, g++ -g -O1 -no-pie, in UNITS compile units; 55,000 functions
# make about 32 MB), a CPU
# profile of ADDRS distinct addresses in its code behind the mapping a
# process has for it, and times, on that profile:
#
#   (a) jitpprof -top: the in-process object tool
#   (b) upstream pprof -top (the go.mod version) with llvm-symbolizer
#       (LLVM's, found first through PPROF_TOOLS), one process per binary
#   (c) jitpprof -top -symbolize=none: fetching and reporting, no symbols
#   (d) jitpprof -top on the profile (a) wrote symbolized (-proto): the
#       cost of reporting a symbolized profile, without symbolization
#   (e) llvm-symbolizer alone, answering the same addresses
#
# Each is run RUNS times (SLOW_RUNS for b and e), in rounds that run each
# once, so that a machine that slows down or speeds up during the script
# weighs on all alike; the table gives the median wall time, the ratio of
# (b) to it, and the peak RSS (bench/timeit). The -top tables of (a) and (b)
# must be identical.
#
# Usage: bench/native.sh [-n FUNCS] [-u UNITS] [-a ADDRS] [-r RUNS] [-s SLOW_RUNS] [-l LLVM] [-w WORKDIR]
# Defaults: 55000 functions, 1 unit, 50000 addresses, 5 runs, 3 slow
# runs, LLVM 19, build/bench. The executable is cached in WORKDIR between
# runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

funcs=55000 units=1 addrs=50000 runs=5 slow_runs=3 llvm=19 work=build/bench
while getopts "n:u:a:r:s:l:w:" opt; do
  case $opt in
    n) funcs=$OPTARG ;;
    u) units=$OPTARG ;;
    a) addrs=$OPTARG ;;
    r) runs=$OPTARG ;;
    s) slow_runs=$OPTARG ;;
    l) llvm=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,29p' "$0" >&2; exit 2 ;;
  esac
done
llvm_bin=/usr/lib/llvm-$llvm/bin
for tool in g++ "$llvm_bin/llvm-symbolizer"; do
  command -v "$tool" >/dev/null || { echo "bench/native.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "building jitpprof and upstream pprof" >&2
go build -o "$work/pprof" .
go build -o "$work/upstream-pprof" github.com/google/pprof

name=native-$funcs
((units > 1)) && name+=-u$units
exe=$work/$name/synth-exe
if [[ ! -f $exe ]]; then
  echo "generating the executable ($funcs functions in $units units; g++ takes a few minutes)" >&2
  mkdir -p "$work/$name"
  go run ./internal/jitsym/synth/synthobj -exe -units "$units" -n "$funcs" -dir "$work/$name" >/dev/null
fi
# The profile sits alone in its directory: no JIT object is found there.
pdir=$work/$name-profile-$addrs
[[ $units == 1 ]] && pdir=$work/native-profile-$funcs-$addrs
mkdir -p "$pdir"
prof=$pdir/cpu.pb.gz
go run ./bench/synthprof -native -obj "$exe" -n "$addrs" -o "$prof"
go run ./bench/synthprof -native -obj "$exe" -n "$addrs" -addrs "$pdir/addrs.txt" -o /dev/null

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

# shellcheck source=bench/lib.sh
. bench/lib.sh

echo "timing" >&2
"$work/pprof" -proto -output "$pdir/symbolized.pb.gz" "$prof" 2>/dev/null
rm -f "$work"/[a-e].runs
for ((i = 0; i < runs || i < slow_runs; i++)); do
  echo " round $((i + 1))" >&2
  if ((i < runs)); then
    once a -- "$work/pprof" -top "$prof"
    once c -- "$work/pprof" -top -symbolize=none "$prof"
    once d -- "$work/pprof" -top "$pdir/symbolized.pb.gz"
  fi
  if ((i < slow_runs)); then
    once b PPROF_TOOLS="$llvm_bin" -- "$work/upstream-pprof" -top "$prof"
    STDIN="$pdir/addrs.txt" once e -- "$llvm_bin/llvm-symbolizer" --inlining --no-demangle --output-style=JSON "--obj=$exe"
  fi
done
ra=$(summary a) rb=$(summary b) rc=$(summary c) rd=$(summary d) re=$(summary e)

identical=yes
cmp -s "$work/a.top" "$work/b.top" || identical="NO: $work/a.top differs from $work/b.top"

size=$(stat -L -c %s "$exe")
median_b=$(echo "$rb" | cut -d' ' -f2)
row() {
  local label=$1 r=$2
  read -r _ t m <<<"$r"
  awk -v l="$label" -v t="$t" -v b="$median_b" -v m="$m" -v s="$size" \
    'BEGIN { printf "| %s | %.3f s | %.1fx | %.0f MiB (%.2fx the binary) |\n", l, t, b / t, m / 1024, m * 1024 / s }'
}

cat <<EOF

Machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(go version | cut -d' ' -f3); LLVM $("$llvm_bin/llvm-symbolizer" --version | awk '/LLVM version/ {print $NF}')
Binary: $funcs functions in $units compile units, $(awk -v s="$size" 'BEGIN {printf "%.1f MiB", s/1048576}') (.debug_info $(printf '%d' "0x$(readelf -SW "$exe" | awk '$2==".debug_info" {print $6}')" | awk '{printf "%.1f MiB", $1/1048576}')); profile: $addrs distinct addresses
Runs: median of $runs for (a), (c) and (d), of $slow_runs for (b) and (e), in rounds
Identical -top tables for (a) and (b): $identical

| run | median wall | (b) / it | peak RSS |
|---|---|---|---|
$(row "(a) jitpprof -top, in-process object tool" "$ra")
$(row "(b) upstream pprof -top + llvm-symbolizer" "$rb")
$(row "(c) jitpprof -top -symbolize=none" "$rc")
$(row "(d) jitpprof -top on the profile already symbolized" "$rd")
$(row "(e) llvm-symbolizer alone, same addresses" "$re")
EOF
[[ $identical == yes ]]
