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
#   jitreuse/jitreuse.data      jitreuse.c, a JIT that reuses and moves
#                 its code (perf record -g -k 1), with its jit-PID.dump and
#                 the same after perf inject --jit for perf report; in a
#                 directory of its own, so that its dump is not found for
#                 the node recording and the other way round
#   jitreuse/nok.data  the same without -k 1: sample times of perf's own
#                 clock, which cannot be matched with the dump's
#
# and, for each, perf report --no-children --sort sym into NAME.report.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
perf=$(command -v perf) || { echo "generate.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
# perf keeps a copy of every file it samples in its build-ID cache,
# ~/.debug unless its configuration names another: the recordings that
# need theirs name it (--buildid-dir, below); the others' copies go to a
# scratch cache, removed on exit. PERF_CONFIG names the only configuration
# file perf reads (perf ignores PERF_BUILDID_DIR, which it sets for its
# scripts), so a user's ~/.perfconfig does not change the fixtures either.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '[buildid]\n\tdir = "%s"\n' "$scratch/buildid" >"$scratch/perfconfig"
export PERF_CONFIG=$scratch/perfconfig
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$out/work" "$here/work.c"
gcc -O2 -g -fomit-frame-pointer -pthread -o "$out/work-nofp" "$here/work.c"

record() { # NAME ARGS...
  local name=$1
  shift
  "$perf" record -q -e cpu-clock -F 2000 -g -o "$out/$name.data" "$@" >/dev/null 2>"$out/$name.err"
  rm -f "$out/$name.err"
}
report() { # NAME DATA
  "$perf" report -i "$2" --no-children --sort sym --stdio -q -g none 2>/dev/null | grep -v '^$' >"$out/$1.report"
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
# until it has written 256 KiB; then the program is stopped too.
"$perf" record -q -e cpu-clock -F 2000 -g -o "$out/killed.data" "$out/work" threads 1500 >/dev/null 2>&1 &
recorder=$!
for _ in $(seq 300); do
  [ "$(stat -c %s "$out/killed.data" 2>/dev/null || echo 0)" -ge 262144 ] && break
  sleep 0.05
done
kill -KILL "$recorder" || { echo "generate.sh: perf record ended before it could be killed" >&2; exit 1; }
wait "$recorder" 2>/dev/null || true
pkill -KILL -f "^$out/work threads 1500\$" || true
# perf keeps a copy of each file sampled (the vDSO's too) in its build-ID
# cache, here buildid/; pprof unwinds through them with PERF_BUILDID_DIR
# set to it (perf sets that variable for the scripts it runs).
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
gcc -O2 -g -fomit-frame-pointer -pthread -o "$out/rebuilt" "$here/work.c"
"$perf" "${cache[@]}" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$out/rebuilt.data" "$out/rebuilt" threads 100 >/dev/null 2>&1
for n in dwarf dwarf-clock dwarf-zstd rebuilt; do
  "$perf" "${cache[@]}" script -i "$out/$n.data" -F ip,dso --no-inline >"$out/$n.script" 2>/dev/null
done
report rebuilt "$out/rebuilt.data"
gcc -O1 -g -fomit-frame-pointer -pthread -o "$out/rebuilt" "$here/work.c"
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
gcc -O1 -g -fno-omit-frame-pointer -Wall -o "$out/jitreuse-bin" "$here/jitreuse.c"
mkdir -p "$out/jitreuse"
(cd "$out/jitreuse" && rm -f jit-*.dump jitted-*.so &&
  "$perf" record -q -e cpu-clock -F 2000 -g -k 1 -o jitreuse.data "$out/jitreuse-bin" >/dev/null 2>/dev/null &&
  "$perf" record -q -e cpu-clock -F 2000 -g -o nok.data "$out/jitreuse-bin" 100 200 100 >/dev/null 2>/dev/null)
"$perf" inject --jit -i "$out/jitreuse/jitreuse.data" -o "$out/jitreuse/jitreuse.inject.data" 2>/dev/null
report jitreuse/jitreuse "$out/jitreuse/jitreuse.inject.data"
ls "$out"
