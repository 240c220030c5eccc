// offcpu.c: the program of pprof -record -offcpu's test. It alternates,
// ROUNDS times (argv[1], default 10), computing for 30 ms of its CPU
// time (compute_phase) and sleeping for 60 ms (sleep_phase, in
// nanosleep), and prints what it measured itself: the wall time spent
// in each phase and the CPU time of the computing, in nanoseconds
// ("compute_wall sleep_wall compute_cpu"), which the test compares with
// the profile's wall, offcpu and cpu-clock values.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static long long now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void compute_phase(long long ns) {
  long long end = now(CLOCK_THREAD_CPUTIME_ID) + ns;
  while (now(CLOCK_THREAD_CPUTIME_ID) < end)
    for (int i = 0; i < 20000; i++) sink += (unsigned long)i * i;
}

__attribute__((noinline)) void sleep_phase(long long ns) {
  struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
  nanosleep(&ts, NULL);
  sink += ts.tv_sec; // not a tail call: sleep_phase stays on the stack
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  long long compute_wall = 0, sleep_wall = 0, compute_cpu = 0;
  for (int r = 0; r < rounds; r++) {
    long long w = now(CLOCK_MONOTONIC), c = now(CLOCK_THREAD_CPUTIME_ID);
    compute_phase(30000000LL);
    long long w2 = now(CLOCK_MONOTONIC);
    compute_cpu += now(CLOCK_THREAD_CPUTIME_ID) - c;
    compute_wall += w2 - w;
    sleep_phase(60000000LL);
    sleep_wall += now(CLOCK_MONOTONIC) - w2;
  }
  printf("%lld %lld %lld\n", compute_wall, sleep_wall, compute_cpu);
  return 0;
}
