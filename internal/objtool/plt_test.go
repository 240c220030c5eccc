package objtool

import (
	"debug/elf"
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
// ifuncs are named "*ABS*+0x...@plt", in an AArch64 program, in the g++
// program built for 386 (position-independent or not) and Debian's 386
// libc, in Debian's armhf libc and libstdc++ (Thumb-2 code calling ARM
// stubs, some with a Thumb entry), and in its arm64, riscv64 and s390x
// libc.
// Every instruction objdump shows with an @plt target must read the
// same, but for one objdump quirk (see iplt).
func TestDisasmPLTNames(t *testing.T) {
	testenv.Long(t, "disassembles real C libraries and compares their PLT calls with objdump")
	t.Parallel()
	dir := t.TempDir()
	src, err := filepath.Abs("../plt/testdata/calls.cc")
	if err != nil {
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
	// 386: the same program, built by g++ -m32 (g++-multilib).
	i386 := func(name string, args ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			out := filepath.Join(dir, name)
			testenv.Run(t, dir, append(append([]string{testenv.Tool(t, "g++", "build-essential"), "-m32", "-O2"}, args...), "-o", out, src)...)
			return out
		}
	}
	installed := func(path, pkg string) func(t *testing.T) string {
		return func(t *testing.T) string { return testenv.File(t, path, pkg) }
	}
	binutils := [2]string{"objdump", "binutils"}
	armhf := [2]string{"arm-linux-gnueabihf-objdump", "binutils-arm-linux-gnueabihf"}
	libcFns := regexp.MustCompile("^(fopen|qsort|strdup|getline|vfprintf|__libc_start_main|malloc|free|realloc|calloc|strndup|getenv|setenv|popen|system|tmpfile|fdopen|open_memstream|asprintf|vasprintf|fnmatch|glob|setlocale|textdomain|gai_strerror)$")
	for _, tt := range []struct {
		name    string
		file    func(t *testing.T) string
		objdump [2]string
		fns     *regexp.Regexp
		min     int // @plt targets at least
	}{
		{"g++", func(*testing.T) string { return prog }, binutils, regexp.MustCompile("^main$"), 4},
		{"libc", installed("/lib/x86_64-linux-gnu/libc.so.6", "libc6"), binutils, libcFns, 5},
		{"arm64", arm64, [2]string{"aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu"}, regexp.MustCompile("^main$"), 2},
		{"386 PIE", i386("p32", "-pie"), binutils, regexp.MustCompile("^main$"), 4},
		{"386 no-pie", i386("p32-no-pie", "-no-pie"), binutils, regexp.MustCompile("^main$"), 4},
		{"386 libc", installed("/lib32/libc.so.6", "libc6-i386"), binutils, libcFns, 80},
		{"armhf libc", installed("/usr/arm-linux-gnueabihf/lib/libc.so.6", "libc6-armhf-cross"), armhf,
			regexp.MustCompile("^(fnmatch|gai_strerror|glob|svc_run|re_exec|fgetsgent_r|setlocale|vfwscanf|textdomain|sched_setaffinity|getaddrinfo|ngettext|fpathconf|strdup|qsort)$"), 80},
		{"arm64 libc", installed("/usr/aarch64-linux-gnu/lib/libc.so.6", "libc6-arm64-cross"), [2]string{"aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu"}, libcFns, 300},
		{"riscv64 libc", installed("/usr/riscv64-linux-gnu/lib/libc.so.6", "libc6-riscv64-cross"), [2]string{"riscv64-linux-gnu-objdump", "binutils-riscv64-linux-gnu"}, libcFns, 300},
		{"s390x libc", installed("/usr/s390x-linux-gnu/lib/libc.so.6", "libc6-s390x-cross"), [2]string{"s390x-linux-gnu-objdump", "binutils-s390x-linux-gnu"}, libcFns, 300},
		{"armhf libstdc++", installed("/usr/arm-linux-gnueabihf/lib/libstdc++.so.6", "libstdc++6-armhf-cross"), armhf,
			regexp.MustCompile(`^(_ZNKSt6locale4nameEv|_ZNSt6locale5_ImplC2EPKcj|_ZNSt8ios_base7failureB5cxx11C2EPKcRKSt10error_code)$`), 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file(t)
			objdump := testenv.Tool(t, tt.objdump[0], tt.objdump[1])
			iplt := iplt(t, file)
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
			found, skipped := 0, 0
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
					if !ok || !pltTarget.MatchString(text) {
						continue
					}
					a, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64)
					if err != nil {
						continue
					}
					if iplt(text) {
						skipped++
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
			t.Logf("%d @plt targets, %d in .iplt left out", found, skipped)
		})
	}
}

// pltTarget matches objdump's name of a branch target in a PLT stub:
// "<puts@plt>", or "<malloc@plt+0x4>" (past an ARM stub's Thumb entry).
var pltTarget = regexp.MustCompile(`@plt(\+0x[0-9a-f]+)?>`)

// iplt returns what tells whether a line of objdump's disassembly of
// file branches to a stub of its .iplt section: ARM's stubs for calls to
// ifuncs, which objdump names after the nearest symbol below them, the
// last stub of .plt ("blx 1dfc8 <_dl_audit_preinit@plt+0x20>"), and the
// object tool leaves unnamed.
func iplt(t *testing.T, file string) func(text string) bool {
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".iplt")
	return func(text string) bool {
		fields := strings.Fields(text)
		for i := 1; i < len(fields); i++ {
			if strings.HasPrefix(fields[i], "<") {
				a, err := strconv.ParseUint(fields[i-1], 16, 64)
				return err == nil && s != nil && a >= s.Addr && a-s.Addr < s.Size
			}
		}
		return false
	}
}
