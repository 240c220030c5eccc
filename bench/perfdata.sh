#!/usr/bin/env bash
# bench/perfdata.sh - how fast is perf.data read, measured side by side:
# pprof -top against perf report --stdio on the same recording.
#
# Records testdata/perf/work.c in three threads with perf record -e
# cpu-clock -F 20000 -g for ROUNDS rounds (5000 make a perf.data of about
# 100 MB), then times, each RUNS times:
#
#   (a) jitpprof -top perf.data
#   (b) perf report --stdio --no-children --sort sym -g none -i perf.data
#
# The table gives the median wall time and the peak RSS (bench/timeit).
#
# With -d, work.c is built without frame pointers (gcc -O2
# -fomit-frame-pointer) and recorded with --call-graph dwarf at 4 kHz
# (1500 rounds make about 450 MB: each sample carries 8 KiB of stack),
# and perf report draws its call graphs (no -g none): both unwind every
# sample's stack.
#
# With -z, the recording is compressed (perf record -z): both decompress
# it as they read it.
#
# Usage: bench/perfdata.sh [-d] [-z] [-n ROUNDS] [-r RUNS] [-w WORKDIR]
# Defaults: 5000 rounds (1500 with -d), 3 runs, build/bench. The
# recording is cached.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds= runs=3 work=build/bench dwarf= zstd=
while getopts "dzn:r:w:" opt; do
  case $opt in
    d) dwarf=1 ;;
    z) zstd=1 ;;
    n) rounds=$OPTARG ;;
    r) runs=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,25p' "$0" >&2; exit 2 ;;
  esac
done
cflags=(-O1 -g -fno-omit-frame-pointer) record=(-F 20000 -g) report=(-g none) what="cpu-clock at 20 kHz, -g"
if [[ -n $dwarf ]]; then
  cflags=(-O2 -g -fomit-frame-pointer) record=(-F 4000 --call-graph dwarf) report=() what="built without frame pointers, cpu-clock at 4 kHz, --call-graph dwarf"
  : "${rounds:=1500}"
fi
: "${rounds:=5000}"
if [[ -n $zstd ]]; then
  record+=(-z) what+=", compressed (-z)"
fi
for tool in perf gcc; do
  command -v "$tool" >/dev/null || { echo "bench/perfdata.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
go build -o "$work/pprof" .
go build -o "$work/timeit" ./bench/timeit
dir=$work/perfdata-$rounds${dwarf:+-dwarf}${zstd:+-zstd}
data=$dir/perf.data
# perf record keeps a copy of each file it samples in its build-ID cache,
# which perf report then reads: the recording's own, kept with it, not
# ~/.debug (PERF_CONFIG names the only configuration file perf reads).
mkdir -p "$dir"
printf '[buildid]\n\tdir = "%s"\n' "$dir/buildid" >"$dir/perfconfig"
export PERF_CONFIG=$dir/perfconfig
if [[ ! -f $data ]]; then
  gcc "${cflags[@]}" -pthread -o "$dir/work" testdata/perf/work.c
  echo "recording ($rounds rounds in 3 threads)" >&2
  perf record -q -e cpu-clock "${record[@]}" -o "$data" "$dir/work" threads "$rounds" >/dev/null 2>&1
fi

measure() { # NAME -- COMMAND...
  local name=$1
  shift 2
  local times=() rss=0
  for ((i = 0; i < runs; i++)); do
    "$work/timeit" -o "$work/$name.time" "$@" >"$work/$name.out" 2>/dev/null
    read -r t m <"$work/$name.time"
    times+=("$t")
    ((m > rss)) && rss=$m
    echo "  $name run $((i + 1))/$runs: ${t}s, ${m} KiB" >&2
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
  echo "$median $rss"
}

read -r ta ma <<<"$(measure a -- "$work/pprof" -top "$data")"
read -r tb mb <<<"$(measure b -- perf report --stdio --no-children --sort sym "${report[@]}" -i "$data")"
size=$(stat -c %s "$data")
cat <<EOF

Machine: $(nproc) CPUs, $(uname -sr); $(go version | cut -d' ' -f3); $(perf --version)
Recording: $(awk -v s="$size" 'BEGIN {printf "%.1f MiB", s/1048576}') (work.c in 3 threads, $what)
Runs: median of $runs

| run | median wall | peak RSS |
|---|---|---|
| (a) jitpprof -top | ${ta} s | $((ma / 1024)) MiB |
| (b) perf report --stdio | ${tb} s | $((mb / 1024)) MiB |
EOF
