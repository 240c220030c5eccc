#!/usr/bin/env bash
# bench/hostileperf.sh - what pprof -top costs on the hostile perf.data
# recordings, perf maps and jitdumps of doc/security.md at the sizes they
# were reported with (bench/hostileperf writes them): per input, the
# wall time, CPU time (user+sys), peak RSS and pprof's exit status, and
# the first line of its messages. Each run may take at most 6 GiB of
# address space and 300 s.
#
# Usage: bench/hostileperf.sh [-s SCALE] [-w WORKDIR] [-p PPROF] [NAME...]
# Defaults: scale 1, build/bench/hostileperf, pprof built from this tree;
# all inputs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scale=1 work=build/bench/hostileperf pprof=
while getopts "s:w:p:" opt; do
  case $opt in
    s) scale=$OPTARG ;;
    w) work=$OPTARG ;;
    p) pprof=$OPTARG ;;
    *) sed -n '2,10p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [[ -z $pprof ]]; then
  pprof=$work/pprof
  go build -o "$pprof" .
fi
if [[ ! -f $work/inputs/.scale-$scale ]]; then
  rm -rf "$work/inputs"
  go run ./bench/hostileperf -scale "$scale" "$work/inputs" >&2
  touch "$work/inputs/.scale-$scale"
fi
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  names=($(cd "$work/inputs" && ls))
fi
printf '%-14s %8s %8s %9s %4s  %s\n' input wall_s cpu_s rss_mib exit message
for name in "${names[@]}"; do
  dir=$work/inputs/$name
  status=0
  # At most 6 GiB of address space and 300 s: a run past either failed.
  (ulimit -v $((6 << 20)); exec /usr/bin/time -f '%e %U %S %M' -o "$work/time" timeout 300 \
    "$pprof" -top -jit_dir "$dir/jit" "$dir/perf.data") >"$work/stdout" 2>"$work/stderr" || status=$?
  read -r wall user sys rss < <(tail -1 "$work/time")
  msg=$(grep -a -v -e '^JIT objects: using' -e '^Some binary' -e '^Try setting' "$work/stderr" | head -1 | cut -c1-150 || true)
  printf '%-14s %8s %8.2f %9d %4s  %s\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)) "$status" "$msg"
done
