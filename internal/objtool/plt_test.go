package objtool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestDisasmPLTNames: calls through the procedure linkage table read as
// objdump --demangle (upstream pprof's disassembler) prints them, with
// its synthetic "name@plt" symbols: in a g++ program calling libc and
// libstdc++ (demangled C++ names), in Debian's libc, whose stubs for
// ifuncs are named "*ABS*+0x...@plt", and in an AArch64 program. Every
// instruction objdump shows with an @plt target must read the same.
func TestDisasmPLTNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "p.cc")
	if err := os.WriteFile(src, []byte(`#include <cstdio>
#include <cstdlib>
#include <string>
int main(int argc, char **argv) {
  std::string s(argv[0]);
  s += "x";
  std::printf("%d %s\n", std::atoi(argv[0]), s.c_str());
  std::puts("done");
  return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "p")
	testenv.Run(t, dir, testenv.Tool(t, "g++", "build-essential"), "-O2", "-o", prog, src)
	// AArch64: lld links a program against a shared library of its own
	// (no AArch64 C library here).
	arm64 := func(t *testing.T) string {
		clang, lld := testenv.Tool(t, "clang-19", "clang-19"), testenv.Tool(t, "ld.lld-19", "lld-19")
		for name, text := range map[string]string{
			"lib.c":  "int foo(int x) { return x * 3; }\nint bar(int x) { return x + 1; }\n",
			"main.c": "int foo(int);\nint bar(int);\nint main(int c, char **v) { return foo(c) + bar(c); }\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		testenv.Run(t, dir, clang, "--target=aarch64-linux-gnu", "-O2", "-fPIC", "-c", "-o", "lib.o", "lib.c")
		testenv.Run(t, dir, lld, "-shared", "-o", "libx.so", "lib.o")
		testenv.Run(t, dir, clang, "--target=aarch64-linux-gnu", "-O2", "-c", "-o", "main.o", "main.c")
		testenv.Run(t, dir, lld, "-e", "main", "-o", "arm64-main", "main.o", "libx.so")
		return filepath.Join(dir, "arm64-main")
	}
	for _, tt := range []struct {
		name    string
		file    func(t *testing.T) string
		objdump [2]string
		fns     *regexp.Regexp
		min     int // @plt targets at least
	}{
		{"g++", func(*testing.T) string { return prog }, [2]string{"objdump", "binutils"}, regexp.MustCompile("^main$"), 4},
		{"libc", func(*testing.T) string { return "/lib/x86_64-linux-gnu/libc.so.6" }, [2]string{"objdump", "binutils"},
			regexp.MustCompile("^(fopen|qsort|strdup|getline|vfprintf|__libc_start_main|malloc|free|realloc|calloc|strndup|getenv|setenv|popen|system|tmpfile|fdopen|open_memstream|asprintf|vasprintf)$"), 5},
		{"arm64", arm64, [2]string{"aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu"}, regexp.MustCompile("^main$"), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file(t)
			objdump := testenv.Tool(t, tt.objdump[0], tt.objdump[1])
			tool := New(Options{})
			defer tool.Close()
			of, err := tool.Open(file, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			syms, err := of.Symbols(tt.fns, 0)
			if err != nil || len(syms) == 0 {
				t.Fatalf("Symbols = %v, %v", syms, err)
			}
			found := 0
			for _, s := range syms {
				got := map[uint64]string{}
				insts, err := tool.Disasm(file, s.Start, s.End, false)
				if err != nil {
					t.Fatal(err)
				}
				for _, in := range insts {
					got[in.Addr] = strings.Join(strings.Fields(in.Text), " ")
				}
				out, err := exec.Command(objdump, "-d", "--demangle", "--no-show-raw-insn", fmt.Sprintf("--start-address=%#x", s.Start), fmt.Sprintf("--stop-address=%#x", s.End), file).Output()
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(string(out), "\n") {
					addr, text, ok := strings.Cut(line, ":\t")
					if !ok || !strings.Contains(text, "@plt>") {
						continue
					}
					a, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64)
					if err != nil {
						continue
					}
					found++
					if want := strings.Join(strings.Fields(text), " "); got[a] != want {
						t.Errorf("%s %#x: %q, objdump: %q", s.Name[0], a, got[a], want)
					}
				}
			}
			if found < tt.min {
				t.Errorf("objdump shows %d @plt targets, want at least %d", found, tt.min)
			}
			t.Logf("%d @plt targets", found)
		})
	}
}
