// A CPU-bound Node.js program for the perf map and jitdump fixtures
// (see generate.sh): it signals itself with SIGUSR2 to start and stop
// gperftools' CPU profiler (CPUPROFILESIGNAL=12), so that the profile is
// written while the JIT code is still mapped.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function sieve(n) {
  const a = new Uint8Array(n + 1); let c = 0;
  for (let i = 2; i <= n; i++) { if (!a[i]) { c++; for (let j = i * i; j <= n; j += i) a[j] = 1; } }
  return c;
}
function strwork(n) { let s = ''; for (let i = 0; i < n; i++) s += String.fromCharCode(65 + (i * 7) % 26); return s.split('').reverse().join('').length; }
function main() {
  const end = Date.now() + Number(process.argv[2] || 2000);
  let x = 0;
  while (Date.now() < end) { x += fib(22) + sieve(20000) + strwork(2000); }
  return x;
}
if (process.env.CPUPROFILESIGNAL) process.kill(process.pid, 'SIGUSR2'); // start profiling
const r = main();
if (process.env.CPUPROFILESIGNAL) process.kill(process.pid, 'SIGUSR2'); // stop: the profile is written while the JIT code is still mapped
// argv[3]: how long to stay alive after the profile is written (for -jit_pid).
setTimeout(() => console.log(r > 0 ? 'ok' : 'zero'), Number(process.argv[3] || 200));
