// A C++ program whose calls go through the procedure linkage table: to
// the C library and to libstdc++ (mangled names), for the tests of
// package plt and of the object tool's disassembly (internal/objtool).
#include <cstdio>
#include <cstdlib>
#include <string>
int main(int argc, char **argv) {
  std::string s(argv[0]);
  s += "x";
  std::printf("%d %s\n", std::atoi(argv[0]), s.c_str());
  std::puts("done");
  return 0;
}
