package jitsym

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// lazyOracle is the llvm-symbolizer version the lazy index is compared
// with: LLVM 14 reads GCC's DWARF 5 directory 0 wrong (see objtool's
// oracleLLVM).
const lazyOracle = 19

// openLazy indexes the binary path (its DWARF in debug, or in itself if
// debug is "") a unit at a time, however small, with no limit on the
// units indexed alone unless maxUnits > 0.
func openLazy(t *testing.T, path, debug string, maxUnits int) *Symbolizer {
	t.Helper()
	if maxUnits <= 0 {
		maxUnits = 1 << 30
	}
	return openLazyTuned(t, path, debug, tuning{collect: collectAbove, lazyMin: 0, maxUnits: maxUnits, maxAsked: 1 << 30})
}

// openLazyTuned is openLazy with the thresholds tune.
func openLazyTuned(t *testing.T, path, debug string, tune tuning) *Symbolizer {
	t.Helper()
	f, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var d *elfrel.File
	if debug != "" {
		if d, err = elfrel.Open(debug); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
	}
	var warnings []string
	s, err := newWithDebug(f, d, Links{Lazy: true, Warn: func(msg string) { warnings = append(warnings, msg) }}, tune)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Lazy() {
		t.Fatalf("%s: not indexed lazily", path)
	}
	t.Cleanup(func() {
		if len(warnings) > 0 {
			t.Errorf("warnings: %q", warnings)
		}
		s.Close()
	})
	return s
}

// linkLazyTestBinary links the test sources into a shared library with
// tool and args, then runs objcopy with objcopyArgs on it if any.
func linkLazyTestBinary(t testing.TB, tool, pkg string, args, objcopyArgs []string) string {
	t.Helper()
	cc := testenv.Tool(t, tool, pkg)
	out := filepath.Join(t.TempDir(), "lib.so")
	cmd := []string{cc, "-O2", "-shared", "-fPIC", "-o", out}
	cmd = append(cmd, args...)
	for _, src := range []string{"inline.cc", "plain.c", "cold.c"} {
		cmd = append(cmd, filepath.Join("testdata", "src", src))
	}
	if b, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, b)
	}
	if len(objcopyArgs) > 0 {
		objcopy := testenv.Tool(t, "objcopy", "binutils")
		if b, err := exec.Command(objcopy, append(objcopyArgs, out)...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %v: %v\n%s", objcopyArgs, err, b)
		}
	}
	return out
}

// TestLazySameAsLLVMSymbolizer: an index built a unit at a time, every
// unit alone, gives every code address of GCC and clang binaries, with
// and without .debug_aranges, DWARF 4 and 5, compressed or not, the
// frames llvm-symbolizer --inlining gives; and so it does for a sample
// of libc's addresses spread over all its units, from its debug file.
func TestLazySameAsLLVMSymbolizer(t *testing.T) {
	testenv.Long(t, "compares the frames of binaries indexed a unit at a time with llvm-symbolizer")
	for _, tc := range []struct {
		name      string
		tool, pkg string
		args      []string
		objcopy   []string
		aranges   bool // whether the binary keeps .debug_aranges
	}{
		{name: "gcc DWARF 5", tool: "g++", pkg: "g++", args: []string{"-g", "-x", "c++"}, aranges: true},
		{name: "gcc DWARF 4", tool: "g++", pkg: "g++", args: []string{"-gdwarf-4", "-x", "c++"}, aranges: true},
		{name: "gcc DWARF 5 compressed, no aranges", tool: "g++", pkg: "g++", args: []string{"-g", "-gz", "-x", "c++"},
			objcopy: []string{"--remove-section=.debug_aranges"}},
		{name: "gcc DWARF 4 no aranges", tool: "g++", pkg: "g++", args: []string{"-gdwarf-4", "-x", "c++"},
			objcopy: []string{"--remove-section=.debug_aranges"}},
		{name: "clang DWARF 5 (no aranges)", tool: "clang++-19", pkg: "clang-19", args: []string{"-g", "-x", "c++"}},
		{name: "clang DWARF 4 aranges", tool: "clang++-19", pkg: "clang-19", args: []string{"-gdwarf-4", "-gdwarf-aranges", "-x", "c++"}, aranges: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := linkLazyTestBinary(t, tc.tool, tc.pkg, tc.args, tc.objcopy)
			s := openLazy(t, bin, "", 0)
			if got := s.lazy.complete; got != true {
				t.Errorf("every unit's ranges known: got %v, want true", got)
			}
			if got := s.lazy.l.Has(".debug_aranges"); got != tc.aranges {
				t.Errorf("has .debug_aranges: got %v, want %v", got, tc.aranges)
			}
			st := compareWithLLVMVersion(t, lazyOracle, s, bin, codeAddresses(t, bin))
			if s.lazy.full.Load() != nil {
				t.Errorf("the whole index was built")
			}
			if got := len(s.lazy.units); got < 3 {
				t.Errorf("%d units indexed, want 3 or more", got)
			}
			t.Logf("%d addresses, %d frames, %d units indexed alone, %d mismatches", st.addrs, st.frames, len(s.lazy.units), st.mismatches)
		})
	}
	t.Run("aranges of some units (gcc's), not all (clang's)", func(t *testing.T) {
		dir := t.TempDir()
		gcc := testenv.Tool(t, "gcc", "gcc")
		clang := testenv.Tool(t, "clang++-19", "clang-19")
		var objs []string
		for _, c := range []struct{ cc, src string }{{gcc, "plain.c"}, {clang, "inline.cc"}, {gcc, "cold.c"}} {
			obj := filepath.Join(dir, c.src+".o")
			cmd := exec.Command(c.cc, "-g", "-O2", "-fPIC", "-c", "-o", obj, filepath.Join("testdata", "src", c.src))
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
			}
			objs = append(objs, obj)
		}
		bin := filepath.Join(dir, "lib.so")
		cmd := exec.Command(gcc, append([]string{"-shared", "-o", bin}, objs...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		s := openLazy(t, bin, "", 0)
		if !s.lazy.listed {
			t.Fatalf("no .debug_aranges read")
		}
		st := compareWithLLVMVersion(t, lazyOracle, s, bin, codeAddresses(t, bin))
		if s.lazy.listed {
			t.Errorf("the units .debug_aranges leaves out were never looked for")
		}
		if s.lazy.full.Load() != nil {
			t.Errorf("the whole index was built")
		}
		t.Logf("%d addresses, %d frames, %d units indexed alone, %d mismatches", st.addrs, st.frames, len(s.lazy.units), st.mismatches)
	})
	t.Run("libc", func(t *testing.T) {
		s := openLazy(t, "/lib/x86_64-linux-gnu/libc.so.6", libcDebugFile(t), 0)
		addrs := spread(t, "/lib/x86_64-linux-gnu/libc.so.6", 2000)
		st := compareWithLLVMVersion(t, lazyOracle, s, "/lib/x86_64-linux-gnu/libc.so.6", addrs)
		if s.lazy.full.Load() != nil {
			t.Errorf("the whole index was built")
		}
		t.Logf("%d addresses, %d frames, %d units indexed alone, %d mismatches", st.addrs, st.frames, len(s.lazy.units), st.mismatches)
	})
}

// spread returns n addresses spread evenly over the executable sections
// of the binary path.
func spread(t *testing.T, path string, n int) []uint64 {
	t.Helper()
	f, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS {
			total += s.Size
		}
	}
	step := max(total/uint64(n), 1)
	var addrs []uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS {
			for a := s.Addr; a < s.Addr+s.Size; a += step {
				addrs = append(addrs, a)
			}
		}
	}
	return addrs
}

// TestLazySameAsWhole: libc's frames are the same from the index built
// a unit at a time as from the whole index, whether every unit is built
// alone or the whole index takes over after a few, for addresses asked
// in any order.
func TestLazySameAsWhole(t *testing.T) {
	testenv.Long(t, "indexes libc's debug file whole and a unit at a time")
	lib, debug := "/lib/x86_64-linux-gnu/libc.so.6", libcDebugFile(t)
	f, err := elfrel.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := elfrel.Open(debug)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	whole, err := NewWithDebug(f, d)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	addrs := spread(t, lib, 5000)
	// Backwards: units are met in no particular order of .debug_info.
	slices.Reverse(addrs)
	for _, tc := range []struct {
		name string
		tune tuning
		full bool // whether the whole index is built
	}{
		{name: "every unit alone", tune: tuning{maxUnits: 1 << 30, maxAsked: 1 << 30, minUnits: lazyMinUnits, bigUnit: lazyBigUnit}},
		{name: "whole after 3 units", tune: tuning{maxUnits: 3, maxAsked: 1 << 30}, full: true},
		{name: "whole after 10 lookups", tune: tuning{maxUnits: 1 << 30, maxAsked: 10}, full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openLazyTuned(t, lib, debug, tc.tune)
			bad := 0
			for _, a := range addrs {
				got, _ := s.SourceLine(a)
				want, _ := whole.SourceLine(a)
				if !slices.Equal(got, want) {
					if bad++; bad <= 5 {
						t.Errorf("%#x: got\n\t%v\nwant (whole index)\n\t%v", a, fmtFrames(got), fmtFrames(want))
					}
				}
			}
			if got := s.lazy.full.Load() != nil; got != tc.full {
				t.Errorf("whole index built: got %v, want %v", got, tc.full)
			}
		})
	}
}

// TestLazyConcurrent: lookups from several goroutines at once, while
// units are indexed and the whole index takes over, give the whole
// index's frames.
func TestLazyConcurrent(t *testing.T) {
	testenv.Long(t, "indexes libc's debug file whole and a unit at a time")
	lib, debug := "/lib/x86_64-linux-gnu/libc.so.6", libcDebugFile(t)
	addrs := spread(t, lib, 400)
	s := openLazyTuned(t, lib, debug, tuning{collect: collectAbove, lazyMin: 0, maxUnits: 3, maxAsked: 1 << 30})
	got := make([][][]Frame, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, a := range addrs {
				fr, _ := s.SourceLine(a)
				got[g] = append(got[g], fr)
			}
		}()
	}
	wg.Wait()
	whole := openLazyTuned(t, lib, debug, tuning{collect: collectAbove, lazyMin: 0, maxUnits: 1 << 30, maxAsked: 0})
	for i, a := range addrs {
		want, _ := whole.SourceLine(a)
		for g := range got {
			if !slices.Equal(got[g][i], want) {
				t.Fatalf("goroutine %d, %#x: got\n\t%v\nwant (whole index)\n\t%v", g, a, fmtFrames(got[g][i]), fmtFrames(want))
			}
		}
	}
	if s.lazy.full.Load() == nil {
		t.Errorf("the whole index was not built")
	}
}

// TestLazyWhole: a file of fewer units than lazyMinUnits is indexed
// whole, and a lazy index whose unit is more than 1/lazyBigUnit of
// .debug_info builds the whole index for it.
func TestLazyWhole(t *testing.T) {
	testenv.Long(t, "links test binaries with GCC and clang")
	for _, tc := range []struct {
		name      string
		tool, pkg string
	}{
		{name: "with .debug_aranges (gcc)", tool: "g++", pkg: "g++"},
		{name: "without .debug_aranges (clang)", tool: "clang++-19", pkg: "clang-19"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := linkLazyTestBinary(t, tc.tool, tc.pkg, []string{"-g", "-gz", "-x", "c++"}, nil)
			f, err := elfrel.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := newWithDebug(f, nil, Links{Lazy: true}, tuning{collect: collectAbove, lazyMin: 0, maxUnits: 1 << 30,
				maxAsked: 1 << 30, minUnits: lazyMinUnits, bigUnit: lazyBigUnit})
			if err != nil {
				t.Fatal(err)
			}
			if s.Lazy() {
				t.Errorf("a file of 3 units indexed lazily")
			}
			whole, err := New(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range codeAddresses(t, bin) {
				got, _ := s.SourceLine(a)
				want, _ := whole.SourceLine(a)
				if !slices.Equal(got, want) {
					t.Fatalf("%#x: got\n\t%v\nwant (whole index)\n\t%v", a, fmtFrames(got), fmtFrames(want))
				}
			}
		})
	}
	bin := linkLazyTestBinary(t, "g++", "g++", []string{"-g", "-x", "c++"}, nil)
	s := openLazyTuned(t, bin, "", tuning{collect: collectAbove, lazyMin: 0, maxUnits: 1 << 30, maxAsked: 1 << 30, bigUnit: 1000})
	for _, a := range codeAddresses(t, bin) {
		s.SourceLine(a)
	}
	if s.lazy.full.Load() == nil {
		t.Errorf("units of more than 1/1000 of .debug_info indexed alone")
	}
}

// TestUnitAt: the unit of an address, at the boundaries of its ranges,
// in the holes between them, and where ranges of two units overlap.
func TestUnitAt(t *testing.T) {
	z := &lazyIndex{complete: true, cover: []unitRange{
		{lo: 0x100, hi: 0x200, unit: 1},
		{lo: 0x200, hi: 0x280, unit: 2},
		{lo: 0x300, hi: 0x400, unit: 3},
		{lo: 0x380, hi: 0x390, unit: 3}, // the same unit twice
		{lo: 0x500, hi: 0x600, unit: 4},
		{lo: 0x580, hi: 0x700, unit: 5}, // overlaps unit 4
		{lo: 0x800, hi: 0x1000, unit: 6},
		{lo: 0x900, hi: 0x910, unit: 7}, // inside unit 6
	}}
	var hi uint64
	for _, r := range z.cover {
		hi = max(hi, r.hi)
		z.maxHi = append(z.maxHi, hi)
	}
	for _, tc := range []struct {
		addr         uint64
		unit         uint64
		found, alone bool
	}{
		{addr: 0x0, alone: true},
		{addr: 0xff, alone: true},
		{addr: 0x100, unit: 1, found: true, alone: true},
		{addr: 0x1ff, unit: 1, found: true, alone: true},
		{addr: 0x200, unit: 2, found: true, alone: true},
		{addr: 0x27f, unit: 2, found: true, alone: true},
		{addr: 0x280, alone: true},
		{addr: 0x385, unit: 3, found: true, alone: true},
		{addr: 0x390, unit: 3, found: true, alone: true},
		{addr: 0x57f, unit: 4, found: true, alone: true},
		{addr: 0x580},
		{addr: 0x5ff},
		{addr: 0x600, unit: 5, found: true, alone: true},
		{addr: 0x8ff, unit: 6, found: true, alone: true},
		{addr: 0x905},
		{addr: 0x910, unit: 6, found: true, alone: true},
		{addr: 0x1000, alone: true},
		{addr: ^uint64(0), alone: true},
	} {
		unit, found, alone := z.unitAt(tc.addr)
		if unit != tc.unit || found != tc.found || alone != tc.alone {
			t.Errorf("unitAt(%#x) = %d, %v, %v; want %d, %v, %v", tc.addr, unit, found, alone, tc.unit, tc.found, tc.alone)
		}
	}
	z.complete = false // a unit's ranges are not known: a miss is not an answer
	if _, found, alone := z.unitAt(0x280); found || alone {
		t.Errorf("unitAt(0x280) without every unit's ranges: found %v, alone %v; want false, false", found, alone)
	}
}

// FuzzLazy indexes an arbitrary linked binary a unit at a time (at most
// two units alone, then the whole index) and looks up its sections'
// first and last addresses and the ranges of its .debug_aranges. It must
// not panic nor allocate much more than the input warrants; errors, and
// what is told to Warn, must name the file. The seeds are GCC's and
// clang's small shared libraries, with and without .debug_aranges.
func FuzzLazy(f *testing.F) {
	testenv.Long(f, "compiles its seeds with GCC and clang")
	for _, tc := range []struct {
		tool, pkg string
		args      []string
	}{
		{tool: "g++", pkg: "g++", args: []string{"-g", "-x", "c++"}},
		{tool: "g++", pkg: "g++", args: []string{"-gdwarf-4", "-gz", "-x", "c++"}},
		{tool: "clang++-19", pkg: "clang-19", args: []string{"-g", "-x", "c++"}},
	} {
		bin := linkLazyTestBinary(f, tc.tool, tc.pkg, append(tc.args, "-s", "-Wl,--build-id=none"), nil)
		data, err := os.ReadFile(bin)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ef, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.o")
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		var warned []string
		s, err := newWithDebug(ef, nil, Links{Lazy: true, Warn: func(msg string) { warned = append(warned, msg) }},
			tuning{collect: collectAbove, lazyMin: 0, maxUnits: 2, maxAsked: 8, bigUnit: 2})
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		buf := lookUpSectionEnds(s, ef)
		if s.lazy != nil {
			for _, r := range slices.Clone(s.lazy.cover) {
				buf = s.AppendFrames(buf[:0], r.lo)
			}
		}
		runtime.ReadMemStats(&after)
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, 256*uint64(len(data))+64<<20; alloc > limit {
			t.Fatalf("allocated %d bytes for a %d-byte input, want at most %d", alloc, len(data), limit)
		}
		for _, msg := range warned {
			if !strings.HasPrefix(msg, "fuzz.o: ") {
				t.Fatalf("warning %q does not name the file", msg)
			}
		}
		s.Close()
	})
}
