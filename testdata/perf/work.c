// Programs for the perf.data tests (see generate.sh): known hot functions
// in one thread, in several threads, and in several processes.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long hot_mix(unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; i++) s += (i * i) ^ (s >> 3);
  return s;
}

__attribute__((noinline)) unsigned long hot_hash(unsigned long n) {
  unsigned long h = 1469598103934665603UL;
  for (unsigned long i = 0; i < n; i++) h = (h ^ (i & 0xff)) * 1099511628211UL;
  return h;
}

__attribute__((noinline)) unsigned long warm_copy(unsigned long n) {
  static char a[1 << 16], b[1 << 16];
  for (unsigned long i = 0; i < n; i++) memcpy(a, b, sizeof a);
  return a[7];
}

// clock_read reads the clock in a loop: the time goes to the vDSO.
__attribute__((noinline)) long clock_read(long n) {
  struct timespec ts;
  long s = 0;
  for (long i = 0; i < n; i++) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s += ts.tv_nsec;
  }
  return s;
}

static void work(int rounds) {
  for (int r = 0; r < rounds; r++) {
    sink += hot_mix(2000000 + r);
    sink += hot_hash(1000000 + r);
    sink += warm_copy(10 + (r & 1));
  }
}

static void *thread_main(void *arg) {
  work((int)(long)arg);
  return NULL;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "single";
  int rounds = argc > 2 ? atoi(argv[2]) : 100;
  if (strcmp(mode, "threads") == 0) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, thread_main, (void *)(long)rounds);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  } else if (strcmp(mode, "procs") == 0) {
    for (int i = 0; i < 3; i++)
      if (fork() == 0) {
        work(rounds);
        _exit(0);
      }
    while (wait(NULL) > 0) {
    }
  } else if (strcmp(mode, "clock") == 0) {
    sink += clock_read(100000L * rounds);
  } else {
    work(rounds);
  }
  printf("%lu\n", sink);
  return 0;
}
