package profile

import (
	"reflect"
	"testing"

	"github.com/google/pprof/profile"
)

// TestSourcesGroup checks how each kind picks its files out of a
// directory listing.
func TestSourcesGroup(t *testing.T) {
	names := []string{"b.meta", "a.elf", "b.elf", "c.meta", "perf-12.map", "perf.map", "jit-9.dump", "jit-9.dump.tmp", "notes.txt", "a.elf.bak"}
	want := map[Kind][][]string{
		LLVMDump: {{"b.elf", "b.meta"}, {"a.elf"}, {"c.meta"}},
		PerfMap:  {{"perf-12.map"}},
		JITDump:  {{"jit-9.dump"}},
	}
	for _, s := range Sources() {
		if sourceOfKind(s.Kind()) != s {
			t.Errorf("sourceOfKind(%v) is not %T", s.Kind(), s)
		}
		if got := s.Group(names); !reflect.DeepEqual(got, want[s.Kind()]) {
			t.Errorf("%v: Group = %q, want %q", s.Kind(), got, want[s.Kind()])
		}
	}
}

// TestIsJITMapping: the stage's [0, ^0) mappings of any kind, nothing else.
func TestIsJITMapping(t *testing.T) {
	for _, tc := range []struct {
		m    *profile.Mapping
		want bool
	}{
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/x.elf"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/perf-1.map"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/jit-1.dump"}, true},
		{&profile.Mapping{Limit: ^uint64(0), File: "/d/x.meta"}, false},
		{&profile.Mapping{Start: 0x400000, Limit: 0x500000, File: "/d/x.elf"}, false},
		{&profile.Mapping{Limit: ^uint64(0), File: "/usr/lib/libc.so.6"}, false},
		{&profile.Mapping{Limit: ^uint64(0)}, false},
		{nil, false},
	} {
		if got := IsJITMapping(tc.m); got != tc.want {
			t.Errorf("IsJITMapping(%+v) = %v, want %v", tc.m, got, tc.want)
		}
	}
}

// TestSplitV8Name: the names V8 gives JavaScript and WebAssembly code in
// perf maps and jitdumps (from Node.js 20's, but the old prefixes), and
// names that are not V8's.
func TestSplitV8Name(t *testing.T) {
	for _, tc := range []struct {
		name, fn, file string
		line           int
		ok             bool
	}{
		{"JS:*work /app.js:3:14", "work", "/app.js", 3, true},
		{"JS:~fib /tmp/work.js:1:13", "fib", "/tmp/work.js", 1, true},
		{"JS:^ /tmp/wasm/run.js:1:1", "(anonymous)", "/tmp/wasm/run.js", 1, true},
		{"JS:~ node:internal/main/run_main_module:1:1", "(anonymous)", "node:internal/main/run_main_module", 1, true},
		{"LazyCompile:*work /app.js:3:14", "work", "/app.js", 3, true},
		// WebAssembly: the name section's name, index, tier.
		{"JS:hash_loop-0-liftoff", "hash_loop", "", 0, true},
		{"JS:hash_loop-0-turbofan", "hash_loop", "", 0, true},
		{"JS:wasm-function[2]-2-liftoff", "wasm-function[2]", "", 0, true},
		{"JS:int ns::twice<int>(int)-0-turbofan", "int ns::twice<int>(int)", "", 0, true},
		{"JS:wasm-to-js-<anonymous>-none", "wasm-to-js", "", 0, true},
		{"Function:f-12-interpreter", "f", "", 0, true},
		// Not V8's JS or wasm code.
		{"Builtin:GenericJSToWasmWrapper", "", "", 0, false},
		{"JS:hash_loop-x-liftoff", "", "", 0, false},
		{"JS:hash_loop-0-sparkplug", "", "", 0, false},
		{"int App.hot(int[])", "", "", 0, false},
		{"JS:*work /app.js:x:14", "", "", 0, false},
	} {
		fn, file, line, ok := splitV8Name(tc.name)
		if fn != tc.fn || file != tc.file || line != tc.line || ok != tc.ok {
			t.Errorf("splitV8Name(%q) = %q, %q, %d, %v; want %q, %q, %d, %v", tc.name, fn, file, line, ok, tc.fn, tc.file, tc.line, tc.ok)
		}
	}
}

// TestNameFrame: the frames of the code names of perf maps and jitdumps:
// V8's split, PHP's named by their function (the names from PHP 8.2's
// function and tracing JIT), others whole; what is not printable
// escaped.
func TestNameFrame(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Frame
	}{
		{"JS:*work /app.js:3:14", Frame{Func: "work", File: "/app.js", Line: 3, StartLine: 3}},
		{"JS:hash_loop-1-turbofan", Frame{Func: "hash_loop"}},
		{"JIT$fib", Frame{Func: "fib"}},
		{"JIT$Calc::twice", Frame{Func: "Calc::twice"}},
		{"JIT$/tmp/php/fn.php", Frame{Func: "/tmp/php/fn.php"}},
		{"TRACE-3$fib$3", Frame{Func: "fib"}},
		{"TRACE-12$Calc::twice$2", Frame{Func: "Calc::twice"}},
		{"TRACE-7$/tmp/php/fn.php$5", Frame{Func: "/tmp/php/fn.php"}},
		{"JIT$$interrupt_handler", Frame{Func: "JIT$$interrupt_handler"}},
		{"jit$$trace_exit_0", Frame{Func: "jit$$trace_exit_0"}},
		{"TRACE-3$fib", Frame{Func: "TRACE-3$fib"}},
		{"int App.hot(int[])", Frame{Func: "int App.hot(int[])"}},
		// Characters that are not printable are escaped, V8's split after.
		{"evil\x1b]0;pwned\x07", Frame{Func: `evil\x1b]0;pwned\a`}},
		{"JS:*f\x1b[2J /a\x9b.js:3:1", Frame{Func: `f\x1b[2J`, File: `/a\x9b.js`, Line: 3, StartLine: 3}},
	} {
		if got := NameFrame(tc.name); got != tc.want {
			t.Errorf("NameFrame(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
