// A second translation unit for the split DWARF test (split_test.go),
// linked with inline.cc: a binary of two skeleton units, each with its
// own .dwo, and a DWARF package of both.
#include <algorithm>
#include <string>
#include <vector>

namespace other {
static inline int sq(int x) { return x * x; }
template <typename T>
inline T sum(const std::vector<T>& v) {
  T s{};
  for (auto& x : v) s += sq(x);
  return s;
}
}  // namespace other

int helper(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; i++) v.push_back(i * 7 % 13);
  std::sort(v.begin(), v.end());
  return other::sum(v) + static_cast<int>(std::to_string(n).size());
}
