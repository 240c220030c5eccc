#!/usr/bin/env bash
# bench/tracecost.sh - what holding a command at its exit for a snapshot
# of its JIT objects (jitsnap's Tracer, for pprof -record) costs, measured
# side by side with the same command run plainly (bench/tracecost).
#
# Workloads:
#   threads  Debian's python3 starting and joining 3000 threads: clone(2) is not
#            traced, so it costs no stop
#   forks    sh running /bin/true 1000 times: the children are not
#            traced, but each SIGCHLD the traced shell receives is a
#            ptrace stop
#   mcjit    the MCJIT host (testdata/mcjit, built by generate.sh
#            --build-only, LLVM 14) for 1 CPU second on 2 threads, its
#            dump listener off (--no-dump): held at its exit while its
#            two JIT objects are copied
#   node     Node.js running testdata/node/work.js for 1 s: held at its
#            exit while jitsnap looks for a GDB JIT interface in its
#            mapped files (there is none)
#
# The table gives, per workload and mode, the median wall time, the
# command's CPU time (user+sys), the tracer's own CPU time, the peak RSS,
# and for traced runs the ptrace stops and how long the command was held
# at its exit.
#
# Usage: bench/tracecost.sh [-r RUNS] [-w WORKDIR]
# Defaults: 5 runs per mode, build/bench.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=5 work=build/bench
while getopts "r:w:" opt; do
  case $opt in
    r) runs=$OPTARG ;;
    w) work=$OPTARG ;;
    *) sed -n '2,27p' "$0" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
go build -o "$work/tracecost" ./bench/tracecost
if [[ ! -x $work/mcjit/bin/jit_host ]]; then
  testdata/mcjit/generate.sh --build-only "$work/mcjit" >&2
fi

bench() { "$work/tracecost" -r "$runs" "$@" 2>/dev/null | sed 1d; }
printf '%-12s %-7s %9s %9s %9s %9s %7s %9s\n' workload mode wall_s cmd_cpu_s self_cpu_s rss_kib stops held_s
bench threads /usr/bin/python3 -c 'import threading
for _ in range(3000):
    t = threading.Thread(target=lambda: None); t.start(); t.join()'
bench forks sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done'
mkdir -p "$work/mcjit/out"
bench mcjit "$work/mcjit/bin/jit_host" --no-dump --out "$work/mcjit/out" --seconds 1 --threads 2 \
  "$work/mcjit/build/workload1.bc" "$work/mcjit/build/workload2.bc"
bench node node testdata/node/work.js 1000
