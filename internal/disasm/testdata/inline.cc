// A small C++ program with templates, inlining, virtual calls, a switch
// and floating point, compiled with clang -O2 by the agreement test.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};
struct Rect : Shape {
  double w, h;
  Rect(double w, double h) : w(w), h(h) {}
  double area() const override { return w * h; }
};
struct Circle : Shape {
  double r;
  explicit Circle(double r) : r(r) {}
  double area() const override { return 3.14159265358979 * r * r; }
};

template <typename T> T clampsum(const std::vector<T>& v, T lo, T hi) {
  T s = 0;
  for (T x : v) s += std::min(std::max(x, lo), hi);
  return s;
}

static int classify(int x) {
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

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<Shape>> shapes;
  for (int i = 0; i < argc * 100; i++) {
    if (i % 2) shapes.push_back(std::make_unique<Rect>(i, i + 1));
    else shapes.push_back(std::make_unique<Circle>(i * 0.5));
  }
  std::sort(shapes.begin(), shapes.end(), [](auto& a, auto& b) { return a->area() < b->area(); });
  std::map<std::string, long> counts;
  for (int i = 0; i < argc * 1000; i++) counts[std::to_string(classify(i))]++;
  std::vector<long> vals;
  for (auto& [k, v] : counts) vals.push_back(v + (long)k.size());
  std::printf("%zu %ld %f\n", counts.size(), clampsum<long>(vals, 3, 90), shapes.back()->area());
  return 0;
}
