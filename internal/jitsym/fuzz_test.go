package jitsym

import (
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus in testdata/fuzz from the objects in testdata")

// FuzzNew builds the index of arbitrary input and looks up a few
// addresses. It must not panic, must not allocate much more than the input
// warrants, and every error must be typed and name the file.
func FuzzNew(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ef, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.o")
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		s, err := New(ef)
		runtime.ReadMemStats(&after)
		if alloc, limit := after.TotalAlloc-before.TotalAlloc, 256*uint64(len(data))+64<<20; alloc > limit {
			t.Fatalf("allocated %d bytes for a %d-byte input, want at most %d", alloc, len(data), limit)
		}
		checkParallelWalk(t, ef)
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		buf := lookUpSectionEnds(s, ef)
		for _, a := range s.rowAddrs() {
			buf = s.AppendFrames(buf[:0], a)
		}
	})
}

// checkParallelWalk checks that walking the units of ef's .debug_info on
// several goroutines, each unit a run of its own, fails exactly when one
// walk fails, and otherwise gives the index one walk gives.
func checkParallelWalk(t *testing.T, ef *elfrel.File) {
	t.Helper()
	index := func(walkers int) (*Symbolizer, error) {
		l, err := ef.DebugLoader()
		if err != nil {
			return nil, err
		}
		s := &Symbolizer{name: ef.Name}
		return s, buildWith(s, ef.ByteOrder, l, ef.Type == elf.ET_REL, walkers, 1)
	}
	one, err1 := index(1)
	many, err2 := index(3)
	switch {
	case (err1 == nil) != (err2 == nil):
		t.Fatalf("one walk: %v; three walkers: %v", err1, err2)
	case err1 == nil && !reflect.DeepEqual(one, many):
		t.Fatalf("three walkers give another index than one walk")
	}
}

func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	var fe *elfrel.FormatError
	var ue *elfrel.UnsupportedError
	if !errors.As(err, &fe) && !errors.As(err, &ue) {
		t.Fatalf("got %T %v, want *elfrel.FormatError or *elfrel.UnsupportedError", err, err)
	}
	if !strings.HasPrefix(err.Error(), "fuzz.o: ") {
		t.Fatalf("error %q does not name the file", err)
	}
}

// TestFuzzCorpus checks that testdata/fuzz/FuzzNew holds the checked-in
// objects of testdata (with scattered section addresses) as seeds, and
// rewrites them with -update.
func TestFuzzCorpus(t *testing.T) {
	objs, err := filepath.Glob(filepath.Join("testdata", "*.o"))
	if err != nil || len(objs) == 0 {
		t.Fatalf("no objects in testdata: %v", err)
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzNew")
	for _, obj := range objs {
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		opt := synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 24, Seed: 1}
		if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS32 {
			opt.Base = 0x10000000
		}
		if _, err := synth.Scatter(data, opt); err != nil {
			t.Fatal(err)
		}
		want := []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data))
		path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(obj), ".o"))
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or stale (err %v); run go test -run Corpus -update", path, err)
		}
	}
}

// splitObject compiles testdata/src/inline.cc with clang-19
// -gsplit-dwarf -c in a new directory: the object, whose skeleton unit
// names x.dwo, and its .dwo; and, if pkg, the DWARF package llvm-dwp-19
// makes of the .dwo.
func splitObject(f *testing.F, pkg bool) (obj, dwo, dwp []byte) {
	clang := testenv.Tool(f, "clang-19", "clang-19")
	dir := f.TempDir()
	src, err := filepath.Abs("testdata/src/inline.cc")
	if err != nil {
		f.Fatal(err)
	}
	run := func(args ...string) { testenv.Run(f, dir, args...) }
	run(clang, "-O2", "-g", "-gsplit-dwarf", "-c", "-o", "x.o", src)
	if pkg {
		run(testenv.Tool(f, "llvm-dwp-19", "llvm-19"), "-o", "x.dwp", "x.dwo")
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	obj, dwo = read("x.o"), read("x.dwo")
	if pkg {
		dwp = read("x.dwp")
	}
	return obj, dwo, dwp
}

// fuzzSplit indexes obj with the split DWARF dwo gives it and looks up
// every third byte of its code. The lookups must not panic or allocate
// much more than the input (of n bytes, in a file called name) warrants,
// and what is said of the input must name it; when the input is real
// (real), some addresses must have inline frames and nothing be said.
func fuzzSplit(t *testing.T, obj []byte, dwo *DWO, name string, n int, real bool) {
	ef, err := elfrel.NewFile(bytes.NewReader(obj), int64(len(obj)), "x.o")
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	dwo.Warn = func(msg string) { said = append(said, msg) }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := NewWithDWO(ef, nil, dwo)
	if err != nil {
		t.Fatalf("the object with its skeleton: %v", err)
	}
	defer s.Close()
	var buf []Frame
	inline := 0
	for _, sec := range ef.Sections {
		if sec.Executable() {
			for a := sec.Addr; a < sec.Addr+sec.Size; a += 3 {
				if buf = s.AppendFrames(buf[:0], a); len(buf) > 1 {
					inline++
				}
			}
		}
	}
	runtime.ReadMemStats(&after)
	if real && (inline == 0 || len(said) > 0) {
		t.Fatalf("the real %s: %d addresses with inline frames, %q said; want some and nothing", name, inline, said)
	}
	if alloc, limit := after.TotalAlloc-before.TotalAlloc, 256*uint64(n+len(obj))+64<<20; alloc > limit {
		t.Fatalf("allocated %d bytes for a %d-byte input, want at most %d", alloc, n, limit)
	}
	for _, msg := range said {
		if !strings.Contains(msg, name) {
			t.Fatalf("%q does not name the file", msg)
		}
	}
}

// FuzzDWO indexes arbitrary input as the split DWARF file of a real
// skeleton unit (clang-19 -gsplit-dwarf -c of testdata/src/inline.cc,
// whose .dwo is the seed): see fuzzSplit.
func FuzzDWO(f *testing.F) {
	obj, dwo, _ := splitObject(f, false)
	dir := f.TempDir()
	f.Add(dwo)
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(dir, "fuzz.dwo")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzSplit(t, obj, &DWO{Open: func(SplitUnit) (*os.File, error) { return os.Open(name) }},
			"fuzz.dwo", len(data), bytes.Equal(data, dwo))
	})
}

// FuzzDWP indexes arbitrary input as the DWARF package of the same
// object (llvm-dwp-19's of its .dwo is the seed): its index, the parts
// it gives the unit, and the strings they name; see fuzzSplit.
func FuzzDWP(f *testing.F) {
	obj, _, dwp := splitObject(f, true)
	f.Add(dwp)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSplit(t, obj, &DWO{
			Open: func(SplitUnit) (*os.File, error) { return nil, nil }, // no .dwo
			Package: func() (*elfrel.File, error) {
				return elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.dwp")
			},
		}, "fuzz.dwp", len(data), bytes.Equal(data, dwp))
	})
}

// lookUpSectionEnds asks s for the frames of the first and last byte of
// each allocated section of ef (whatever the input, the lookups must
// not fail) and returns the buffer it used.
func lookUpSectionEnds(s *Symbolizer, ef *elfrel.File) []Frame {
	var buf []Frame
	for _, sec := range ef.Sections {
		if sec.Flags&elf.SHF_ALLOC != 0 {
			buf = s.AppendFrames(buf[:0], sec.Addr)
			buf = s.AppendFrames(buf[:0], sec.Addr+sec.Size-1)
		}
	}
	return buf
}
