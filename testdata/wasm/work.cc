// work.cc: the WebAssembly module TestPerfDataWasm runs under Node.js
// (built there with clang++-19 --target=wasm32 and wasm-ld-19; no libc).
// wasm-ld writes C++ names into the module's name section demangled,
// as V8 then names the code: "wasmwork::fib(unsigned int)".

namespace wasmwork {

static unsigned mix(unsigned x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

__attribute__((noinline)) unsigned fib(unsigned n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

}  // namespace wasmwork

extern "C" {

__attribute__((noinline)) unsigned hash_loop(unsigned n) {
  unsigned h = 1;
  for (unsigned i = 0; i < n; i++) h = wasmwork::mix(h + i);
  return h;
}

// run is what run.js calls: three quarters of its time in hash_loop,
// about a quarter in fib.
__attribute__((export_name("run"))) unsigned run(unsigned n) {
  return hash_loop(n * 15000) + wasmwork::fib(n);
}

}
