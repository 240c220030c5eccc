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
CPUPROFILE=$out/cpu.prof CPUPROFILESIGNAL=40 CPUPROFILE_FREQUENCY=200 LD_PRELOAD=$lib \
  java -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp . App 2000 >/dev/null 2>"$out/stderr.txt" &
pid=$!
wait $pid
mv "$out/cpu.prof.0" "$out/cpu.prof"
mv "/tmp/perf-$pid.map" "$out/"
rm -f "$out/stderr.txt" "$out/App.class"
[[ -s $out/cpu.prof ]] || { echo "generate.sh: no profile" >&2; exit 1; }
echo "java: $out/cpu.prof $out/perf-$pid.map"
