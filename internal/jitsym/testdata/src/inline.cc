// Source of the differential tests of package jitsym: chains of inlined
// calls, namespaces, class and function templates, constructors, a lambda,
// an anonymous namespace and C linkage. No #include, so that it compiles
// for any target without a sysroot.

namespace outer {
namespace inner {

template <typename T> struct Vec2 {
  T x, y;
  Vec2(T a, T b) : x(a), y(b) {}
  __attribute__((always_inline)) T dot(const Vec2 &o) const {
    return x * o.x + y * o.y;
  }
};

static inline __attribute__((always_inline)) int clampi(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__attribute__((always_inline)) inline int scale(int v) {
  return clampi(v * 3, -100, 100);
}

class Counter {
 public:
  explicit Counter(int start) : n_(scale(start)) {}
  int next() { return n_ += scale(n_); }

 private:
  int n_;
};

int work(int n) {
  Counter c(n);
  int s = 0;
  for (int i = 0; i < n; i++)
    s += c.next();
  Vec2<int> a(n, s), b(s, n);
  return s + a.dot(b);
}

template <typename T> __attribute__((noinline)) T twice(T v) {
  return scale(static_cast<int>(v)) * 2;
}
template int twice<int>(int);
template long twice<long>(long);

} // namespace inner

namespace {
__attribute__((noinline)) int hidden(int x) {
  auto f = [x](int y) { return inner::scale(x + y); };
  return f(x) + f(1);
}
} // namespace

int entry(int x) {
  return inner::work(x) + hidden(x) + inner::twice(x) +
         static_cast<int>(inner::twice<long>(x));
}

extern "C" int c_entry(int x) { return entry(x) * 2; }

} // namespace outer

extern "C" int plain_c(int x) { return x + 1; }
