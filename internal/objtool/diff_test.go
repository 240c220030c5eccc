package objtool

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/testenv"
)

// oracleLLVM is the llvm-symbolizer version the object tool is compared
// with. LLVM 14 differs from later versions (and from this tool) in one
// way only: for DWARF 5 line tables whose directory 0 is relative, it
// prepends DW_AT_comp_dir to it once more ("./nptl/./nptl/x.c" for
// glibc's "./nptl/x.c"); LLVM 15 fixed that.
const oracleLLVM = 19

// TestSameFramesAsLLVMSymbolizer compares SourceLine with llvm-symbolizer
// --inlining on real binaries: Debian's libc with its detached debug file
// (found by build ID), libstdc++'s -g build from libstdc++6-12-dbg, a C++
// program with deep inlining built by GCC (PIE, non-PIE, compressed debug
// sections, stripped, LTO, type units, 64-bit DWARF) and by clang (also
// with Zstandard compression, thin LTO, line tables only), a Go binary, and a Rust program built by rustc with DWARF 4 and 5 and
// both name manglings. Every address of a
// sample spread over each binary's code must get the same frames:
// function, file, line, column and start line, inline frames included.
func TestSameFramesAsLLVMSymbolizer(t *testing.T) {
	testenv.Long(t, "compares the frames of thousands of addresses of real binaries with llvm-symbolizer")
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/inline.cc")
	if err != nil {
		t.Fatal(err)
	}
	split2, err := filepath.Abs("testdata/split2.cc") // a second unit
	if err != nil {
		t.Fatal(err)
	}
	gxx := testenv.Tool(t, "g++", "g++")
	clangxx := testenv.Tool(t, fmt.Sprintf("clang++-%d", oracleLLVM), fmt.Sprintf("clang-%d", oracleLLVM))
	build := func(name string, cc string, args ...string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command(cc, append([]string{"-O2", "-g", "-o", out, src}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		return out
	}
	stripped := func(bin string) string {
		out := bin + ".stripped"
		cmd := exec.Command(testenv.Tool(t, "strip", "binutils"), "-o", out, bin)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		return out
	}
	gccPIE := build("gcc-pie", gxx)
	bins := []struct {
		name, path string
		oracle     int // the llvm-symbolizer version compared with, if not oracleLLVM
	}{
		{"libc (detached debug file by build ID)", testenv.File(t, "/lib/x86_64-linux-gnu/libc.so.6", "libc6"), 0},
		{"libstdc++ -g build", testenv.File(t, "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30", "libstdc++6-12-dbg"), 0},
		{"g++ -O2 PIE", gccPIE, 0},
		{"g++ -O2 non-PIE", build("gcc-nopie", gxx, "-no-pie"), 0},
		{"g++ -O2 -gz (compressed debug sections)", build("gcc-gz", gxx, "-gz"), 0},
		{"g++ -O2 DWARF 4", build("gcc-dwarf4", gxx, "-gdwarf-4"), 0},
		{"clang++ -O2", build("clang", clangxx), 0},
		{"clang++ -O2 -gz=zstd (Zstandard-compressed debug sections)", build("clang-zstd", clangxx, "-gz=zstd"), 0},
		// llvm-symbolizer 19 does not read GNU's .zdebug_ sections (it
		// gives such a binary symbol names alone); 14 does.
		{"g++ -O2 -gz=zlib-gnu (.zdebug_ sections)", build("gcc-zdebug", gxx, "-gz=zlib-gnu"), 14},
		{"g++ -O2 -flto, two units", build("gcc-lto", gxx, "-flto", split2), 0},
		{"clang++ -O2 -flto=thin, two units", build("clang-thinlto", clangxx, "-flto=thin", "-fuse-ld=lld", split2), 0},
		{"g++ -O2 -fdebug-types-section (type units)", build("gcc-types", gxx, "-fdebug-types-section", split2), 0},
		{"g++ -O2 -gdwarf64", build("gcc-dwarf64", gxx, "-gdwarf64"), 0},
		{"g++ -O2 -gdwarf-2", build("gcc-dwarf2", gxx, "-gdwarf-2"), 0},
		{"clang++ -O2 -gsimple-template-names -gembed-source", build("clang-simple", clangxx, "-gsimple-template-names", "-gembed-source"), 0},
		{"clang++ -O2 -gline-tables-only", build("clang-gmlt", clangxx, "-gline-tables-only"), 0},
		{"stripped", stripped(gccPIE), 0},
		{"Go", goBinary(t, dir), 0},
		{"rustc -O DWARF 4", rustBinary(t, dir, "rust-dwarf4", "-C", "dwarf-version=4"), 0},
		{"rustc -O DWARF 5", rustBinary(t, dir, "rust-dwarf5", "-C", "dwarf-version=5"), 0},
		{"rustc -O DWARF 5 v0 mangling", rustBinary(t, dir, "rust-v0", "-C", "dwarf-version=5", "-C", "symbol-mangling-version=v0"), 0},
		// Debian's stripped C libraries of other machines: names from
		// their dynamic symbols alone (Thumb bits on armhf, ELFv1's
		// function descriptors on big-endian ppc64, ifuncs' included).
		{"arm64 libc", testenv.File(t, "/usr/aarch64-linux-gnu/lib/libc.so.6", "libc6-arm64-cross"), 0},
		{"riscv64 libc", testenv.File(t, "/usr/riscv64-linux-gnu/lib/libc.so.6", "libc6-riscv64-cross"), 0},
		{"ppc64el libc", testenv.File(t, "/usr/powerpc64le-linux-gnu/lib/libc.so.6", "libc6-ppc64el-cross"), 0},
		{"ppc64 libc (ELFv1)", testenv.File(t, "/usr/powerpc64-linux-gnu/lib/libc.so.6", "libc6-ppc64-cross"), 0},
		{"s390x libc", testenv.File(t, "/usr/s390x-linux-gnu/lib/libc.so.6", "libc6-s390x-cross"), 0},
		{"mips64el libc", testenv.File(t, "/usr/mips64el-linux-gnuabi64/lib/libc.so.6", "libc6-mips64el-cross"), 0},
		{"386 libc", testenv.File(t, "/lib32/libc.so.6", "libc6-i386"), 0},
		{"armhf libc", testenv.File(t, "/usr/arm-linux-gnueabihf/lib/libc.so.6", "libc6-armhf-cross"), 0},
		{"mips libc", testenv.File(t, "/usr/mips-linux-gnu/lib/libc.so.6", "libc6-mips-cross"), 0},
		{"powerpc libc", testenv.File(t, "/usr/powerpc-linux-gnu/lib/libc.so.6", "libc6-powerpc-cross"), 0},
	}
	if _, err := os.Stat("/usr/lib/debug/.build-id"); err != nil {
		testenv.Missing(t, "libc's detached debug files", "apt-get install libc6-dbg")
	}
	tool := New(Options{})
	defer tool.Close()
	total := 0
	for _, b := range bins {
		t.Run(b.name, func(t *testing.T) {
			addrs := sampleCode(t, b.path, 3000)
			oracle := oracleLLVM
			if b.oracle != 0 {
				oracle = b.oracle
			}
			want := testenv.LLVMSymbolizeWith(t, oracle, b.path, addrs)
			compareFrames(t, tool, b.path, addrs, want)
			total += len(addrs)
		})
	}
	t.Logf("%d addresses compared", total)
}

// compareFrames checks that the object tool's SourceLine for each of
// addrs in the file path gives llvm-symbolizer's frames want[i], an
// empty frame counting as none, reporting the first differences; it
// returns how many addresses have inline frames.
func compareFrames(t *testing.T, tool *Tool, path string, addrs []uint64, want [][]testenv.Frame) (inline int) {
	t.Helper()
	f, err := tool.Open(path, 0, ^uint64(0), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, a := range addrs {
		got, err := f.SourceLine(a)
		if err != nil {
			t.Fatalf("%#x: %v", a, err)
		}
		if len(got) == 1 && got[0] == (gdriver.Frame{}) {
			got = nil
		}
		if len(got) > 1 {
			inline++
		}
		if !sameFrames(got, want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("%#x:\n got %+v\nwant %+v", a, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses differ from llvm-symbolizer", bad, len(addrs))
	}
	return inline
}

func sameFrames(got []gdriver.Frame, want []testenv.Frame) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Func != w.Func || g.File != w.File || g.Line != w.Line || g.Column != w.Column || g.StartLine != w.StartLine {
			return false
		}
	}
	return true
}

// goBinary builds testdata/hello.go.txt.
func goBinary(t *testing.T, dir string) string {
	t.Helper()
	return testenv.GoBuild(t, dir, "go", "testdata/hello.go.txt", "hello-go", nil)
}

// rustBinary builds testdata/inline.rs with rustc -O -g and args into
// dir/name. Its standard library, linked in, brings DWARF 4 units of its
// own whatever args ask.
func rustBinary(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	rustc := testenv.Tool(t, "rustc", "rustc-web")
	out := filepath.Join(dir, name)
	cmd := exec.Command(rustc, append([]string{"-O", "-g", "-o", out, "testdata/inline.rs"}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return out
}

// sampleCode returns about n addresses spread evenly over the code
// sections of the ELF file at path, plus every 7th byte of its first
// 4 KiB of code, where functions are small and boundaries many.
func sampleCode(t *testing.T, path string, n int) []uint64 {
	t.Helper()
	f, err := elf.Open(path) // debug/elf: 32-bit executables too
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size uint64
	var secs []elf.SectionHeader
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
			secs = append(secs, s.SectionHeader)
			size += s.Size
		}
	}
	if size == 0 {
		t.Fatalf("%s: no code", path)
	}
	stride := max(size/uint64(n), 1) | 1 // odd: not always at an aligned start
	var addrs []uint64
	for _, s := range secs {
		for a := s.Addr; a < s.Addr+s.Size; a += stride {
			addrs = append(addrs, a)
		}
	}
	first := secs[0]
	for a := first.Addr; a < first.Addr+min(first.Size, 4096); a += 7 {
		addrs = append(addrs, a)
	}
	return addrs
}
