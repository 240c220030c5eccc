package jitsym

import (
	"bytes"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
)

// loadScattered reads a checked-in object (see testdata/gen.sh), gives its
// sections load addresses with a fixed seed, and returns the Symbolizer
// and the address of each loaded section by name.
func loadScattered(t *testing.T, name string) (*Symbolizer, map[string]synth.Placement) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := synth.Scatter(data, synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 28, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]synth.Placement)
	for _, p := range ps {
		m[p.Name] = p
	}
	return s, m
}

// TestSourceLineBoundaries looks up the edges of a function's section and
// the holes around it in plain-gcc-dwarf5.o. The expected frames are what
// llvm-symbolizer 14 prints for the same addresses.
func TestSourceLineBoundaries(t *testing.T) {
	s, secs := loadScattered(t, "plain-gcc-dwarf5.o")
	pick, api := secs[".text.pick"], secs[".text.api"]
	if pick.Addr+pick.Size >= api.Addr {
		t.Fatalf("want a hole after .text.pick [%#x, +%d) before .text.api at %#x", pick.Addr, pick.Size, api.Addr)
	}
	const file = "/jitsym/src/plain.c"
	tests := []struct {
		name string
		addr uint64
		want []Frame
	}{
		{name: "below", addr: pick.Addr - 1},
		{name: "start", addr: pick.Addr, want: []Frame{{Func: "pick", File: file, Line: 21, Column: 17, StartLine: 21}}},
		{name: "inside inlined", addr: pick.Addr + 24, want: []Frame{
			{Func: "poly", File: file, Line: 7, Column: 20, StartLine: 6},
			{Func: "pick", File: file, Line: 24, Column: 12, StartLine: 21},
		}},
		{name: "end-1", addr: pick.Addr + pick.Size - 1, want: []Frame{{Func: "pick", File: file, Line: 28, Column: 12, StartLine: 21}}},
		{name: "end", addr: pick.Addr + pick.Size},
		{name: "gap", addr: (pick.Addr + pick.Size + api.Addr) / 2},
		{name: "next start", addr: api.Addr, want: []Frame{{Func: "api", File: file, Line: 34, Column: 16, StartLine: 34}}},
		{name: "zero", addr: 0},
		{name: "above", addr: math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SourceLine(tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("SourceLine(%#x) = %v, want %v", tt.addr, fmtFrames(got), fmtFrames(tt.want))
			}
		})
	}
}

// TestSymbolTableOnly checks the fallback for an object without DWARF:
// names from the symbol table; a local symbol's file is the STT_FILE name
// before it, as llvm-symbolizer prints it.
func TestSymbolTableOnly(t *testing.T) {
	s, secs := loadScattered(t, "cold-gcc-nodebug.o")
	if s.HasDWARF() {
		t.Fatal("HasDWARF() = true for an object compiled with -g0")
	}
	maybe, cold, report := secs[".text.maybe"], secs[".text.unlikely.maybe"], secs[".text.unlikely.report"]
	tests := []struct {
		name string
		addr uint64
		want []Frame
	}{
		{name: "global start", addr: maybe.Addr, want: []Frame{{Func: "maybe"}}},
		{name: "global end-1", addr: maybe.Addr + maybe.Size - 1, want: []Frame{{Func: "maybe"}}},
		{name: "global end", addr: maybe.Addr + maybe.Size},
		{name: "local cold part", addr: cold.Addr + 1, want: []Frame{{Func: "maybe.cold", File: "cold.c"}}},
		{name: "local", addr: report.Addr, want: []Frame{{Func: "report", File: "cold.c"}}},
		{name: "below local", addr: report.Addr - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SourceLine(tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("SourceLine(%#x) = %v, want %v", tt.addr, fmtFrames(got), fmtFrames(tt.want))
			}
		})
	}
}

// TestColdPartition checks a function in two sections (DW_AT_ranges): the
// hot part is named from DWARF and the symbol, the cold part after the
// symbol "maybe.cold", as llvm-symbolizer does.
func TestColdPartition(t *testing.T) {
	s, secs := loadScattered(t, "cold-gcc-dwarf4.o")
	hot, cold := secs[".text.maybe"], secs[".text.unlikely.maybe"]
	for _, tt := range []struct {
		name     string
		addr     uint64
		wantFunc string
	}{
		{name: "hot", addr: hot.Addr, wantFunc: "maybe"},
		{name: "cold", addr: cold.Addr, wantFunc: "maybe.cold"},
		{name: "cold end-1", addr: cold.Addr + cold.Size - 1, wantFunc: "maybe.cold"},
	} {
		got, err := s.SourceLine(tt.addr)
		if err != nil || len(got) == 0 {
			t.Fatalf("%s: SourceLine(%#x) = %v, %v", tt.name, tt.addr, got, err)
		}
		if last := got[len(got)-1]; last.Func != tt.wantFunc || last.File != "/jitsym/src/cold.c" || last.StartLine != 14 {
			t.Errorf("%s: outermost frame %v, want %s in /jitsym/src/cold.c starting at line 14", tt.name, fmtFrames(got[len(got)-1:]), tt.wantFunc)
		}
	}
}

// TestFunctionNames checks linkage names (clang gives them to every C++
// function) and, where GCC gives none, the qualified DWARF name.
func TestFunctionNames(t *testing.T) {
	tests := []struct {
		object string
		want   []string
	}{
		{object: "inline-clang-dwarf5.o", want: []string{
			"_ZN5outer5inner4workEi",                       // namespaces
			"_ZN5outer5inner7CounterC2Ei",                  // constructor: linkage name on the definition
			"_ZN5outer12_GLOBAL__N_16hiddenEi",             // anonymous namespace
			"_ZN5outer5inner5twiceIlEET_S2_",               // function template
			"_ZNK5outer5inner4Vec2IiE3dotERKS2_",           // class template member
			"_ZZN5outer12_GLOBAL__N_16hiddenEiENK3$_0clEi", // lambda
			"c_entry", // extern "C" in a namespace
		}},
		{object: "inline-gcc-dwarf5.o", want: []string{
			"_ZN5outer5inner7CounterC4Ei",          // GCC's unified constructor
			"outer::(anonymous namespace)::hidden", // internal linkage: no linkage name
			"operator()",                           // the closure type has no name
			"c_entry",                              // DW_AT_external without linkage name: C linkage
			"plain_c",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.object, func(t *testing.T) {
			s, _ := loadScattered(t, tt.object)
			names := make(map[string]bool)
			for _, n := range s.nodes {
				names[s.names[n.fn]] = true
			}
			for _, want := range tt.want {
				if !names[want] {
					t.Errorf("no function named %q; have %q", want, slices.Sorted(maps.Keys(names)))
				}
			}
		})
	}
}

// TestAArch64 checks an AArch64 object, DWARF 4 from clang.
func TestAArch64(t *testing.T) {
	s, secs := loadScattered(t, "plain-clang-aarch64-dwarf4.o")
	got, err := s.SourceLine(secs[".text.api"].Addr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[len(got)-1].Func != "api" || got[len(got)-1].File != "/jitsym/src/plain.c" {
		t.Errorf("SourceLine(start of api) = %v, want api in /jitsym/src/plain.c last", fmtFrames(got))
	}
}

// TestConcurrentSourceLine runs lookups from several goroutines; run with
// -race.
func TestConcurrentSourceLine(t *testing.T) {
	s, secs := loadScattered(t, "inline-clang-dwarf5.o")
	var addrs []uint64
	for _, p := range secs {
		if p.Exec {
			for a := p.Addr; a < p.Addr+p.Size; a++ {
				addrs = append(addrs, a)
			}
		}
	}
	want := make([][]Frame, len(addrs))
	for i, a := range addrs {
		want[i], _ = s.SourceLine(a)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []Frame
			for i, a := range addrs {
				buf = s.AppendFrames(buf[:0], a)
				if !slices.Equal(buf, want[i]) {
					t.Errorf("%#x: got %v, want %v", a, fmtFrames(buf), fmtFrames(want[i]))
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestAppendFramesDoesNotAllocate(t *testing.T) {
	s, secs := loadScattered(t, "inline-clang-dwarf5.o")
	addr := secs[".text._ZN5outer5inner4workEi"].Addr + 8
	buf := make([]Frame, 0, 16)
	if n := testing.AllocsPerRun(100, func() { buf = s.AppendFrames(buf[:0], addr) }); n != 0 {
		t.Errorf("AppendFrames allocates %v times per call, want 0", n)
	}
	if len(buf) == 0 {
		t.Errorf("no frames at %#x", addr)
	}
	// Nor does a buffer on the caller's stack escape to the heap: dst
	// flows only to the result (a cycle of calls through the split
	// files' indexes made it escape once, a heap buffer per lookup).
	var n int
	if allocs := testing.AllocsPerRun(100, func() {
		var stack [16]Frame
		n = len(s.AppendFrames(stack[:0], addr))
	}); allocs != 0 || n == 0 {
		t.Errorf("AppendFrames into a stack buffer: %v allocations per call, %d frames; want none and some", allocs, n)
	}
}

func TestClose(t *testing.T) {
	s, secs := loadScattered(t, "plain-gcc-dwarf5.o")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SourceLine(secs[".text.api"].Addr); !errors.Is(err, ErrClosed) {
		t.Errorf("SourceLine after Close: got %v, want ErrClosed", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "x.elf")
	if err := os.WriteFile(notELF, []byte("not an ELF file at all, just text to fill 64 bytes of header...."), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(notELF)
	var fe *elfrel.FormatError
	if !errors.As(err, &fe) || fe.File != notELF {
		t.Errorf("Open(%q) = %v, want a *elfrel.FormatError naming the file", notELF, err)
	}
	if _, err := Open(filepath.Join(dir, "missing.elf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want os.ErrNotExist", err)
	}
}
