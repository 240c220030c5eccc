// Freestanding loops that compilers vectorize for SVE (no headers, so it
// cross-compiles without a sysroot): TestObjdumpAgreement compiles it
// with clang-14 --target=aarch64-linux-gnu -march=armv8.2-a+sve -O3,
// clang-19 -mcpu=neoverse-v1 -O3 and, for SVE2, clang-19
// -mcpu=neoverse-n2 -O3 (predicated loads and stores, reductions,
// gathers, conversions, compares, selects; widening, narrowing and
// halving integer arithmetic).

typedef unsigned long size_t;

void saxpy(float *restrict y, const float *restrict x, float a, int n) { for (int i = 0; i < n; i++) y[i] += a * x[i]; }
void daxpy(double *restrict y, const double *restrict x, double a, int n) { for (int i = 0; i < n; i++) y[i] += a * x[i]; }
long sum64(const long *x, int n) { long s = 0; for (int i = 0; i < n; i++) s += x[i]; return s; }
int sum32(const int *x, int n) { int s = 0; for (int i = 0; i < n; i++) s += x[i]; return s; }
float fsum(const float *x, int n) { float s = 0; for (int i = 0; i < n; i++) s += x[i]; return s; }
float fsumfast(const float *x, int n) { float s = 0; _Pragma("clang loop vectorize(enable)") for (int i = 0; i < n; i++) s += x[i]; return s; }
int maxi(const int *x, int n) { int m = x[0]; for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m; return m; }
void bytecopy(unsigned char *restrict d, const unsigned char *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = s[i] ^ 0x5a; }
void gather(float *restrict d, const float *restrict s, const int *idx, int n) { for (int i = 0; i < n; i++) d[i] = s[idx[i]]; }
void scatter(float *restrict d, const float *restrict s, const int *idx, int n) { for (int i = 0; i < n; i++) d[idx[i]] = s[i]; }
void cond(int *restrict d, const int *restrict s, int n) { for (int i = 0; i < n; i++) if (s[i] > 0) d[i] = s[i] * 3; }
void widen(long *restrict d, const int *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = (long)s[i] * 7; }
void narrow(short *restrict d, const int *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = (short)(s[i] >> 3); }
void cvt(float *restrict d, const int *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = (float)s[i]; }
void cvt2(int *restrict d, const double *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = (int)s[i]; }
void fdiv(float *restrict d, const float *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = 1.0f / (s[i] + 2.0f); }
void fsqrtl(double *restrict d, const double *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = __builtin_sqrt(s[i]); }
void shifts(unsigned *restrict d, const unsigned *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = (s[i] << 3) | (s[i] >> 29); }
void minmax(float *restrict d, const float *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = __builtin_fminf(__builtin_fmaxf(s[i], 0.f), 1.f); }
void muladd(int *restrict d, const int *restrict a, const int *restrict b, int n) { for (int i = 0; i < n; i++) d[i] += a[i] * b[i]; }
void abs_(int *restrict d, const int *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = s[i] < 0 ? -s[i] : s[i]; }
size_t strlen_(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
void stride(float *restrict d, const float *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = s[2*i] + s[2*i+1]; }
void memset_(char *d, int n) { for (int i = 0; i < n; i++) d[i] = 0; }
double dot(const double *a, const double *b, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i]*b[i]; return s; }
unsigned char umaxb(const unsigned char *x, int n) { unsigned char m = 0; for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m; return m; }
void halfs(unsigned short *restrict d, const unsigned short *restrict s, int n) { for (int i = 0; i < n; i++) d[i] = s[i] + 1; }
void cmpsel(float *restrict d, const float *restrict a, const float *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] < b[i] ? a[i] : b[i] * 2; }
void wmul(int *restrict d, const short *restrict a, const short *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] * b[i]; }
void sat(unsigned char *restrict d, const short *restrict a, int n) { for (int i = 0; i < n; i++) { int v = a[i]; d[i] = v < 0 ? 0 : v > 255 ? 255 : v; } }
void avg(unsigned char *restrict d, const unsigned char *restrict a, const unsigned char *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = (a[i] + b[i] + 1) >> 1; }
int dot8(const signed char *a, const signed char *b, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }
void absdiff(unsigned char *restrict d, const unsigned char *restrict a, const unsigned char *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]; }
long hist(const int *a, int n, int k) { long c = 0; for (int i = 0; i < n; i++) c += a[i] == k; return c; }
void mulhi(unsigned *restrict d, const unsigned *restrict a, const unsigned *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = ((unsigned long)a[i] * b[i]) >> 32; }
void shrn(unsigned short *restrict d, const unsigned *restrict a, int n) { for (int i = 0; i < n; i++) d[i] = a[i] >> 16; }
void rotate(unsigned *restrict d, const unsigned *restrict a, const unsigned *restrict b, int n) { for (int i = 0; i < n; i++) d[i] = ((a[i] ^ b[i]) >> 7) | ((a[i] ^ b[i]) << 25); }
