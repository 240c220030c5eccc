/* Source of the differential tests of package jitsym: GCC -O2 moves the
 * unlikely part of maybe into .text.unlikely.maybe (symbol maybe.cold), so
 * that its DW_TAG_subprogram has DW_AT_ranges over two sections. */

extern void sink(int);

__attribute__((cold, noinline)) static void report(int x) {
  sink(x);
  sink(x * 2);
}

static inline int twice(int x) { return 2 * x; }

int maybe(int x) {
  if (__builtin_expect(x > 1000, 0)) {
    report(x);
    for (int i = 0; i < x; i++)
      sink(twice(i) * x);
    return -1;
  }
  return x + 1;
}
