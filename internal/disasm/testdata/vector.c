// Freestanding loops that compilers vectorize (no headers, so it
// cross-compiles without a sysroot): TestLoongArchAgainstLLVM compiles it
// with -mlsx and -mlasx for LoongArch's vector instructions.

void saxpy(float *restrict y, const float *restrict x, float a, int n) {
  for (int i = 0; i < n; i++) {
    y[i] = a * x[i] + y[i];
  }
}

double dot(const double *x, const double *y, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += x[i] * y[i];
  }
  return s;
}

unsigned sum_bytes(const unsigned char *p, int n) {
  unsigned s = 0;
  for (int i = 0; i < n; i++) {
    s += p[i];
  }
  return s;
}

int max_int(const int *v, int n) {
  int m = v[0];
  for (int i = 1; i < n; i++) {
    m = v[i] > m ? v[i] : m;
  }
  return m;
}

void mix(unsigned *restrict out, const unsigned *restrict in, int n) {
  for (int i = 0; i < n; i++) {
    unsigned x = in[i];
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    out[i] = x + (unsigned)i;
  }
}

void clamp(short *restrict out, const int *restrict in, int n) {
  for (int i = 0; i < n; i++) {
    int v = in[i];
    out[i] = (short)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
  }
}

long count_equal(const long *a, const long *b, int n) {
  long c = 0;
  for (int i = 0; i < n; i++) {
    c += a[i] == b[i];
  }
  return c;
}

void scale(double *restrict y, const float *restrict x, int n) {
  for (int i = 0; i < n; i++) {
    y[i] = (double)x[i] * 0.5 - 1.0;
  }
}
