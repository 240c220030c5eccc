#!/usr/bin/env bash
# bench/perfdata.sh - how fast is perf.data read, measured side by side:
# jitpprof -top against perf report on the same recordings, in CPU time
# (user+sys), wall time and peak RSS, by GNU time.
#
# perf report runs as pprof reads, with call graphs (perf report
# --stdio --no-children --sort sym; with -g none it would skip building
# stacks, and for --call-graph dwarf recordings skip unwinding them). The
# recordings (made once, kept in WORKDIR; each with its own build-ID
# cache, named by PERF_CONFIG, never ~/.debug):
#
#   fp50, fp200, fp800  testdata/perf/work.c (gcc -O1 -g
#       -fno-omit-frame-pointer) in three threads, perf record -e
#       cpu-clock -F 20000 -g: about 50, 200 and 800 MB
#   node  testdata/node/work.js under node --perf-prof
#       --interpreted-frames-native-stack, perf record -F 20000 -g -k 1,
#       about 35 MB: jitpprof reads the jitdump beside it, perf needs
#       perf inject --jit first (timed with its report)
#   deep100, deep500  bench/recurse.c (gcc -O2 -g -fomit-frame-pointer,
#       deep recursive stacks, three threads), perf record -F 4000
#       --call-graph dwarf: about 100 and 500 MB, 8 KiB of stack with
#       each sample
#   shallow100  work.c built as for deep, stacks of 15 frames at most,
#       --call-graph dwarf: about 100 MB
#   NAMEz  NAME recorded compressed (perf record -z): fp200z, deep100z...
#
# Each round runs every command once, in turn, so that the machine's
# drift weighs on all alike; the table gives medians of the rounds (peak
# RSS: the largest), the ratio of the CPU medians, and how far pprof's
# flat and cumulative shares are from perf report's (--no-children, and
# --children --max-stack 512: by default perf report stops at 127
# frames, pprof unwinds 512), over the functions with 1% or more in
# either: the largest difference, in percentage points (bench/shares;
# $WORKDIR/perfdata-NAME/shares.err names the function).
#
# Usage: bench/perfdata.sh [-r ROUNDS] [-w WORKDIR] [-s NAME,...] [-n]
# Defaults: 5 rounds, build/bench, all recordings. -n also times
# jitpprof -symbolize=none (reading and unwinding, without the object
# tool).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds=5 work=build/bench sets=fp50,fp200,fp800,node,deep100,deep500,shallow100 nosym=
while getopts "r:w:s:n" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    w) work=$OPTARG ;;
    s) sets=$OPTARG ;;
    n) nosym=1 ;;
    *) sed -n '2,/^set -euo/{/^set/!p}' "$0" >&2; exit 2 ;;
  esac
done
for tool in perf gcc /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench/perfdata.sh: $tool not found" >&2; exit 1; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
go build -o "$work/pprof" .
go build -o "$work/shares" ./bench/shares

# record NAME: makes $work/perfdata-NAME/perf.data (node.data for node)
# unless it is there, and sets dir and data.
record() {
  local name=$1
  dir=$work/perfdata-$name data=$work/perfdata-$name/perf.data
  [[ $name == node ]] && data=$dir/node.data
  mkdir -p "$dir"
  # perf record keeps a copy of each file it samples in its build-ID
  # cache, which perf report then reads: the recording's own, kept with
  # it (PERF_CONFIG names the only configuration file perf reads).
  printf '[buildid]\n\tdir = "%s"\n' "$dir/buildid" >"$dir/perfconfig"
  export PERF_CONFIG=$dir/perfconfig
  [[ -f $data ]] && return
  local cflags=(-O1 -g -fno-omit-frame-pointer) src=testdata/perf/work.c args=(threads) rec=(-F 20000 -g) z=()
  [[ $name == *z ]] && z=(-z)
  case ${name%z} in
    fp50) args+=(2500) ;;
    fp200) args+=(10000) ;;
    fp800) args+=(40000) ;;
    deep100 | deep500) src=bench/recurse.c args=() cflags=(-O2 -g -fomit-frame-pointer) rec=(-F 4000 --call-graph dwarf) ;;&
    deep100) args+=(3600) ;;
    deep500) args+=(18000) ;;
    shallow100) cflags=(-O2 -g -fomit-frame-pointer) rec=(-F 4000 --call-graph dwarf) args+=(330) ;;
    node)
      command -v node >/dev/null || { echo "bench/perfdata.sh: node not found" >&2; exit 1; }
      cp testdata/node/work.js "$dir/"
      echo "recording node (14 s)" >&2
      (cd "$dir" && rm -f jit-*.dump jitted-*.so && perf record -q -e cpu-clock -F 20000 -g -k 1 -o node.data \
        node --perf-prof --interpreted-frames-native-stack work.js 14000 >/dev/null 2>&1)
      return ;;
    *) echo "bench/perfdata.sh: no recording $name" >&2; exit 2 ;;
  esac
  gcc "${cflags[@]}" -pthread -o "$dir/prog" "$src"
  echo "recording $name (${args[*]} ${z[*]})" >&2
  perf record -q "${z[@]}" -e cpu-clock "${rec[@]}" -o "$data" "$dir/prog" "${args[@]}" >/dev/null 2>&1
}

# once NAME COMMAND...: runs COMMAND, appending "WALL USER SYS MAXRSS_KB"
# to $dir/NAME.runs; its output goes to $dir/NAME.out.
once() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$dir/$name.time" "$@" >"$dir/$name.out" 2>"$dir/$name.err" ||
    { cat "$dir/$name.err" >&2; exit 1; }
  cat "$dir/$name.time" >>"$dir/$name.runs"
  echo "  $name: $(cat "$dir/$name.time") (wall, user, sys seconds; KiB)" >&2
}

# summary NAME: "WALL CPU MAXRSS_MIB", the medians of NAME's runs (CPU:
# user+sys) and the largest RSS.
summary() {
  awk '{w[NR] = $1; c[NR] = $2 + $3; if ($4 > m) m = $4}
    function med(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {printf "%.2f %.2f %d\n", med(w, NR), med(c, NR), m / 1024}' "$dir/$1.runs"
}

IFS=, read -r -a names <<<"$sets"
for name in "${names[@]}"; do record "$name"; done
for name in "${names[@]}"; do
  record "$name"
  rm -f "$dir"/*.runs
done
for ((i = 1; i <= rounds; i++)); do
  echo "round $i/$rounds" >&2
  for name in "${names[@]}"; do
    record "$name"
    echo " $name" >&2
    once a "$work/pprof" -top "$data"
    [[ -n $nosym ]] && once c "$work/pprof" -symbolize=none -top "$data"
    if [[ $name == node ]]; then
      once b sh -c 'perf inject --jit -i "$1" -o "$2" && perf report --stdio --no-children --sort sym -i "$2"' sh "$data" "$dir/inject.data"
    else
      once b perf report --stdio --no-children --sort sym -i "$data"
    fi
  done
done

cat <<EOF

Machine: $(nproc) CPUs, $(uname -sr); $(go version | cut -d' ' -f3); $(perf --version); $(node --version 2>/dev/null || echo no node)
Rounds: $rounds, each command once in turn; medians (CPU: user+sys), peak RSS the largest

| recording | size | jitpprof -top: CPU, wall, peak RSS | perf report: CPU, wall, peak RSS | CPU ratio | shares: max difference, flat / cum |
|---|---|---|---|---|---|
EOF
for name in "${names[@]}"; do
  record "$name"
  in=$data
  [[ $name == node ]] && in=$dir/inject.data
  # The cumulative shares of whole stacks: perf report stops at 127
  # frames by default (kernel.perf_event_max_stack), pprof at 512.
  perf report --stdio --children --sort sym -g none --max-stack 512 -i "$in" >"$dir/children.out" 2>/dev/null
  read -r wa ca ma <<<"$(summary a)"
  read -r wb cb mb <<<"$(summary b)"
  read -r df dc <<<"$("$work/shares" "$dir/a.out" "$dir/b.out" "$dir/children.out" 2>"$dir/shares.err")"
  size=$(stat -c %s "$data")
  printf '| %s | %s | %s s, %s s, %s MiB | %s s, %s s, %s MiB | %s | %s / %s |\n' "$name" \
    "$(awk -v s="$size" 'BEGIN {printf "%.0f MB", s / 1e6}')" "$ca" "$wa" "$ma" "$cb" "$wb" "$mb" \
    "$(awk -v a="$ca" -v b="$cb" 'BEGIN {printf "%.2f", a / b}')" "$df" "$dc"
  if [[ -n $nosym ]]; then
    read -r wc cc mc <<<"$(summary c)"
    printf '| %s, jitpprof -symbolize=none | | %s s, %s s, %s MiB | | %s | |\n' "$name" "$cc" "$wc" "$mc" \
      "$(awk -v a="$cc" -v b="$cb" 'BEGIN {printf "%.2f", a / b}')"
  fi
done
