package objtool

import (
	"bytes"
	"cmp"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestForeignFixtures opens each checked-in binary of testdata/foreign
// for a run-time mapping, computing the base as upstream pprof does for
// the format, and asks what pprof asks: the file address, the frames,
// the symbols and the disassembly of work, a function of inline.c.
func TestForeignFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                 string
		start, limit, offset uint64
		work                 uint64 // work's address in the file
		wantFunc             string // the outermost function at work+4, if not work
		buildID              string
		dwarf                bool // frames come from DWARF: file and line too
		disasm               bool
	}{
		// ELF: the executable segment mapped at its own address.
		{file: "elf32", start: 0x8049000, limit: 0x804a000, offset: 0x1000, work: 0x8049060,
			buildID: "3376526425136c8e80e14c2e0973337cfe4ec7dd", dwarf: true, disasm: true},
		// PE: loaded elsewhere than its ImageBase (0x140000000), as ASLR
		// does; the base is start - ImageBase.
		// The linker's ___crt_xt_end__ shares work's address, and the
		// symbol table's name wins, as with llvm-symbolizer.
		{file: "pe.exe", start: 0x7ff7a0000000, limit: 0x7ff7a0010000, work: 0x140001000, wantFunc: "___crt_xt_end__", dwarf: true, disasm: true},
		// Mach-O: the base is start - __TEXT's vmaddr (0x100000000).
		{file: "macho-exe", start: 0x10a000000, limit: 0x10a004000, work: 0x100000420,
			buildID: machoUUID(t, "testdata/foreign/macho-exe"), disasm: true},
		// Mach-O object files have no __TEXT segment: only a mapping of
		// the whole address space, which keeps the file's addresses.
		{file: "macho-x86.o", start: 0, limit: ^uint64(0), work: 0, dwarf: true, disasm: true},
		{file: "macho-arm64.o", start: 0, limit: ^uint64(0), work: 0, dwarf: true, disasm: true},
	}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		tests = append(tests, struct {
			file                 string
			start, limit, offset uint64
			work                 uint64
			wantFunc             string
			buildID              string
			dwarf                bool
			disasm               bool
		}{file: "macho-fat.o", start: 0, limit: ^uint64(0), work: 0, dwarf: true, disasm: true})
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			var warnings []string
			var mu sync.Mutex
			tool := New(Options{Warn: func(msg string) { mu.Lock(); warnings = append(warnings, msg); mu.Unlock() }})
			defer tool.Close()
			path := filepath.Join("testdata/foreign", tt.file)
			f, err := tool.Open(path, tt.start, tt.limit, tt.offset, "")
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got := f.BuildID(); got != tt.buildID {
				t.Errorf("BuildID() = %q, want %q", got, tt.buildID)
			}
			syms, err := f.Symbols(regexp.MustCompile(`^work$`), 0)
			if err != nil || len(syms) != 1 {
				t.Fatalf("Symbols(^work$) = %+v, %v; want one", syms, err)
			}
			if syms[0].Start != tt.work || syms[0].End <= syms[0].Start {
				t.Errorf("work's symbol is [%#x, %#x], want it to start at %#x", syms[0].Start, syms[0].End, tt.work)
			}
			// The run-time address of work+4.
			runtimeAddr := tt.work + 4
			switch tt.file {
			case "pe.exe":
				runtimeAddr = tt.start + (tt.work + 4 - 0x140000000)
			case "macho-exe":
				runtimeAddr = tt.start + (tt.work + 4 - 0x100000000)
			}
			if got, err := f.ObjAddr(runtimeAddr); err != nil || got != tt.work+4 {
				t.Errorf("ObjAddr(%#x) = %#x, %v; want %#x", runtimeAddr, got, err, tt.work+4)
			}
			frames, err := f.SourceLine(runtimeAddr)
			if err != nil || len(frames) == 0 {
				t.Fatalf("SourceLine(%#x) = %+v, %v", runtimeAddr, frames, err)
			}
			wantFunc := cmp.Or(tt.wantFunc, "work")
			outer := frames[len(frames)-1]
			if outer.Func != wantFunc {
				t.Errorf("SourceLine(%#x): outermost function %q, want %s (frames %+v)", runtimeAddr, outer.Func, wantFunc, frames)
			}
			if tt.dwarf && (!strings.HasSuffix(outer.File, "inline.c") || outer.Line == 0) {
				t.Errorf("SourceLine(%#x): outermost frame %+v, want a line of inline.c", runtimeAddr, outer)
			}
			if !tt.disasm {
				return
			}
			insts, err := tool.Disasm(path, syms[0].Start, syms[0].End, false)
			if err != nil || len(insts) < 3 {
				t.Fatalf("Disasm(work) = %d instructions, %v", len(insts), err)
			}
			if insts[0].Addr != tt.work || insts[0].Text == "" {
				t.Errorf("Disasm(work)[0] = %+v, want an instruction at %#x", insts[0], tt.work)
			}
			if tt.dwarf && insts[0].Function != wantFunc {
				t.Errorf("Disasm(work)[0].Function = %q, want %s", insts[0].Function, wantFunc)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %q", warnings)
			}
		})
	}
}

// mustOpenForeign opens the Mach-O, PE or 32-bit ELF file at path, or
// fails the test.
func mustOpenForeign(t *testing.T, path string) *foreignBin {
	t.Helper()
	magic, err := readMagic(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openForeign(path, magic, foreignOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// machoUUID returns the LC_UUID of the Mach-O file at path in hex.
func machoUUID(t *testing.T, path string) string {
	t.Helper()
	b := mustOpenForeign(t, path)
	defer b.close()
	if len(b.buildID) != 32 {
		t.Fatalf("%s: UUID %q, want 16 bytes", path, b.buildID)
	}
	return b.buildID
}

// TestForeignBaseErrors checks the mappings whose base upstream pprof
// cannot compute either: the errors name the file.
func TestForeignBaseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                 string
		start, limit, offset uint64
		want                 string
	}{
		{file: "macho-x86.o", start: 0x10a000000, limit: 0x10a004000, want: "could not identify base for testdata/foreign/macho-x86.o: no __TEXT segment"},
		{file: "macho-exe", start: 0x4000, limit: 0x8000, want: "could not identify base for testdata/foreign/macho-exe: __TEXT segment address (0x100000000) > mapping start address (0x4000)"},
	}
	tool := New(Options{})
	defer tool.Close()
	for _, tt := range tests {
		_, err := tool.Open(filepath.Join("testdata/foreign", tt.file), tt.start, tt.limit, tt.offset, "")
		if err == nil || err.Error() != tt.want {
			t.Errorf("Open(%s, [%#x, %#x)) error = %v, want %q", tt.file, tt.start, tt.limit, err, tt.want)
		}
	}
}

// fakeObjTool is a fallback that records the files it is asked to open.
type fakeObjTool struct {
	mu     sync.Mutex
	opened []string
}

func (f *fakeObjTool) Open(file string, start, limit, offset uint64, relocationSymbol string) (gdriver.ObjFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened = append(f.opened, file)
	return nil, os.ErrNotExist
}

func (f *fakeObjTool) Disasm(file string, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	return nil, os.ErrNotExist
}

// TestFallbackOnlyForUnreadable checks that what is still not read in
// process goes to the fallback, with one warning per file saying why,
// and that the formats read here do not.
func TestFallbackOnlyForUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A SPARC relocatable object: its DWARF would need relocations that
	// package elfrel does not apply.
	rel := filepath.Join(dir, "sparc.o")
	clang := testenv.Tool(t, "clang-14", "clang-14")
	if b, err := exec.Command(clang, "--target=sparcv9-linux-gnu", "-fintegrated-as", "-g", "-c", "-o", rel, "testdata/inline.c").CombinedOutput(); err != nil {
		t.Fatalf("clang --target=sparcv9-linux-gnu -c: %v\n%s", err, b)
	}
	// A Mach-O file cut short.
	data, err := os.ReadFile("testdata/foreign/macho-x86.o")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.o")
	if err := os.WriteFile(cut, data[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	fb := &fakeObjTool{}
	tool := New(Options{Fallback: fb, Warn: func(msg string) { warnings = append(warnings, msg) }})
	defer tool.Close()
	for range 2 {
		for _, name := range []string{rel, cut, "testdata/foreign/elf32", "testdata/foreign/pe.exe", "testdata/foreign/macho-fat.o"} {
			tool.Open(name, 0, ^uint64(0), 0, "")
		}
	}
	if want := []string{rel, cut, rel, cut}; strings.Join(fb.opened, " ") != strings.Join(want, " ") {
		t.Errorf("fallback opened %q, want %q", fb.opened, want)
	}
	want := []string{
		rel + ": a relocatable ELF file of a kind (machine EM_SPARCV9); using binutils for it",
		cut + ": a Mach-O file that could not be read (error parsing " + cut + ": ",
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", warnings, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(warnings[i], want[i]) {
			t.Errorf("warning %d = %q, want it to start %q", i, warnings[i], want[i])
		}
	}
}

// TestWarmForeign checks that Warm indexes a foreign binary ahead of the
// first question, once.
func TestWarmForeign(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"elf32", "pe.exe", "macho-x86.o"} {
		tool := New(Options{})
		path := filepath.Join("testdata/foreign", name)
		tool.Warm(path)
		tool.prefetching.Wait()
		e, ok := tool.foreignFor(path)
		if !ok || e.index == nil || !e.index.HasDWARF() {
			t.Errorf("%s: after Warm, no DWARF index (entry %v)", name, ok)
		}
		tool.Close()
	}
}

// TestELFBuildIDBothReaders: the build ID read through debug/elf, for the
// ELF files elfrel refuses, is the one elfrel reads, on 64-bit ELF files
// both can read.
func TestELFBuildIDBothReaders(t *testing.T) {
	for _, path := range []string{"/bin/ls", filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "bin", "libleaf.so")} {
		ef, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := elfrel.StdBuildID(ef)
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		rf, err := elfrel.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rf.BuildID()
		rf.Close()
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: elfrel: build ID %x, %v", path, want, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: build ID %x through debug/elf, %x through elfrel", path, got, want)
		}
	}
}
