#!/usr/bin/env bash
# testdata/perf/generate.sh OUTDIR - real perf.data recordings for the
# perf.data reader's tests, made with Debian's linux-perf (perf record -e
# cpu-clock, the software event, which works without hardware counters):
#
#   single.data   work.c in one thread          (perf record -g)
#   threads.data  work.c in three threads       (perf record -g)
#   procs.data    work.c in three processes     (perf record -g)
#   dwarf.data    work.c built without frame pointers (gcc -O2
#                 -fomit-frame-pointer), in three threads
#                 (perf record --call-graph dwarf), and dwarf.script, the
#                 stacks perf script unwinds from it (-F ip,dso --no-inline)
#   dwarf-clock.data  the same program reading the clock (time in the
#                 vDSO), and dwarf-clock.script; perf's build-ID cache of
#                 both recordings in buildid/
#   kernel.data   dd copying a byte at a time (time in the kernel; perf
#                 record --call-graph dwarf, its cache in buildid/ too)
#   kernel-fp.data  the same, perf record -g
#   zstd.data     work.c in three threads, compressed (perf record -g -z)
#   dwarf-zstd.data  dwarf.data's program, compressed (perf record
#                 --call-graph dwarf -z), and dwarf-zstd.script
#   perthread.data  the same, recorded by a thread per CPU (perf record
#                 -g -z --threads): a directory, data and data.0, data.1, ...
#   pipe.data     the same, streamed (perf record -g -o - >pipe.data)
#   group.data    work.c in one thread, a group of two events whose leader
#                 samples and reads both (perf record -e
#                 '{cpu-clock,task-clock}:S' -g); group.report has a
#                 column per event
#   killed.data   work.c in three threads, perf record -g killed (SIGKILL)
#                 once it has written 256 KiB: no data size in its
#                 header, no feature sections
#   node.data     node --perf-prof work.js      (perf record -g -k 1),
#                 with jit-PID.dump in OUTDIR, and node.inject.data, the
#                 same after perf inject --jit, for perf report to compare
#   rebuilt.data  the same program in three threads, rebuilt (another
#                 build ID) after the recording, with rebuilt.script and
#                 rebuilt.report made before
#   nodedwarf/node.data  node --perf-prof work.js (perf record
#                 --call-graph dwarf -k 1), with its jit-PID.dump
#   nodeunwind/node.data  the same with --perf-prof-unwinding-info: V8's
#                 .eh_frame for some of its code in the jitdump
#   jitreuse/jitreuse.data      jitreuse.c (built as jitreuse/jitreuse-bin),
#                 a JIT that reuses and moves its code (perf record -g
#                 -k 1), with its jit-PID.dump and the same after perf
#                 inject --jit for perf report; in a directory of its
#                 own, so that its dump is not found for the node
#                 recording and the other way round
#   jitreuse/nok.data  the same without -k 1: sample times of perf's own
#                 clock, which cannot be matched with the dump's
#
# and, for each, perf report --no-children --sort sym -F
# overhead,period,sym into NAME.report (the share and the period of each
# function: perfReportArgs of perfreport_test.go).
#
# The programs are built from this directory with their debug info naming
# their sources /proc/self/cwd/testdata/perf/FILE (as testdata/mcjit's),
# not by this checkout's path: pprof's -list finds them from the
# checkout's top directory. The recordings name OUTDIR's files by their
# paths: testdata/golden.sh makes the checked-in ones under a neutral
# prefix.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
perf=$(command -v perf) || { echo "generate.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
# perf keeps a copy of every file it samples (the vDSO's too) in its
# build-ID cache, ~/.debug unless its configuration names another: here
# OUTDIR/buildid, for every recording, which perf report reads too; the
# tests give pprof the same (PERF_BUILDID_DIR). PERF_CONFIG names the
# only configuration file perf reads (perf ignores PERF_BUILDID_DIR,
# which it sets for its scripts), so a user's ~/.perfconfig does not
# change the fixtures either.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '[buildid]\n\tdir = "%s"\n' "$out/buildid" >"$scratch/perfconfig"
export PERF_CONFIG=$scratch/perfconfig
# cc OUT SRC FLAGS...: gcc of this directory's SRC into OUT.
cc() {
  local bin=$1 src=$2
  shift 2
  (cd "$here" && gcc "$@" -fdebug-prefix-map="$here"=/proc/self/cwd/testdata/perf -o "$bin" "$src")
}
cc "$out/work" work.c -O1 -g -fno-omit-frame-pointer -pthread
cc "$out/work-nofp" work.c -O2 -g -fomit-frame-pointer -pthread

record() { # NAME ARGS...
  local name=$1
  shift
  "$perf" record -q -e cpu-clock -F 2000 -g -o "$out/$name.data" "$@" >/dev/null 2>"$out/$name.err"
  rm -f "$out/$name.err"
}
report() { # NAME DATA
  "$perf" report -i "$2" --no-children --sort sym -F overhead,period,sym --stdio -q -g none 2>/dev/null | grep -v '^$' >"$out/$1.report"
}

record single "$out/work" single 300
record threads "$out/work" threads 150
record procs "$out/work" procs 150
record zstd -z "$out/work" threads 150
rm -rf "$out/perthread.data"
record perthread -z --threads "$out/work" threads 150
"$perf" record -q -e cpu-clock -F 2000 -g -o - "$out/work" threads 150 >"$out/pipe.data" 2>/dev/null
"$perf" record -q -e '{cpu-clock,task-clock}:S' -F 2000 -g -o "$out/group.data" "$out/work" single 300 >/dev/null 2>&1
# perf record killed: it runs the program (1,500 rounds, some seconds)
# until it has written 256 KiB; then the program is stopped too, by the
# PID the shell that execs it writes (perf record's child).
rm -f "$out/killed.pid"
"$perf" record -q -e cpu-clock -F 2000 -g -o "$out/killed.data" \
  sh -c 'echo $$ >"$0" && exec "$@"' "$out/killed.pid" "$out/work" threads 1500 >/dev/null 2>&1 &
recorder=$!
for _ in $(seq 300); do
  [ "$(stat -c %s "$out/killed.data" 2>/dev/null || echo 0)" -ge 262144 ] && break
  sleep 0.05
done
kill -KILL "$recorder" || { echo "generate.sh: perf record ended before it could be killed" >&2; exit 1; }
wait "$recorder" 2>/dev/null || true
if [[ -s $out/killed.pid ]]; then
  kill -KILL "$(cat "$out/killed.pid")" 2>/dev/null || true
fi
rm -f "$out/killed.pid"
# perf's build-ID cache, buildid/ (PERF_CONFIG says so too): pprof
# unwinds through its copies with PERF_BUILDID_DIR set to it (perf sets
# that variable for the scripts it runs).
cache=(--buildid-dir "$out/buildid")
"$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$out/dwarf.data" "$out/work-nofp" threads 200 >/dev/null 2>&1
"$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$out/dwarf-clock.data" "$out/work-nofp" clock 400 >/dev/null 2>&1
# Time in the kernel, for the kernel symbols' test: a user-bound program
# can have no kernel sample at all. dd's syscalls, a byte at a time.
"$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$out/kernel.data" dd if=/dev/zero of=/dev/null bs=1 count=300000 >/dev/null 2>&1
"$perf" record -q -e cpu-clock -F 1000 -g -o "$out/kernel-fp.data" dd if=/dev/zero of=/dev/null bs=1 count=300000 >/dev/null 2>&1
"$perf" "${cache[@]}" record -q -z -e cpu-clock -F 1000 --call-graph dwarf -o "$out/dwarf-zstd.data" "$out/work-nofp" threads 200 >/dev/null 2>&1
# A program rebuilt after its recording (-O1 instead of -O2): its
# symbols, lines and tables come from perf's copy of the build recorded.
cc "$out/rebuilt" work.c -O2 -g -fomit-frame-pointer -pthread
"$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$out/rebuilt.data" "$out/rebuilt" threads 100 >/dev/null 2>&1
for n in dwarf dwarf-clock dwarf-zstd rebuilt; do
  "$perf" "${cache[@]}" script -i "$out/$n.data" -F ip,dso --no-inline >"$out/$n.script" 2>/dev/null
done
report rebuilt "$out/rebuilt.data"
cc "$out/rebuilt" work.c -O1 -g -fomit-frame-pointer -pthread
for n in single threads procs zstd perthread pipe group dwarf; do report "$n" "$out/$n.data"; done

if command -v node >/dev/null; then
  cp "$here/../node/work.js" "$out/work.js"
  (cd "$out" && rm -f jit-*.dump && "$perf" record -q -e cpu-clock -F 2000 -g -k 1 -o node.data \
    node --perf-prof --interpreted-frames-native-stack work.js 1500 >/dev/null 2>node.err) || true
  rm -f "$out/node.err"
  # perf inject --jit writes one jitted-PID-N.so per function beside the dump.
  "$perf" inject --jit -i "$out/node.data" -o "$out/node.inject.data" 2>/dev/null
  report node "$out/node.inject.data"
  # The same with --call-graph dwarf, in a directory of its own (its
  # jitdump is another process's): V8's JIT code has no unwinding tables,
  # its frames are unwound by their frame pointers.
  mkdir -p "$out/nodedwarf"
  cp "$out/work.js" "$out/nodedwarf/"
  (cd "$out/nodedwarf" && rm -f jit-*.dump && "$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -k 1 \
    -o node.data node --perf-prof --interpreted-frames-native-stack work.js 800 >/dev/null 2>node.err) || true
  rm -f "$out/nodedwarf/node.err"
  mkdir -p "$out/nodeunwind"
  cp "$out/work.js" "$out/nodeunwind/"
  (cd "$out/nodeunwind" && rm -f jit-*.dump && "$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -k 1 \
    -o node.data node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack work.js 800 >/dev/null 2>node.err) || true
  rm -f "$out/nodeunwind/node.err"
fi
mkdir -p "$out/jitreuse"
cc "$out/jitreuse/jitreuse-bin" jitreuse.c -O1 -g -fno-omit-frame-pointer -Wall
(cd "$out/jitreuse" && rm -f jit-*.dump jitted-*.so &&
  "$perf" record -q -e cpu-clock -F 2000 -g -k 1 -o jitreuse.data "$out/jitreuse/jitreuse-bin" >/dev/null 2>/dev/null &&
  "$perf" record -q -e cpu-clock -F 2000 -g -o nok.data "$out/jitreuse/jitreuse-bin" 100 200 100 >/dev/null 2>/dev/null)
"$perf" inject --jit -i "$out/jitreuse/jitreuse.data" -o "$out/jitreuse/jitreuse.inject.data" 2>/dev/null
report jitreuse/jitreuse "$out/jitreuse/jitreuse.inject.data"
ls "$out"
