#!/usr/bin/env bash
# bench/jitsym.sh - how fast is JIT symbolization, measured side by side.
#
# Builds a synthetic JIT object like a large MCJIT dump (C++ with FUNCS
# small functions and inlined helpers, g++ -g -O1 -ffunction-sections -c,
# every loaded section's sh_addr scattered over ~5 GiB with holes, no
# .debug_aranges), a CPU profile of ADDRS distinct addresses in it behind
# one Start=0/Limit=^0/Offset=0 mapping, and times `pprof -top` on it:
#
#   (a) jitpprof: the JIT stage and the in-process symbolizer
#   (b) upstream pprof (the go.mod version) with llvm-symbolizer: the
#       [0, ^0) mapping (base 0, absolute addresses), one process for the whole object
#   (c) upstream pprof with addr2line only (llvm-symbolizer hidden)
#   (d) jitpprof -jit_symbolizer=binutils: (b) through jitpprof's driver
#   (e) jitpprof -symbolize=none: fetching, the JIT stage and the report,
#       no symbols
#   (f) jitpprof -top on the profile (a) wrote symbolized (-proto), with
#       no JIT directory: the cost of reporting a symbolized profile
#   (g) jitpprof, as (a), on the same addresses in an anonymous mapping,
#       as the profile of a process that embeds the JIT has them (only
#       the JIT stage finds their object)
#   (h) jitpprof -symbolize=none on that profile
#
# Each is run RUNS times (SLOW_RUNS for b, c and d), in rounds that run
# each once; the table gives the median wall time, the ratio to (b) and
# the peak RSS (bench/timeit), and how many times (e)'s time (a) takes and
# (h)'s (g). The -top tables of (a), (b) and (d) must be identical, and
# (g)'s the same but for the File line.
#
# Usage: bench/jitsym.sh [-n FUNCS] [-a ADDRS] [-r RUNS] [-s SLOW_RUNS] [-w WORKDIR]
# Defaults: 40000 functions, 50000 addresses, 5 runs, 3 slow runs,
# build/bench. The object is cached in WORKDIR between runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

funcs=40000 addrs=50000 runs=5 slow_runs=3 work=build/bench
while getopts "n:a:r:s:w:" opt; do
  case $opt in
    n) funcs=$OPTARG ;;
    a) addrs=$OPTARG ;;
    r) runs=$OPTARG ;;
    s) slow_runs=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,32p' "$0" >&2; exit 2 ;;
  esac
done
for tool in g++ llvm-symbolizer addr2line nm objdump; do
  command -v "$tool" >/dev/null || { echo "bench/jitsym.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "building jitpprof and upstream pprof" >&2
go build -o "$work/pprof" .
go build -o "$work/upstream-pprof" github.com/google/pprof

obj=$work/obj-$funcs/synth.elf
if [[ ! -f $obj ]]; then
  echo "generating the synthetic object ($funcs functions; g++ takes a while)" >&2
  mkdir -p "$work/obj-$funcs"
  go run ./internal/jitsym/synth/synthobj -n "$funcs" -dir "$work/obj-$funcs" >/dev/null
fi
jit=$work/jit-$funcs
mkdir -p "$jit"
ln -sf "$obj" "$jit/synth.elf"
prof=$work/profile-$funcs-$addrs.pb.gz
go run ./bench/synthprof -obj "$jit/synth.elf" -n "$addrs" -o "$prof"
anon=$work/profile-$funcs-$addrs-anon.pb.gz
go run ./bench/synthprof -anon -obj "$jit/synth.elf" -n "$addrs" -o "$anon"

# A PATH where pprof finds addr2line, nm and objdump but no llvm-symbolizer.
a2l=$work/addr2line-only
mkdir -p "$a2l"
for t in addr2line nm objdump c++filt; do ln -sf "$(command -v "$t")" "$a2l/$t"; done

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

# shellcheck source=bench/lib.sh
. bench/lib.sh

# The symbolized profile sits alone in its directory: no JIT object is
# found there.
mkdir -p "$work/symbolized-$funcs-$addrs"
symbolized=$work/symbolized-$funcs-$addrs/cpu.pb.gz
"$work/pprof" -proto -output "$symbolized" -jit_dir "$jit" "$prof" 2>/dev/null
echo "timing" >&2
rm -f "$work"/[a-h].runs
for ((i = 0; i < runs || i < slow_runs; i++)); do
  echo " round $((i + 1))" >&2
  if ((i < runs)); then
    once a -- "$work/pprof" -top -jit_dir "$jit" "$prof"
    once e -- "$work/pprof" -top -symbolize=none -jit_dir "$jit" "$prof"
    once f -- "$work/pprof" -top "$symbolized"
    once g -- "$work/pprof" -top -jit_dir "$jit" "$anon"
    once h -- "$work/pprof" -top -symbolize=none -jit_dir "$jit" "$anon"
  fi
  if ((i < slow_runs)); then
    once b -- "$work/upstream-pprof" -top "$prof"
    once c PATH="$a2l" -- "$work/upstream-pprof" -top "$prof"
    once d -- "$work/pprof" -top -jit_symbolizer=binutils -jit_dir "$jit" "$prof"
  fi
done
ra=$(summary a) rb=$(summary b) rc=$(summary c) rd=$(summary d) re=$(summary e) rf=$(summary f)
rg=$(summary g) rh=$(summary h)

identical=yes
for x in a d; do
  cmp -s "$work/$x.top" "$work/b.top" || identical="NO: $work/$x.top differs from $work/b.top"
done
cmp -s <(grep -v '^File: ' "$work/a.top") "$work/g.top" || identical="NO: $work/g.top differs from $work/a.top"

size=$(stat -L -c %s "$obj")
sections=$(readelf -h "$obj" | awk '/Number of section headers/ {print $NF}')
median_b=$(echo "$rb" | cut -d' ' -f2)
row() {
  local label=$1 r=$2
  read -r _ t m <<<"$r"
  awk -v l="$label" -v t="$t" -v b="$median_b" -v m="$m" -v s="$size" \
    'BEGIN { printf "| %s | %.3f s | %.1fx | %.0f MiB (%.2fx the object) |\n", l, t, b / t, m / 1024, m * 1024 / s }'
}

cat <<EOF

Machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(go version | cut -d' ' -f3); $(llvm-symbolizer --version | awk '/LLVM version/ {print "LLVM " $NF}'); $(addr2line --version | head -1)
Object: $funcs functions, $sections section headers, $(awk -v s="$size" 'BEGIN {printf "%.1f MiB", s/1048576}'); profile: $addrs distinct addresses
Runs: median of $runs for (a), (e), (f), (g) and (h), of $slow_runs for the others, in rounds
Identical -top tables for (a), (b), (d) and, but for its File line, (g): $identical

| pprof -top | median wall | speed-up vs (b) | peak RSS |
|---|---|---|---|
$(row "(a) jitpprof, in-process symbolizer" "$ra")
$(row "(b) upstream pprof + llvm-symbolizer, one [0, ^0) mapping" "$rb")
$(row "(c) upstream pprof + addr2line only" "$rc")
$(row "(d) jitpprof -jit_symbolizer=binutils" "$rd")
$(row "(e) jitpprof -symbolize=none" "$re")
$(row "(f) jitpprof -top on the profile already symbolized" "$rf")
$(row "(g) jitpprof, the addresses in an anonymous mapping" "$rg")
$(row "(h) jitpprof -symbolize=none, anonymous mapping" "$rh")

(a) takes $(awk -v a="$(echo "$ra" | cut -d' ' -f2)" -v e="$(echo "$re" | cut -d' ' -f2)" 'BEGIN {printf "%.2f", a / e}')x the time of (e), (g) $(awk -v a="$(echo "$rg" | cut -d' ' -f2)" -v e="$(echo "$rh" | cut -d' ' -f2)" 'BEGIN {printf "%.2f", a / e}')x the time of (h).
EOF
[[ $identical == yes ]]
