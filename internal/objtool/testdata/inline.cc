// A C++ program with deep inlining, templates, lambdas, namespaces and
// the standard library, for the differential test of the object tool
// against llvm-symbolizer (see diff_test.go, which compiles it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace work {

template <typename T>
struct Acc {
  T sum{};
  inline void add(T v) { sum += v * 3 + (v >> 1); }
};

static inline unsigned mix(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  return x;
}

static inline unsigned mix2(unsigned x) { return mix(mix(x) + 1); }

template <typename F>
inline unsigned apply(F f, unsigned n) {
  unsigned r = 0;
  for (unsigned i = 0; i < n; i++) r += f(i);
  return r;
}

class Table {
 public:
  void put(const std::string& k, int v) { m_[k] += v; }
  int get(const std::string& k) const {
    auto it = m_.find(k);
    return it == m_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, int> m_;
};

}  // namespace work

int main(int argc, char** argv) {
  unsigned n = argc > 1 ? std::atoi(argv[1]) : 1000;
  std::vector<unsigned> v;
  for (unsigned i = 0; i < n; i++) v.push_back(work::mix2(i));
  std::sort(v.begin(), v.end(), [](unsigned a, unsigned b) { return work::mix(a) < work::mix(b); });
  work::Acc<unsigned long> acc;
  for (unsigned x : v) acc.add(x);
  unsigned r = work::apply([&](unsigned i) { return work::mix2(i) ^ v[i % v.size()]; }, n);
  work::Table t;
  for (unsigned i = 0; i < 100 + n / 8; i++) t.put(std::to_string(i % 5000) + "-key", i);
  std::printf("%lu %u %d\n", acc.sum, r, t.get("3"));
  return 0;
}
