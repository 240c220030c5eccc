#!/usr/bin/env bash
# bench/memscale.sh - how much memory does pprof -top take per sampled
# address, and how much of it is jitpprof's own, at 100,000 and 1,000,000
# distinct addresses, measured side by side.
#
# Two kinds of profile, each of ADDRS distinct addresses (one sample
# each, as bench/synthprof makes them):
#
#   native: bench/native.sh's large -g executable (FUNCS_NATIVE small
#           C++ functions with inlined helpers, g++ -g -O1 -no-pie),
#           mapped at its code segment as a process maps it
#   jit:    bench/jitsym.sh's synthetic JIT object (FUNCS_JIT functions,
#           g++ -g -O1 -ffunction-sections -c, sections scattered over
#           ~5 GiB), behind one [0, ^0) mapping, found in a JIT directory
#
# and, on each, times:
#
#   (a) jitpprof -top on the raw profile: the JIT stage (jit), the
#       in-process symbolizer or object tool, and upstream's report
#   (b) jitpprof -top on the profile (a) wrote with -proto, already
#       symbolized, alone in its directory (no JIT object found): the
#       parse and the report, no JIT stage and no symbolization
#   (c) upstream pprof -top (the go.mod version) on that same symbolized
#       profile: upstream's own parse and report
#   (d) jitpprof -top -symbolize=none on the raw profile: the parse, the
#       JIT stage and the report, no symbols
#
# and, with -B REV, (a) of jitpprof built at the git revision REV, beside
# the others (a before/after comparison in one run).
#
# jitpprof's own memory is (a) less (b): what the JIT stage and the
# symbolization add to the report of the profile they make. The -top
# tables of (a), (b), (c) and REV's (a) must be identical.
#
# Each is run RUNS times, in rounds that run each once, so that a machine
# that slows down or speeds up during the script weighs on all alike; the
# table gives the medians of the wall time, the CPU time (user and
# system) and the peak RSS (bench/timeit: wait4's ru_maxrss, as GNU
# time's %M), each on its own.
#
# Usage: bench/memscale.sh [-a "ADDRS..."] [-k "KINDS..."] [-n FUNCS_NATIVE] [-j FUNCS_JIT] [-r RUNS] [-B REV] [-w WORKDIR]
# Defaults: -a "100000 1000000", -k "native jit", 55000 and 40000
# functions, 5 runs, build/bench. The executable and the object are
# cached in WORKDIR between runs, and shared with bench/native.sh and
# bench/jitsym.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

sizes="100000 1000000" kinds="native jit" funcs_native=55000 funcs_jit=40000 runs=5 base= work=build/bench
while getopts "a:k:n:j:r:B:w:" opt; do
  case $opt in
    a) sizes=$OPTARG ;;
    k) kinds=$OPTARG ;;
    n) funcs_native=$OPTARG ;;
    j) funcs_jit=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) base=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,44p' "$0" >&2; exit 2 ;;
  esac
done
command -v g++ >/dev/null || { echo "bench/memscale.sh: g++ not found" >&2; exit 1; }
mkdir -p "$work"
work=$(cd "$work" && pwd)

echo "building jitpprof and upstream pprof" >&2
go build -o "$work/pprof" .
go build -o "$work/upstream-pprof" github.com/google/pprof
if [[ -n $base ]]; then
  echo "building jitpprof at $base" >&2
  rm -rf "$work/base-src"
  mkdir -p "$work/base-src"
  git archive "$base" | tar -x -C "$work/base-src"
  (cd "$work/base-src" && go build -o "$work/pprof-base" .)
  rm -rf "$work/base-src"
fi

exe=$work/native-$funcs_native/synth-exe
obj=$work/obj-$funcs_jit/synth.elf
jit=$work/jit-$funcs_jit
for kind in $kinds; do
  case $kind in
    native)
      if [[ ! -f $exe ]]; then
        echo "generating the executable ($funcs_native functions; g++ takes a few minutes)" >&2
        mkdir -p "$work/native-$funcs_native"
        go run ./internal/jitsym/synth/synthobj -exe -units 1 -n "$funcs_native" -dir "$work/native-$funcs_native" >/dev/null
      fi
      ;;
    jit)
      if [[ ! -f $obj ]]; then
        echo "generating the synthetic object ($funcs_jit functions; g++ takes a while)" >&2
        mkdir -p "$work/obj-$funcs_jit"
        go run ./internal/jitsym/synth/synthobj -n "$funcs_jit" -dir "$work/obj-$funcs_jit" >/dev/null
      fi
      mkdir -p "$jit"
      ln -sf "$obj" "$jit/synth.elf"
      ;;
    *) echo "bench/memscale.sh: unknown kind $kind (native or jit)" >&2; exit 2 ;;
  esac
done

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT

# shellcheck source=bench/lib.sh
. bench/lib.sh

# raw KIND N and symbolized KIND N: the profiles of N addresses. Each
# sits alone in its directory: no JIT object is found beside it.
raw() { echo "$work/memscale-$1-$2/cpu.pb.gz"; }
symbolized() { echo "$work/memscale-$1-$2-symbolized/cpu.pb.gz"; }
# jitflags KIND: the flags that give jitpprof the profile's JIT objects.
jitflags() { [[ $1 == jit ]] && echo "-jit_dir=$jit" || true; }

for kind in $kinds; do
  for n in $sizes; do
    r=$(raw "$kind" "$n") s=$(symbolized "$kind" "$n")
    mkdir -p "$(dirname "$r")" "$(dirname "$s")"
    if [[ $kind == native ]]; then
      go run ./bench/synthprof -native -obj "$exe" -n "$n" -o "$r"
    else
      go run ./bench/synthprof -obj "$jit/synth.elf" -n "$n" -o "$r"
    fi
    # shellcheck disable=SC2046
    "$work/pprof" -proto -output "$s" $(jitflags "$kind") "$r" 2>/dev/null
    rm -f "$work/mem-$kind-$n"-[a-e].runs
  done
done

echo "timing" >&2
for ((i = 0; i < runs; i++)); do
  echo " round $((i + 1))" >&2
  for kind in $kinds; do
    for n in $sizes; do
      r=$(raw "$kind" "$n") s=$(symbolized "$kind" "$n") x=mem-$kind-$n
      # shellcheck disable=SC2046
      once "$x-a" -- "$work/pprof" -top $(jitflags "$kind") "$r"
      once "$x-b" -- "$work/pprof" -top "$s"
      once "$x-c" -- "$work/upstream-pprof" -top "$s"
      # shellcheck disable=SC2046
      once "$x-d" -- "$work/pprof" -top -symbolize=none $(jitflags "$kind") "$r"
      if [[ -n $base ]]; then
        # shellcheck disable=SC2046
        once "$x-e" -- "$work/pprof-base" -top $(jitflags "$kind") "$r"
      fi
    done
  done
done

identical=yes
for kind in $kinds; do
  for n in $sizes; do
    x=$work/mem-$kind-$n
    for y in a c ${base:+e}; do
      cmp -s "$x-$y.top" "$x-b.top" || identical="NO: $x-$y.top differs from $x-b.top"
    done
  done
done

# row LABEL NAME N: a row of the table.
row() {
  local label=$1 n=$3
  read -r _ t c m _ <<<"$(stats "$2")"
  awk -v l="$label" -v t="$t" -v c="$c" -v m="$m" -v n="$n" \
    'BEGIN { printf "| | %s | %.2f s | %.2f s | %.0f MiB | %.2f KB |\n", l, t, c, m / 1024, m * 1.024 / n }'
}

cat <<EOF

Machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3); upstream pprof $(go list -m -f '{{.Version}}' github.com/google/pprof)
Runs: medians of $runs, in rounds; identical -top tables for (a), (b) and (c): $identical

| profile | pprof -top | wall | CPU (user+sys) | peak RSS | RSS per address |
|---|---|---|---|---|---|
EOF
for kind in $kinds; do
  for n in $sizes; do
    x=mem-$kind-$n
    echo "| $kind, $n addresses | | | | | |"
    row "(a) jitpprof, raw profile" "$x-a" "$n"
    row "(b) jitpprof, symbolized profile" "$x-b" "$n"
    row "(c) upstream pprof, symbolized profile" "$x-c" "$n"
    row "(d) jitpprof -symbolize=none, raw profile" "$x-d" "$n"
    [[ -z $base ]] || row "(a) jitpprof at $base, raw profile" "$x-e" "$n"
    read -r _ ta ca ma _ <<<"$(stats "$x-a")"
    read -r _ tb cb mb _ <<<"$(stats "$x-b")"
    awk -v n="$n" -v ta="$ta" -v tb="$tb" -v ca="$ca" -v cb="$cb" -v ma="$ma" -v mb="$mb" \
      'BEGIN { printf "| | **ours: (a) - (b)** | %+.2f s | %+.2f s | %+.0f MiB | **%.2f KB** |\n", ta - tb, ca - cb, (ma - mb) / 1024, (ma - mb) * 1.024 / n }'
    if [[ -n $base ]]; then
      read -r _ te ce me _ <<<"$(stats "$x-e")"
      awk -v n="$n" -v l="$base" -v ta="$te" -v tb="$tb" -v ca="$ce" -v cb="$cb" -v ma="$me" -v mb="$mb" \
        'BEGIN { printf "| | ours at %s | %+.2f s | %+.2f s | %+.0f MiB | %.2f KB |\n", l, ta - tb, ca - cb, (ma - mb) / 1024, (ma - mb) * 1.024 / n }'
    fi
  done
done
echo
echo "(KB: 1000 bytes; MiB: 1024 KiB.)"
[[ $identical == yes ]]
