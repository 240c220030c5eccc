// A program of deep recursive stacks for bench/perfdata.sh -R: three
// threads, each descending through two mutually recursive functions of
// different frames (one keeps callee-saved registers, one a local array)
// to a depth that changes from round to round, 40 to 400 calls, then
// running one of two hot leaves. Built without frame pointers and
// recorded with --call-graph dwarf, most of a sample's frames are
// recursive calls, as in a parser, an interpreter or a tree walk, and
// the deepest outrun the copy of the stack perf keeps (8 KiB).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf_mix(unsigned long n) {
  unsigned long s = 0;
  for (unsigned long i = 0; i < n; i++) s += (i * i) ^ (s >> 3);
  return s;
}

__attribute__((noinline)) unsigned long leaf_hash(unsigned long n) {
  unsigned long h = 1469598103934665603UL;
  for (unsigned long i = 0; i < n; i++) h = (h ^ (i & 0xff)) * 1099511628211UL;
  return h;
}

unsigned long walk_b(int depth, unsigned long n);

// walk_a keeps values across its call in callee-saved registers.
__attribute__((noinline)) unsigned long walk_a(int depth, unsigned long n) {
  if (depth == 0) return (n & 1) ? leaf_mix(n) : leaf_hash(n);
  unsigned long a = n * 3 + (unsigned long)depth, b = n ^ (unsigned long)depth;
  unsigned long r = depth % 3 ? walk_a(depth - 1, n) : walk_b(depth - 1, n);
  sink = r; // a store after the call: no tail call, no loop
  return r + a * b;
}

// walk_b has a local array on its stack.
__attribute__((noinline)) unsigned long walk_b(int depth, unsigned long n) {
  volatile unsigned long v[4] = {n, (unsigned long)depth, n >> 1, n << 1};
  unsigned long r = walk_a(depth - 1, n);
  sink = r;
  return r ^ v[depth & 3];
}

static void *thread_main(void *arg) {
  int rounds = (int)(long)arg;
  for (int r = 0; r < rounds; r++) sink += walk_a(40 + (r * 37) % 361, 200000 + (unsigned long)r);
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, thread_main, (void *)(long)rounds);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%lu\n", sink);
  return 0;
}
