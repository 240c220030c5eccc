// clock.c: a program that spends its time in the vDSO, for pprof
// -record -call_graph dwarf's test: read_clock calls clock_gettime
// (CLOCK_MONOTONIC, answered in user space by the kernel's vDSO) in a
// loop for argv[1] milliseconds (default 2000), called by main. A
// sample in the vDSO must unwind through it to read_clock and main.
#include <stdlib.h>
#include <time.h>

static volatile long long sink;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) long long read_clock(long long ns) {
  long long end = now_ns() + ns, n = 0;
  while (now_ns() < end)
    n++;
  return n;
}

int main(int argc, char **argv) {
  long long ms = argc > 1 ? atoll(argv[1]) : 2000;
  sink = read_clock(ms * 1000000LL);
  return 0;
}
