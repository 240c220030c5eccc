// Freestanding C (no headers, so it cross-compiles without a sysroot)
// that the agreement test compiles with clang -O2 for AArch64 and i386:
// loops, a switch, calls through pointers, floating point, 64-bit
// constants, atomics.
typedef unsigned long long u64;
typedef unsigned int u32;

extern void sink(u64);
static u64 counter;

u64 crc(const unsigned char *p, u64 n, u64 c) {
  for (u64 i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
  }
  return c;
}

int classify(int x) {
  switch (x & 7) {
  case 0: return 11;
  case 1: return x * 3;
  case 2: return x >> 2;
  case 3: return -x;
  case 4: return x ^ 0x55;
  case 5: return x / 7;
  default: return x % 13;
  }
}

double horner(const double *c, int n, double x) {
  double r = 0;
  for (int i = n - 1; i >= 0; i--) r = r * x + c[i];
  return r;
}

float dot(const float *a, const float *b, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

u64 mix(u64 x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

void apply(u64 (*f)(u64), u64 *v, int n) {
  for (int i = 0; i < n; i++) {
    v[i] = f(v[i]);
    sink(v[i]);
  }
  __atomic_fetch_add(&counter, n, __ATOMIC_SEQ_CST);
}

u32 bits(u32 x) { return __builtin_popcount(x) + __builtin_clz(x | 1) + __builtin_ctz(x | 0x100); }
