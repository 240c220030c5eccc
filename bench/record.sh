#!/usr/bin/env bash
# bench/record.sh - what recording costs the program recorded and the
# machine, and how faithful it is: pprof -record against perf record,
# side by side, in one run.
#
# Workloads: testdata/perf/work.c built with frame pointers, in three
# threads ("threads ROUNDS") and in three processes ("procs ROUNDS"),
# each about 6 s of CPU time by default. For each, in rounds that run
# every case once, (a) to (c) in one order and then the other (so that a
# machine that slows down or speeds up during the script weighs on all
# alike):
#
#   (a) the workload alone
#   (b) perf record -e cpu-clock -F FREQ --call-graph MODE -k 1 -- the
#       workload
#   (c) pprof -record -frequency FREQ -call_graph MODE -record_output
#       FILE -top -- the workload (recording, then the report)
#   (d) perf report on (b)'s recording
#   (e) pprof -top on (c)'s recording (the report alone)
#
# The workload runs under bench/timeit inside the recorder: its own wall
# and CPU time (user+sys) are the "target" columns, so that its slowdown
# is its own (on a busy machine its CPU time says more than its wall
# time); an outer bench/timeit gives the recorder's wall time, its
# CPU time (the whole less the target's) and peak RSS (the largest of the
# recorder's and the target's, which is a few MiB). The table gives
# medians, and the peak RSS of all rounds.
#
# Fidelity, per workload: every function with 1% or more of the samples
# in perf report --no-children of (b)'s recording, against pprof -top's
# flat share in (c) (-noinlines, perf report's attribution): the largest
# difference of the medians of the rounds; and perf report of (c)'s own
# recording against (c)'s -top: the largest difference in any round.
# Lost: the records the kernel dropped, in all rounds, as perf report
# --stats and pprof count them.
#
# Usage: bench/record.sh [-F FREQ] [-g MODE] [-n ROUNDS_OF_WORK] [-r RUNS] [-w WORKDIR]
# Defaults: 999 Hz (pprof's default), fp (frame pointers; or dwarf), 500
# work rounds (about 6 s of CPU time), 5 runs, build/bench-record.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

freq=999 mode=fp n=500 runs=5 work=build/bench-record
while getopts "F:g:n:r:w:" opt; do
  case $opt in
    F) freq=$OPTARG ;;
    g) mode=$OPTARG ;;
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,39p' "$0" >&2; exit 2 ;;
  esac
done
perf=$(command -v perf) || { echo "bench/record.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "bench/record.sh: gcc not found" >&2; exit 1; }
mkdir -p "$work"
work=$(cd "$work" && pwd)
go build -o "$work/pprof" .
go build -o "$work/timeit" ./bench/timeit
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$work/work" testdata/perf/work.c
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
# perf's build-ID cache, which perf record fills, in the scratch HOME.
printf '[buildid]\n\tdir = "%s"\n' "$home/.debug" >"$home/perfconfig"

# measure NAME -- COMMAND...: runs COMMAND in a clean environment, the
# workload under timeit (target.time), and appends "WALL RSS CPU
# TARGET_WALL TARGET_CPU" to $work/NAME.runs.
measure() {
  local name=$1
  shift 2
  rm -f "$work/target.time"
  env -i PATH="$PATH" HOME="$home" PERF_CONFIG="$home/perfconfig" \
    "$work/timeit" -cpu -o "$work/outer.time" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null ||
    { cat "$work/$name.err" >&2; exit 1; }
  local tw=0 tc=0
  [[ -f $work/target.time ]] && read -r tw _ tc <"$work/target.time"
  read -r w m c <"$work/outer.time"
  echo "$w $m $c $tw $tc" >>"$work/$name.runs"
}

# median FILE COLUMN: the median of a column of numbers.
median() {
  awk -v c="$2" '{print $c}' "$1" | sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'
}

# perfShares REPORT and pprofShares TOP print "FUNCTION<tab>PERCENT"
# lines; glibc's __memmove_* variants are named __memcpy_* (aliases: one
# code, which perf names after one and pprof the other).
perfShares() {
  awk '$2 ~ /^\[.\]$/ {p = $1; sub(/%/, "", p); $1 = $2 = ""; f = substr($0, 3); sub(/^__memmove_/, "__memcpy_", f); print f "\t" p}' "$1"
}
pprofShares() {
  awk '/^ *flat/ {t = 1; next} t && NF >= 6 {p = $2; sub(/%/, "", p); $1 = $2 = $3 = $4 = $5 = ""; f = substr($0, 6); sub(/^__memmove_/, "__memcpy_", f); print f "\t" p}' "$1"
}

# medianShares ROUNDS FILES...: each function's median share over the
# rounds (a round without it counts as 0).
medianShares() {
  local r=$1
  shift
  cat "$@" | awk -F'\t' -v R="$r" '{v[$1] = v[$1] " " $2}
    END {
      for (f in v) {
        n = split(v[f], x, " ")
        for (i = n + 1; i <= R; i++) x[i] = 0
        for (i = 2; i <= R; i++) {t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t}
        print f "\t" (R % 2 ? x[(R + 1) / 2] : (x[R / 2] + x[R / 2 + 1]) / 2)
      }
    }'
}

# maxDiff WANT GOT: the largest difference of the shares of the functions
# WANT gives 1% or more, how many there are, and the function.
maxDiff() {
  awk -F'\t' 'NR == FNR {g[$1] = $2; next} $2 >= 1 {d = $2 - g[$1]; if (d < 0) d = -d; if (d >= m) {m = d; f = $1}; n++} END {printf "%.2f\t%d\t%s\n", m, n, f}' "$2" "$1"
}

for wl in threads procs; do
  rm -f "$work/$wl".*.runs "$work/$wl".*.shares "$work/$wl.lost" "$work/$wl.self.diffs"
  for r in $(seq "$runs"); do
    echo "$wl: round $r of $runs" >&2
    target=("$work/timeit" -cpu -o "$work/target.time" "$work/work" "$wl" "$n")
    # (a), (b) and (c) in one order, then in the other, round after round.
    order=(a b c)
    ((r % 2)) || order=(c b a)
    for c in "${order[@]}"; do
      case $c in
        a) measure "$wl.a" -- "${target[@]}" ;;
        b) measure "$wl.b" -- "$perf" record -q -e cpu-clock -F "$freq" --call-graph "$mode" -k 1 -o "$work/$wl.perf.data" -- "${target[@]}" ;;
        c) measure "$wl.c" -- "$work/pprof" -top -noinlines -nodecount=100000 -record -frequency "$freq" -call_graph "$mode" -record_output "$work/$wl.pprof.data" -- "${target[@]}" ;;
      esac
    done
    measure "$wl.d" -- "$perf" report -i "$work/$wl.perf.data" --no-children --sort sym --stdio -q -g none
    measure "$wl.e" -- "$work/pprof" -top -noinlines -nodecount=100000 "$work/$wl.pprof.data"
    perfShares "$work/$wl.d.out" >"$work/$wl.perf.$r.shares"
    pprofShares "$work/$wl.c.out" >"$work/$wl.pprof.$r.shares"
    env PERF_CONFIG="$home/perfconfig" "$perf" report -i "$work/$wl.pprof.data" --no-children --sort sym --stdio -q -g none 2>/dev/null >"$work/$wl.self.out"
    perfShares "$work/$wl.self.out" >"$work/$wl.self.$r.shares"
    maxDiff "$work/$wl.self.$r.shares" "$work/$wl.pprof.$r.shares" >>"$work/$wl.self.diffs"
    lostPerf=$(env PERF_CONFIG="$home/perfconfig" "$perf" report -i "$work/$wl.perf.data" --stats 2>/dev/null |
      awk '/ stats:$/ && !/^Aggregated/ {exit} $1 ~ /^LOST/ && $2 == "events:" {s += $3} END {print s + 0}')
    lostPprof=$({ grep -o '[0-9]* records.* lost' "$work/$wl.c.err" || true; } | awk '{s += $1} END {print s + 0}')
    echo "$lostPerf $lostPprof" >>"$work/$wl.lost"
  done
done

printf '\nbench/record.sh -F %s -g %s -n %s -r %s: %s, %d CPUs, %s\n\n' "$freq" "$mode" "$n" "$runs" "$(uname -sr)" "$(nproc)" "$("$perf" version)"
echo "| workload | case | target wall | target CPU | target slowdown (wall, CPU) | recorder wall | recorder CPU | peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
for wl in threads procs; do
  base=$(median "$work/$wl.a.runs" 4) basecpu=$(median "$work/$wl.a.runs" 5)
  for c in a b c d e; do
    f=$work/$wl.$c.runs
    w=$(median "$f" 1) cpu=$(median "$f" 3) tw=$(median "$f" 4) tc=$(median "$f" 5)
    rss=$(awk '{if ($2 > m) m = $2} END {printf "%.0f MiB", m / 1024}' "$f")
    case $c in
      a) what="(a) alone" ;;
      b) what="(b) perf record" ;;
      c) what="(c) pprof -record -top" ;;
      d) what="(d) perf report of (b)" ;;
      e) what="(e) pprof -top of (c)'s file" ;;
    esac
    if [[ $c == [abc] ]]; then
      slow=$(awk -v t="$tw" -v b="$base" -v tc="$tc" -v bc="$basecpu" 'BEGIN {printf "%+.1f%%, %+.1f%%", 100 * (t / b - 1), 100 * (tc / bc - 1)}')
      rec=$(awk -v c="$cpu" -v t="$tc" 'BEGIN {printf "%.3f s", c - t}')
      [[ $c == a ]] && rec="" && w=""
      echo "| $wl | $what | ${tw} s | ${tc} s | $slow | ${w:+$w s} | $rec | $rss |"
    else
      echo "| $wl | $what | | | | $w s | $cpu s | $rss |"
    fi
  done
done

echo
echo "| workload | functions ≥ 1% in perf report | largest difference, perf record + perf report vs pprof -record (medians of the rounds) | largest difference, perf report vs pprof -top of pprof's recording (any round) | records lost, perf / pprof (all rounds) |"
echo "|---|---|---|---|---|"
for wl in threads procs; do
  medianShares "$runs" "$work/$wl".perf.*.shares >"$work/$wl.perf.median"
  medianShares "$runs" "$work/$wl".pprof.*.shares >"$work/$wl.pprof.median"
  IFS=$'\t' read -r d nf fn < <(maxDiff "$work/$wl.perf.median" "$work/$wl.pprof.median")
  self=$(sort -g "$work/$wl.self.diffs" | tail -1 | awk -F'\t' '{printf "%.2f pp (%s)", $1, $3}')
  lost=$(awk '{p += $1; q += $2} END {print p " / " q}' "$work/$wl.lost")
  echo "| $wl | $nf | $d pp ($fn) | $self | $lost |"
done
