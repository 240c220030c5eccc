/* Source of the differential tests of package jitsym: C code with static
 * helpers the compiler inlines, a loop and a switch. */

static inline int sq(int x) { return x * x; }

static inline __attribute__((always_inline)) int poly(int x) {
  return sq(x) + 3 * x + 1;
}

static int table[16];

int fill(int n) {
  int s = 0;
  for (int i = 0; i < n && i < 16; i++) {
    table[i] = poly(i);
    s += table[i];
  }
  return s;
}

int pick(int k) {
  switch (k & 3) {
  case 0:
    return poly(k);
  case 1:
    return sq(k) - 1;
  case 2:
    return fill(k);
  default:
    return k;
  }
}

int api(int x) { return pick(x) + fill(x & 7) + poly(x + 1); }
