// events.c: a program for recordings of events other than CPU time
// (perf record -e sched:sched_switch, page-faults,
// syscalls:sys_enter_write): 400 sleeps, so 400 context switches at the
// least, 2,000 write calls, and page faults touching fresh memory.
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void nap(long ns) {
  struct timespec t = {0, ns};
  nanosleep(&t, 0);
}

__attribute__((noinline)) void short_sleeps(void) {
  for (int i = 0; i < 300; i++)
    nap(100000);
}

__attribute__((noinline)) void long_sleeps(void) {
  for (int i = 0; i < 100; i++)
    nap(1000000);
}

__attribute__((noinline)) void writer(void) {
  char b[64];
  memset(b, 'x', sizeof b);
  for (int i = 0; i < 2000; i++)
    if (write(1, b, sizeof b) < 0)
      exit(1);
}

// toucher faults in 20 times 1,024 fresh pages: mapped and unmapped each
// round (malloc would, after the first free, reuse the same memory).
__attribute__((noinline)) void toucher(void) {
  for (int r = 0; r < 20; r++) {
    volatile char *p = mmap(0, 1 << 22, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      exit(1);
    for (int i = 0; i < (1 << 22); i += 4096)
      p[i] = 1;
    munmap((void *)p, 1 << 22);
  }
}

int main(void) {
  short_sleeps();
  long_sleeps();
  writer();
  toucher();
  return 0;
}
