// A C program with inlining and no headers, for the differential test
// of the object tool against llvm-symbolizer on Mach-O files built by
// clang for macOS, which has no macOS headers here (see formats_test.go,
// which compiles it).

struct acc {
  unsigned sum;
  unsigned n;
};

static inline unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  return x;
}

static inline unsigned mix2(unsigned x) { return mix(mix(x) + 1); }

static inline void add(struct acc *a, unsigned v) {
  a->sum += mix2(v) * 3 + (v >> 1);
  a->n++;
}

static inline unsigned fold(const unsigned *v, int n) {
  struct acc a = {0, 0};
  for (int i = 0; i < n; i++) {
    add(&a, v[i]);
  }
  return a.sum ^ a.n;
}

__attribute__((noinline)) unsigned work(unsigned *v, int n) {
  for (int i = 0; i < n; i++) {
    v[i] = mix2(v[i] + (unsigned)i);
  }
  return fold(v, n);
}

__attribute__((noinline)) unsigned sorted(unsigned *v, int n) {
  for (int i = 1; i < n; i++) {
    unsigned x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
  return fold(v, n);
}

static unsigned table[64];

int main(int argc, char **argv) {
  (void)argv;
  for (int i = 0; i < 64; i++) {
    table[i] = mix((unsigned)(i * argc));
  }
  return (int)(work(table, 64) ^ sorted(table, 64));
}
