/*
 * workload.c - the code jit_host JIT-compiles with MCJIT.
 *
 * The file is compiled twice into two bitcode modules, so the JIT loads two
 * objects and writes two .elf/.meta pairs:
 *
 *   -DWORKLOAD_PART=1  compute kernels and the CPU-phase driver jit_cpu_round
 *   -DWORKLOAD_PART=2  data-structure kernels, the library callback and the
 *                      heap-phase driver jit_heap_round
 *
 * jit_host emits part 1 as one .text section and part 2 with a section per
 * function, and loads the .text.jit_tree* sections above libleaf.so and all
 * other code below it (see code_layout.h).
 *
 * Calls cross between the two modules and into libleaf.so (leaf.h), and
 * libleaf calls back into part 2, so the profiles hold stacks such as
 *
 *   jit_poly <- leaf_map_reduce <- jit_callback_pass <- jit_cpu_round
 *
 * The static always_inline helpers leave DW_TAG_inlined_subroutine entries
 * in the DWARF. Kernel entry points are noinline so every one of them is a
 * distinct JIT function with its own frame. All work is a pure function of
 * the round number: no clocks, no randomness.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leaf.h"

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

struct record {
  uint32_t key;
  uint32_t tie;
  double weight;
};

struct tree {
  struct tree *left, *right;
  int64_t value;
};

/* Defined in part 1, used by part 2 and the host. */
uint64_t jit_cpu_round(unsigned round);
NOINLINE uint64_t jit_matmul(unsigned n, unsigned round);
NOINLINE uint64_t jit_hash_text(unsigned len, unsigned round);
NOINLINE uint64_t jit_sieve(unsigned limit);

/* Defined in part 2, used by part 1 and the host. */
uint64_t jit_heap_round(unsigned round);
NOINLINE uint64_t jit_sort_records(unsigned n, unsigned round);
NOINLINE uint64_t jit_tree_pass(unsigned depth, unsigned round);
NOINLINE uint64_t jit_callback_pass(unsigned n, unsigned round);
NOINLINE int64_t jit_poly(int64_t x);
NOINLINE uint8_t *jit_make_buffer(size_t size, unsigned round);

/* A tiny deterministic generator shared by both parts. */
INLINE uint64_t lcg_next(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return *state >> 17;
}

#if WORKLOAD_PART == 1

/* Sink for results so the optimizer keeps every kernel. */
volatile uint64_t jit_sink;

INLINE double dot_row_col(const double *a, const double *b, unsigned n,
                          unsigned row, unsigned col) {
  double s = 0;
  for (unsigned k = 0; k < n; k++)
    s += a[row * n + k] * b[k * n + col];
  return s;
}

NOINLINE uint64_t jit_matmul(unsigned n, unsigned round) {
  double *a = malloc(sizeof(double) * n * n * 3);
  if (a == NULL)
    abort();
  double *b = a + n * n, *c = b + n * n;
  uint64_t st = round + 1;
  for (unsigned i = 0; i < n * n; i++) {
    a[i] = (double)(lcg_next(&st) % 1000) / 7.0;
    b[i] = (double)(lcg_next(&st) % 1000) / 11.0;
  }
  for (unsigned i = 0; i < n; i++)
    for (unsigned j = 0; j < n; j++)
      c[i * n + j] = dot_row_col(a, b, n, i, j);
  uint64_t h = 0;
  for (unsigned i = 0; i < n * n; i++)
    h = h * 1099511628211ull + (uint64_t)c[i];
  free(a);
  return h;
}

INLINE uint64_t fnv1a_step(uint64_t h, uint8_t byte) {
  return (h ^ byte) * 1099511628211ull;
}

INLINE uint64_t fnv1a_buf(const uint8_t *p, size_t len) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < len; i++)
    h = fnv1a_step(h, p[i]);
  return h;
}

/* Hashes a generated text with an inlined FNV-1a, several times, and once
 * with libleaf's CRC-32 (a library frame under a JIT caller). */
NOINLINE uint64_t jit_hash_text(unsigned len, unsigned round) {
  uint8_t *text = malloc(len);
  if (text == NULL)
    abort();
  uint64_t st = round * 7919u + 3;
  for (unsigned i = 0; i < len; i++)
    text[i] = (uint8_t)('a' + lcg_next(&st) % 26);
  uint64_t h = 0;
  for (unsigned pass = 0; pass < 8; pass++) {
    text[pass % len] ^= (uint8_t)h;
    h += fnv1a_buf(text, len);
  }
  h ^= leaf_crc32(text, len);
  free(text);
  return h;
}

INLINE void sieve_cross_out(uint8_t *composite, unsigned p, unsigned limit) {
  for (unsigned m = p * p; m < limit; m += p)
    composite[m] = 1;
}

NOINLINE uint64_t jit_sieve(unsigned limit) {
  uint8_t *composite = calloc(limit, 1);
  if (composite == NULL)
    abort();
  for (unsigned p = 2; p * p < limit; p++)
    if (!composite[p])
      sieve_cross_out(composite, p, limit);
  uint64_t count = 0, last = 0;
  for (unsigned i = 2; i < limit; i++)
    if (!composite[i]) {
      count++;
      last = i;
    }
  free(composite);
  return count * 1000003u + last;
}

/* The CPU-phase driver: one round of every kernel. The host calls it in a
 * loop until the requested CPU time is used up. */
uint64_t jit_cpu_round(unsigned round) {
  uint64_t h = 0;
  h += jit_matmul(72, round);
  h += jit_hash_text(24 * 1024, round);
  h += jit_sieve(150000 + round % 7);
  h += jit_sort_records(1400, round);
  h += jit_tree_pass(11, round);
  h += jit_callback_pass(3000, round);
  h += leaf_mix64(h, 20000);
  jit_sink = h;
  return h;
}

#elif WORKLOAD_PART == 2

/* Allocations the heap phase keeps alive, so in-use values are non-zero. */
static struct tree *retained_trees[64];
static struct leaf_block *retained_chains[64];
static uint8_t *retained_buffers[64];

INLINE int record_less(const struct record *x, const struct record *y) {
  if (x->key != y->key)
    return x->key < y->key;
  return x->tie < y->tie;
}

/* Insertion sort: quadratic on purpose. */
NOINLINE uint64_t jit_sort_records(unsigned n, unsigned round) {
  struct record *r = malloc(sizeof *r * n);
  if (r == NULL)
    abort();
  uint64_t st = round * 31u + 17;
  for (unsigned i = 0; i < n; i++) {
    r[i].key = (uint32_t)(lcg_next(&st) % 5000);
    r[i].tie = i;
    r[i].weight = (double)i / 3.0;
  }
  for (unsigned i = 1; i < n; i++) {
    struct record v = r[i];
    unsigned j = i;
    while (j > 0 && record_less(&v, &r[j - 1])) {
      r[j] = r[j - 1];
      j--;
    }
    r[j] = v;
  }
  uint64_t h = 0;
  for (unsigned i = 0; i < n; i++)
    h = h * 31 + r[i].key + (uint64_t)r[i].weight;
  free(r);
  return h;
}

INLINE struct tree *tree_node(int64_t value) {
  struct tree *t = malloc(sizeof *t);
  if (t == NULL)
    abort();
  t->left = t->right = NULL;
  t->value = value;
  return t;
}

NOINLINE struct tree *jit_tree_build(unsigned depth, uint64_t *st) {
  struct tree *t = tree_node((int64_t)(lcg_next(st) % 100000));
  if (depth > 0) {
    t->left = jit_tree_build(depth - 1, st);
    t->right = jit_tree_build(depth - 1, st);
  }
  return t;
}

NOINLINE int64_t jit_tree_sum(const struct tree *t, unsigned level) {
  if (t == NULL)
    return 0;
  int64_t here = t->value * (int64_t)(level + 1);
  for (unsigned k = 0; k < 64; k++)
    here = (here * 2862933555777941757ll + 3037000493ll) >> 1;
  return here + jit_tree_sum(t->left, level + 1) +
         jit_tree_sum(t->right, level + 1);
}

NOINLINE void jit_tree_free(struct tree *t) {
  if (t == NULL)
    return;
  jit_tree_free(t->left);
  jit_tree_free(t->right);
  free(t);
}

NOINLINE uint64_t jit_tree_pass(unsigned depth, unsigned round) {
  uint64_t st = round + 99;
  struct tree *t = jit_tree_build(depth, &st);
  uint64_t h = (uint64_t)jit_tree_sum(t, 0);
  jit_tree_free(t);
  return h;
}

INLINE int64_t horner(const int64_t *coef, unsigned n, int64_t x) {
  int64_t acc = 0;
  for (unsigned i = 0; i < n; i++)
    acc = acc * x + coef[i];
  return acc;
}

/* Called back by leaf_map_reduce for every element. */
NOINLINE int64_t jit_poly(int64_t x) {
  static const int64_t coef[] = {3, -7, 11, -13, 17, -19, 23, -29,
                                 31, -37, 41, -43, 47, -53, 59, -61};
  int64_t y = 0;
  for (unsigned k = 0; k < 12; k++)
    y ^= horner(coef, sizeof coef / sizeof coef[0], x + k);
  return y;
}

NOINLINE uint64_t jit_callback_pass(unsigned n, unsigned round) {
  int64_t *v = malloc(sizeof *v * n);
  if (v == NULL)
    abort();
  uint64_t st = round * 13u + 5;
  for (unsigned i = 0; i < n; i++)
    v[i] = (int64_t)(lcg_next(&st) % 4096) - 2048;
  int64_t r = leaf_map_reduce(v, n, jit_poly);
  free(v);
  return (uint64_t)r;
}

/* A buffer filled with a pattern, allocated by JIT code and kept by the
 * caller. */
NOINLINE uint8_t *jit_make_buffer(size_t size, unsigned round) {
  uint8_t *buf = malloc(size);
  if (buf == NULL)
    abort();
  uint64_t st = round;
  for (size_t i = 0; i < size; i += 64)
    buf[i] = (uint8_t)lcg_next(&st);
  return buf;
}

/* The heap-phase driver: allocates from JIT code (trees, buffers, scratch
 * arrays) and from libleaf on behalf of JIT code (block chains). Slot
 * round%64 keeps its allocations until the same slot comes round again, so a
 * fixed number of rounds leaves a fixed in-use set of roughly 64 * 250 KiB,
 * large enough for tcmalloc's sampler to pick many JIT stacks. */
uint64_t jit_heap_round(unsigned round) {
  unsigned slot = round % 64;
  uint64_t st = round + 1;
  jit_tree_free(retained_trees[slot]);
  retained_trees[slot] = jit_tree_build(4 + round % 3, &st);
  leaf_free_chain(retained_chains[slot]);
  retained_chains[slot] =
      leaf_alloc_chain(3 + round % 3, 8192 * (1 + round % 4), round);
  free(retained_buffers[slot]);
  retained_buffers[slot] = jit_make_buffer(65536 * (1 + round % 3), round);
  uint64_t h = (uint64_t)jit_tree_sum(retained_trees[slot], 0);
  h ^= leaf_chain_checksum(retained_chains[slot]);
  h += retained_buffers[slot][(round % 1024) * 64];
  h += jit_sort_records(64 + round % 32, round);
  h += jit_matmul(8 + round % 4, round);
  return h;
}

#else
#error "compile with -DWORKLOAD_PART=1 or -DWORKLOAD_PART=2"
#endif
