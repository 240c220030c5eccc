package objtool

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// buildForeign builds the test programs in other containers than 64-bit
// ELF, in dir, and returns them by name: 32-bit ELF (gcc -m32, PIE and
// not; and two stripped of their DWARF: one
// with a .gnu_debuglink to elf32-a.debug, one whose debug file is under
// dir/debug/.build-id), PE with DWARF (MinGW-w64 g++), and Mach-O built by clang for
// macOS: x86-64 and AArch64 object files, a fat object file of both, an
// executable linked by lld whose DWARF clang moves to a .dSYM bundle, and
// a fat executable of it and its AArch64 twin, with a fat .dSYM.
func buildForeign(t *testing.T, dir string) []struct{ name, path string } {
	t.Helper()
	cc, err := filepath.Abs("testdata/inline.cc")
	if err != nil {
		t.Fatal(err)
	}
	c, err := filepath.Abs("testdata/inline.c")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) { t.Helper(); testenv.Run(t, dir, args...) }
	gxx := testenv.Tool(t, "g++", "g++")
	mingw := testenv.Tool(t, "x86_64-w64-mingw32-g++", "g++-mingw-w64-x86-64")
	clang := testenv.Tool(t, fmt.Sprintf("clang-%d", oracleLLVM), fmt.Sprintf("clang-%d", oracleLLVM))
	lipo := testenv.Tool(t, fmt.Sprintf("llvm-lipo-%d", oracleLLVM), fmt.Sprintf("llvm-%d", oracleLLVM))
	testenv.Tool(t, fmt.Sprintf("ld64.lld-%d", oracleLLVM), fmt.Sprintf("lld-%d", oracleLLVM))
	testenv.Tool(t, fmt.Sprintf("dsymutil-%d", oracleLLVM), fmt.Sprintf("llvm-%d", oracleLLVM))

	run(gxx, "-m32", "-O2", "-g", "-o", "elf32-pie", cc)
	run(gxx, "-m32", "-O2", "-g", "-no-pie", "-o", "elf32-nopie", cc)
	run(gxx, "-m32", "-O2", "-gdwarf-4", "-o", "elf32-dwarf4", cc)
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	run(gxx, "-m32", "-O2", "-g", "-Wl,--build-id", "-o", "elf32-a", cc)
	run(objcopy, "--only-keep-debug", "elf32-a", "elf32-a.debug")
	run(objcopy, "--strip-debug", "--add-gnu-debuglink=elf32-a.debug", "elf32-a", "elf32-debuglink")
	run(gxx, "-m32", "-O1", "-g", "-Wl,--build-id", "-o", "elf32-b", cc) // another build ID
	ef, err := elf.Open(filepath.Join(dir, "elf32-b"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := elfrel.StdBuildID(ef)
	ef.Close()
	if err != nil || len(id) < 2 {
		t.Fatalf("elf32-b: build ID %x, %v", id, err)
	}
	byID := filepath.Join("debug", ".build-id", fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x.debug", id[1:]))
	run("mkdir", "-p", filepath.Dir(byID))
	run(objcopy, "--only-keep-debug", "elf32-b", byID)
	run(objcopy, "--strip-debug", "elf32-b", "elf32-buildid")
	run(mingw, "-O2", "-g", "-o", "pe.exe", cc)
	run(clang, "--target=x86_64-apple-macos11", "-O2", "-g", "-c", "-o", "macho-x86.o", c)
	run(clang, "--target=arm64-apple-macos11", "-O2", "-g", "-c", "-o", "macho-arm64.o", c)
	run(lipo, "-create", "macho-x86.o", "macho-arm64.o", "-output", "macho-fat.o")
	for _, target := range []struct{ triple, out string }{
		{"x86_64-apple-macos11", "macho-exe"}, {"arm64-apple-macos11", "macho-exe-arm64"},
	} {
		run(clang, "--target="+target.triple, "-O2", "-g", "-fuse-ld=lld",
			"-nostdlib", "-Wl,-undefined,dynamic_lookup", "-o", target.out, c)
	}
	// A fat executable's dSYM is a fat file of its members' DWARF files.
	dwarf := func(exe string) string { return filepath.Join(exe+".dSYM", "Contents", "Resources", "DWARF", exe) }
	run(lipo, "-create", "macho-exe", "macho-exe-arm64", "-output", "macho-fat-exe")
	run("mkdir", "-p", filepath.Dir(dwarf("macho-fat-exe")))
	run(lipo, "-create", dwarf("macho-exe"), dwarf("macho-exe-arm64"), "-output", dwarf("macho-fat-exe"))
	return []struct{ name, path string }{
		{"ELF32 PIE", filepath.Join(dir, "elf32-pie")},
		{"ELF32 non-PIE", filepath.Join(dir, "elf32-nopie")},
		{"ELF32 DWARF 4", filepath.Join(dir, "elf32-dwarf4")},
		{"PE (MinGW-w64)", filepath.Join(dir, "pe.exe")},
		{"Mach-O x86-64 object", filepath.Join(dir, "macho-x86.o")},
		{"Mach-O AArch64 object", filepath.Join(dir, "macho-arm64.o")},
		{"Mach-O executable with .dSYM", filepath.Join(dir, "macho-exe")},
	}
}

// TestForeignSameFramesAsLLVMSymbolizer is TestSameFramesAsLLVMSymbolizer
// for the containers read with the standard library: every address of a
// sample spread over each binary's code gets the frames llvm-symbolizer
// --inlining gives, inline frames included. A fat Mach-O file gives the
// frames of its member for the host's architecture.
func TestForeignSameFramesAsLLVMSymbolizer(t *testing.T) {
	testenv.Long(t, "builds Mach-O, PE and 32-bit programs and compares with llvm-symbolizer")
	dir := t.TempDir()
	bins := buildForeign(t, dir)
	tool := New(Options{Warn: func(msg string) { t.Errorf("warning: %s", msg) }, DebugDirs: []string{filepath.Join(dir, "debug")}})
	defer tool.Close()
	compare := func(t *testing.T, path, oracle string, args ...string) int {
		addrs := sampleForeign(t, path, 3000)
		want := testenv.LLVMSymbolizeArgs(t, oracleLLVM, oracle, addrs, args...)
		inline := compareFrames(t, tool, path, addrs, want)
		if inline == 0 {
			t.Errorf("no address of %d has inline frames", len(addrs))
		}
		t.Logf("%d addresses, %d with inline frames", len(addrs), inline)
		return len(addrs)
	}
	total := 0
	for _, b := range bins {
		t.Run(b.name, func(t *testing.T) { total += compare(t, b.path, b.path) })
	}
	// Stripped binaries, whose debug files llvm-symbolizer finds too.
	for _, file := range []string{"elf32-debuglink", "elf32-buildid"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			total += compare(t, path, path, "--debug-file-directory="+filepath.Join(dir, "debug"))
		})
	}
	for _, fat := range []struct{ name, file, x86, arm64 string }{
		{"fat Mach-O", "macho-fat.o", "macho-x86.o", "macho-arm64.o"},
		{"fat Mach-O executable with fat .dSYM", "macho-fat-exe", "macho-exe", "macho-exe-arm64"},
	} {
		t.Run(fat.name, func(t *testing.T) {
			var member string
			switch runtime.GOARCH {
			case "amd64":
				member = fat.x86
			case "arm64":
				member = fat.arm64
			default:
				t.Skipf("the fat file has no member for %s", runtime.GOARCH)
			}
			total += compare(t, filepath.Join(dir, fat.file), filepath.Join(dir, member))
		})
	}
	t.Logf("%d addresses compared", total)
}

// sampleForeign returns about n addresses spread over the code sections
// of the foreign binary at path, plus every 7th byte of its first 4 KiB
// of code.
func sampleForeign(t *testing.T, path string, n int) []uint64 {
	t.Helper()
	b := mustOpenForeign(t, path)
	defer b.close()
	var size uint64
	for _, s := range b.code {
		size += s.size
	}
	if size == 0 {
		t.Fatalf("%s: no code", path)
	}
	stride := max(size/uint64(n), 1) | 1
	var addrs []uint64
	for _, s := range b.code {
		for a := s.addr; a < s.addr+s.size; a += stride {
			addrs = append(addrs, a)
		}
	}
	first := b.code[0]
	for a := first.addr; a < first.addr+min(first.size, 4096); a += 7 {
		addrs = append(addrs, a)
	}
	return addrs
}
