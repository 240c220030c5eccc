package driver

import (
	"reflect"
	"testing"

	gdriver "github.com/google/pprof/driver"
)

// TestInjectedFrames: frames of the files perf inject --jit makes, named
// as the JIT stage names the jitdump's code; other files' names alone.
func TestInjectedFrames(t *testing.T) {
	for _, tc := range []struct {
		in, want gdriver.Frame
	}{
		// V8: the script from the name, over the line table's garbage
		// file name; the table's line kept.
		{gdriver.Frame{Func: "JS:*fib /app/work.js:5:13", File: "x", Line: 7},
			gdriver.Frame{Func: "fib", File: "/app/work.js", Line: 7, StartLine: 5}},
		// No line table: the function's line.
		{gdriver.Frame{Func: "JS:*fib /app/work.js:5:13"},
			gdriver.Frame{Func: "fib", File: "/app/work.js", Line: 5, StartLine: 5}},
		{gdriver.Frame{Func: "JS:hash_loop-1-turbofan"}, gdriver.Frame{Func: "hash_loop"}},
		// PHP: no file in the name; the table's kept.
		{gdriver.Frame{Func: "TRACE-3$fib$13", File: "/srv/w.php", Line: 14},
			gdriver.Frame{Func: "fib", File: "/srv/w.php", Line: 14}},
		// A name of no JIT's form (LLVM's): as it is.
		{gdriver.Frame{Func: "jit_sort_records", File: "workload.c", Line: 193, StartLine: 180},
			gdriver.Frame{Func: "jit_sort_records", File: "workload.c", Line: 193, StartLine: 180}},
	} {
		in := []gdriver.Frame{tc.in}
		got := injectedFrames(in)
		if !reflect.DeepEqual(got, []gdriver.Frame{tc.want}) {
			t.Errorf("injectedFrames(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
		if in[0] != tc.in {
			t.Errorf("injectedFrames changed its argument: %+v", in[0])
		}
	}
	for path, want := range map[string]bool{
		"/root/.debug/jit/java-jit-20261127.XXd8sC9t/jitted-29349-2201.so": true,
		"/tmp/jitted-1-0.so":        true,
		"/usr/lib/libjitted-1-0.so": false,
		"/tmp/jitted-1.so":          false,
	} {
		if isPerfInjected(path) != want {
			t.Errorf("isPerfInjected(%s) = %v, want %v", path, !want, want)
		}
	}
}
