#!/usr/bin/env bash
# testdata/java/generate.sh OUTDIR - profiles a real Java program (OpenJDK
# 17) with gperftools and keeps the perf map the JVM writes at exit
# (-XX:+DumpPerfMapAtExit), for the perf map JIT source's tests:
# OUTDIR/cpu.prof and OUTDIR/perf-PID.map. -XX:-UsePerfData: the JVM does
# not map its statistics file (hsperfdata_USER/PID in /tmp), which the
# profile's memory map would name.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for tool in java javac; do
  command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
done
lib=/usr/lib/x86_64-linux-gnu/libprofiler.so
[[ -f $lib ]] || { echo "generate.sh: $lib not found (apt-get install libgoogle-perftools-dev)" >&2; exit 1; }
rm -f "$out"/cpu.prof* "$out"/perf-*.map "$out"/App.*
cp "$here/App.java" "$out/"
cd "$out"
javac App.java
# One run takes 3 to 15 s. The JVM under gperftools' profiler has hung,
# idle, once in many runs (a signal arriving while a lock the handler
# needs is held): a run is bounded (120 s), says what its threads were
# waiting in, and is tried again, up to three times.
run() {
  CPUPROFILE=$out/cpu.prof CPUPROFILESIGNAL=40 CPUPROFILE_FREQUENCY=200 LD_PRELOAD=$lib \
    java -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp . App 2000 >/dev/null 2>"$out/stderr.txt" &
  pid=$!
  for ((i = 0; i < 1200; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" && return 0
      echo "generate.sh: java failed:" >&2; cat "$out/stderr.txt" >&2; exit 1
    fi
    sleep 0.1
  done
  echo "generate.sh: java (pid $pid) still running after 120 s; its threads wait in:" >&2
  for t in /proc/"$pid"/task/*; do echo "$(cat "$t/wchan" 2>/dev/null)"; done | sort | uniq -c >&2
  if command -v gdb >/dev/null; then # where in user space, for the bug report
    timeout 60 gdb -q -batch -p "$pid" -ex 'thread apply all bt 8' </dev/null 2>&1 | grep -E '^(Thread|#)' | head -120 >&2 || true
  fi
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" || true
  rm -f "$out"/cpu.prof* "/tmp/perf-$pid.map"
  return 1
}
for attempt in 1 2 3; do
  run && break
  ((attempt < 3)) || { echo "generate.sh: java hung three times" >&2; exit 1; }
done
mv "$out/cpu.prof.0" "$out/cpu.prof"
mv "/tmp/perf-$pid.map" "$out/"
rm -f "$out/stderr.txt" "$out/App.class"
[[ -s $out/cpu.prof ]] || { echo "generate.sh: no profile" >&2; exit 1; }
echo "java: $out/cpu.prof $out/perf-$pid.map"
