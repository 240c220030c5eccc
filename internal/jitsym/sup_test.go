package jitsym

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// dwzBinary builds testdata/src/inline.cc and a main with g++ -O2 -g
// twice and has dwz move what the two share into a supplementary file:
// one binary and that file.
func dwzBinary(t testing.TB) (bin, sup []byte) {
	gxx := testenv.Tool(t, "g++", "g++")
	dwz := testenv.Tool(t, "dwz", "dwz")
	dir := t.TempDir()
	src, err := filepath.Abs("testdata/src/inline.cc")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.cc"), []byte("int main() { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, dir, gxx, "-O2", "-g", "-o", "x", src, "main.cc")
	testenv.Run(t, dir, "cp", "x", "y")
	testenv.Run(t, dir, dwz, "-m", "x.sup", "-M", "x.sup", "x", "y")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read("x"), read("x.sup")
}

// supFrames indexes bin with the supplementary file data (called
// fuzz.sup; whatever its ID, the link asks for it) and looks up every
// third byte of its code. It returns how many frames of inline chains
// are unnamed (the real file names them all) and what was said. The index must be built whatever data holds, and
// without allocating much more than the input warrants.
func supFrames(t *testing.T, bin, data []byte) (unnamed int, said []string) {
	t.Helper()
	ef, err := elfrel.NewFile(bytes.NewReader(bin), int64(len(bin)), "x")
	if err != nil {
		t.Fatal(err)
	}
	links := Links{Sup: func(link elfrel.SupLink) (*Sup, error) {
		sf, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.sup")
		if err != nil {
			return nil, err
		}
		if link.ID, err = sf.SupID(); err != nil {
			return nil, err
		}
		return NewSup(sf, link)
	}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := NewWithLinks(ef, nil, links)
	if err != nil {
		t.Fatalf("the binary with its supplementary file: %v", err)
	}
	defer s.Close()
	var buf []Frame
	for _, sec := range ef.Sections {
		if !sec.Executable() {
			continue
		}
		for a := sec.Addr; a < sec.Addr+sec.Size; a += 3 {
			buf = s.AppendFrames(buf[:0], a)
			for _, f := range buf {
				if f.Func == "" && len(buf) > 1 {
					unnamed++
				}
			}
		}
	}
	runtime.ReadMemStats(&after)
	if alloc, limit := after.TotalAlloc-before.TotalAlloc, 256*uint64(len(data)+len(bin))+64<<20; alloc > limit {
		t.Fatalf("allocated %d bytes for a %d-byte input, want at most %d", alloc, len(data), limit)
	}
	for _, msg := range s.Warnings() {
		if !strings.Contains(msg, "fuzz.sup") {
			t.Fatalf("%q does not name the file", msg)
		}
	}
	return unnamed, s.Warnings()
}

// FuzzSup indexes a real binary (see dwzBinary) with arbitrary input as
// its supplementary file, whose real contents are the seed: see
// supFrames. With the real file, every frame is named and nothing said.
func FuzzSup(f *testing.F) {
	bin, sup := dwzBinary(f)
	f.Add(sup)
	f.Fuzz(func(t *testing.T, data []byte) {
		unnamed, said := supFrames(t, bin, data)
		if bytes.Equal(data, sup) && (unnamed > 0 || len(said) > 0) {
			t.Fatalf("the real file: %d frames unnamed, %q said; want none and nothing", unnamed, said)
		}
	})
}

// TestSupEntriesUnreadable: a supplementary file whose entries cannot be
// read (its abbreviations zeroed) costs the names it would give, said
// once, naming the binary and the file, and nothing else: the frames are
// otherwise those of the real file.
func TestSupEntriesUnreadable(t *testing.T) {
	bin, sup := dwzBinary(t)
	named, said := supFrames(t, bin, sup)
	if named != 0 || len(said) != 0 {
		t.Fatalf("the real file: %d frames unnamed, %q said", named, said)
	}
	f, err := elf.NewFile(bytes.NewReader(sup))
	if err != nil {
		t.Fatal(err)
	}
	abbrev := f.Section(".debug_abbrev")
	if abbrev == nil || abbrev.Size < 16 {
		t.Fatal("no .debug_abbrev")
	}
	bad := bytes.Clone(sup)
	clear(bad[abbrev.Offset : abbrev.Offset+abbrev.Size])
	unnamed, said := supFrames(t, bin, bad)
	if unnamed == 0 {
		t.Errorf("every frame named without the file's entries")
	}
	if len(said) != 1 || !strings.Contains(said[0], "x: some entries of its supplementary file cannot be read") {
		t.Errorf("said %q, want one warning naming x and fuzz.sup", said)
	}
}
