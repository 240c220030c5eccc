package jitsym

import (
	"encoding/binary"
	"iter"
	"math"
	"runtime"
	"slices"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// Sections supplies an object's DWARF sections by their ELF names
// (".debug_info", ".debug_line", ...), as *elfrel.DebugLoader does for an
// ELF file. It is the seam through which other containers (Mach-O, PE,
// 32-bit ELF) feed the one DWARF decoder.
type Sections interface {
	// Size returns the size of the named section once loaded, or 0 if
	// the object has none.
	Size(name string) uint64
	// Section returns the contents of the named section, or nil and no
	// error if the object has none. Errors name the file.
	Section(name string) ([]byte, error)
}

var _ Sections = (*elfrel.DebugLoader)(nil)

// A Sym is a symbol of an object that is not a 64-bit ELF file: a name for
// the addresses [Addr, Addr+Size). A Size of 0 extends it to the next
// symbol.
type Sym struct {
	Name       string
	Addr, Size uint64
	// File is the source file llvm-symbolizer prints for the symbol
	// when DWARF gives none: for a local ELF symbol, the STT_FILE symbol
	// before it. "" if none.
	File string
}

// NewFromSections builds the index of an object of another container
// format, named name, from its DWARF sections (nil if it has none) and
// its symbols, whose order does not matter; of several at one address,
// the largest, then the last, is kept. Multi-byte DWARF values are read in
// byte order bo. The Symbolizer keeps no reference to sections or syms.
func NewFromSections(name string, bo binary.ByteOrder, sections Sections, syms []Sym) (*Symbolizer, error) {
	return NewFromSectionsWithSup(name, bo, sections, syms, nil)
}

// NewFromSectionsWithSup is [NewFromSections] for DWARF that refers to
// the supplementary file sup (see [Sup]); a nil sup is none.
func NewFromSectionsWithSup(name string, bo binary.ByteOrder, sections Sections, syms []Sym, sup *Sup) (*Symbolizer, error) {
	return NewFromSeq(name, bo, sections, slices.Values(syms), len(syms), sup)
}

// NewFromSeq is [NewFromSectionsWithSup] with the symbols that syms
// yields, about n of them, ranged over once: a caller with millions of
// symbols need not hold them all.
func NewFromSeq(name string, bo binary.ByteOrder, sections Sections, syms iter.Seq[Sym], n int, sup *Sup) (*Symbolizer, error) {
	s := &Symbolizer{name: name}
	cs := make([]cand, 0, max(n, 0))
	i := -1
	for sym := range syms {
		if i++; i > math.MaxInt32 {
			break
		}
		c := cand{addr: sym.Addr, size: sym.Size, name: sym.Name, index: int32(i), file: -1}
		c.end = c.addr + c.size
		if c.end < c.addr {
			c.end = ^uint64(0)
		}
		if c.size == 0 {
			c.end = 0 // up to the next symbol
		}
		if sym.File != "" {
			if n := len(s.symFile); n == 0 || s.symFile[n-1] != sym.File {
				s.symFile = append(s.symFile, sym.File)
			}
			c.file = int32(len(s.symFile) - 1)
		}
		cs = append(cs, c)
	}
	if len(cs) > 0 {
		if err := s.setSymbols(name, cs); err != nil {
			return nil, err
		}
	}
	if sections == nil || sections.Size(".debug_info") == 0 {
		return s, nil
	}
	b := newBuilder(s, bo, sections, false, runtime.GOMAXPROCS(0), minWalkBytes)
	b.sup = sup
	return s.built(b.run())
}
