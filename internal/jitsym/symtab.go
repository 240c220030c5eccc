package jitsym

import (
	"cmp"
	"debug/elf"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// buildSymbols indexes the ELF symbols that name code or data, choosing
// them as llvm-symbolizer 14 does (SymbolizableObjectFile::addSymbol):
// types STT_NOTYPE, STT_FUNC, STT_OBJECT and STT_GNU_IFUNC, defined in a
// section, excluding the ones elfrel.MarkerSymbol names. Unlike it, only
// symbols in SHF_ALLOC sections are kept, since others have no run-time
// address.
//
// Sorted by address and then size, several symbols at one address keep
// only the last, which is the largest (llvm: "pick the one with the
// largest Size"); a symbol of size 0 extends to the next symbol, or to the
// end of its section. A local symbol remembers the last STT_FILE symbol
// before it, whose name llvm-symbolizer prints as the file of a frame
// that DWARF gives no file for.
//
// A function symbol at a 64-bit PowerPC ELFv1 function descriptor (a key
// of opd) names the code the descriptor points to.
//
// It reads the symbol table a chunk at a time, twice: once to count the
// candidates, once to collect them; the names it keeps are copied into
// one string, Symbolizer.symNames.
func (s *Symbolizer) buildSymbols(f *elfrel.File, each func(names bool, fn func(int, *elfrel.Symbol) error) error, opd map[uint64]uint64) error {
	wanted := func(sym *elfrel.Symbol) bool {
		switch sym.Type() {
		case elf.STT_NOTYPE, elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
			return sym.Section != 0 && f.Sections[sym.Section].Flags&elf.SHF_ALLOC != 0
		}
		return false
	}
	n := 0
	err := each(false, func(i int, sym *elfrel.Symbol) error {
		if i > 0 && wanted(sym) {
			n++
		}
		return nil
	})
	if err != nil || n == 0 {
		return err
	}

	cs := make([]cand, 0, n)
	lastFile := int32(-1)
	err = each(true, func(i int, sym *elfrel.Symbol) error {
		if i == 0 {
			return nil
		}
		if sym.Type() == elf.STT_FILE && sym.Section == 0 {
			if n := len(s.symFile); n == 0 || s.symFile[n-1] != sym.Name {
				s.symFile = append(s.symFile, strings.Clone(sym.Name)) // not a part of the whole string table
			}
			lastFile = int32(len(s.symFile) - 1)
			return nil
		}
		if !wanted(sym) || len(cs) == cap(cs) {
			return nil
		}
		if elfrel.MarkerSymbol(f.Machine, sym.Name) {
			return nil
		}
		c := cand{addr: f.CodeAddr(sym), size: sym.Size, name: sym.Name, index: int32(i), file: -1}
		code, isDesc := opd[c.addr]
		if isDesc && (sym.Type() == elf.STT_FUNC || sym.Type() == elf.STT_GNU_IFUNC) {
			c.addr = code // ELFv1: the symbol is the function's (or resolver's) descriptor
		}
		c.end = c.addr + c.size
		if c.size == 0 {
			if isDesc {
				c.end = 0 // up to the next symbol
			} else if f.Type == elf.ET_REL {
				sec := &f.Sections[sym.Section]
				c.end = sec.Addr + sec.Size
			} else {
				c.end = 0 // up to the next symbol: set below
			}
		}
		if c.end < c.addr { // wrapped around
			c.end = ^uint64(0)
		}
		if sym.Bind() == elf.STB_LOCAL {
			c.file = lastFile
		}
		cs = append(cs, c)
		return nil
	})
	if err != nil {
		return err
	}
	return s.setSymbols(f.Name, cs)
}

// cand is a symbol buildSymbols or buildForeignSymbols keeps.
type cand struct {
	addr, size, end uint64
	name            string
	index           int32 // in the symbol table: the last of equals wins
	file            int32 // Symbolizer.symFile index of the STT_FILE name before a local one, or -1
}

// setSymbols sorts cs and fills s's symbol index with them, keeping the
// last (largest) of each address; an end of 0 with a size of 0 extends to
// the next symbol.
func (s *Symbolizer) setSymbols(file string, cs []cand) error {
	// By address, then size, then index: stable sorts by index, size and
	// address, in that order (the callers give them by index, mostly).
	buf := make([]cand, len(cs))
	if !slices.IsSortedFunc(cs, func(a, b cand) int { return cmp.Compare(a.index, b.index) }) {
		radixSort(cs, buf, func(c *cand) uint64 { return uint64(c.index) })
	}
	radixSort(cs, buf, func(c *cand) uint64 { return c.size })
	radixSort(cs, buf, func(c *cand) uint64 { return c.addr })
	// Keep the last of each address, counting them and their names' bytes.
	n, size := 0, 0
	for i := range cs {
		if i+1 == len(cs) || cs[i+1].addr != cs[i].addr {
			cs[n] = cs[i]
			n++
			size += len(cs[i].name) + 1
		}
	}
	cs = cs[:n]
	for i := range cs {
		if cs[i].end == 0 && cs[i].size == 0 {
			cs[i].end = ^uint64(0)
			if i+1 < len(cs) {
				cs[i].end = cs[i+1].addr
			}
		}
	}
	s.syms = make([]symbol, n)
	s.symAddr = make([]uint64, n)
	for i, c := range cs {
		s.syms[i] = symbol{end: c.end, file: c.file}
		s.symAddr[i] = c.addr
	}
	if size > copyNamesBelow && size > 2*nameSpan(cs) {
		return s.shareNames(file, cs)
	}
	var names strings.Builder
	names.Grow(size)
	for i, c := range cs {
		s.syms[i].name = uint32(names.Len())
		names.WriteString(c.name)
		names.WriteByte(0)
	}
	s.symNames = names.String()
	return nil
}

// copyNamesBelow is the size of the symbols' names below which each is
// copied into Symbolizer.symNames as it comes; above it, and above twice
// the memory the names span (nameSpan), shareNames writes the bytes
// that several share once.
const copyNamesBelow = 16 << 20

// nameSpan returns how many bytes of memory the names of cs span, from
// the first byte of the lowest to the end of the highest. The names of a
// symbol table read by package elfrel are parts of one string, its
// string table: when they add up to much more than they span, they share
// bytes. (Names of different strings span whatever lies between them:
// they are copied as they come.)
func nameSpan(cs []cand) int {
	lo, hi := ^uintptr(0), uintptr(0)
	for i := range cs {
		if name := cs[i].name; name != "" {
			p := uintptr(unsafe.Pointer(unsafe.StringData(name)))
			lo, hi = min(lo, p), max(hi, p+uintptr(len(name)))
		}
	}
	if hi < lo {
		return 0
	}
	return int(hi - lo)
}

// shareNames fills s.symNames with the names of cs, the symbols of
// s.syms, writing once the names that end at the same byte of memory: a
// string table's name that several symbols name, or whose tail another
// names, as linkers share tails. Each name of a symbol table read by
// package elfrel is a part of one copy of its string table, so the names
// take at most that table, however many symbols name the same bytes
// (1,000,000 symbols, each of its own address, naming one string of
// 4 KiB took 4 GB when each was copied). Names of other readers (copies
// of their own) are written as they are.
func (s *Symbolizer) shareNames(file string, cs []cand) error {
	// The address of the byte after a name, and 0 for an empty one.
	end := func(i int32) uintptr {
		name := cs[i].name
		if name == "" {
			return 0
		}
		return uintptr(unsafe.Pointer(unsafe.StringData(name))) + uintptr(len(name))
	}
	order := make([]int32, len(cs))
	for i := range order {
		order[i] = int32(i)
	}
	// By end, the longest name of each end first.
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(end(a), end(b)), cmp.Compare(len(cs[b].name), len(cs[a].name)))
	})
	size := 0
	for k := range order {
		if k == 0 || end(order[k]) != end(order[k-1]) {
			size += len(cs[order[k]].name) + 1
		}
	}
	if size > math.MaxUint32 {
		return &elfrel.UnsupportedError{File: file, Msg: "symbol names of 4 GiB or more"}
	}
	var names strings.Builder
	names.Grow(size)
	for k, i := range order {
		if k == 0 || end(i) != end(order[k-1]) {
			names.WriteString(cs[i].name)
			names.WriteByte(0)
		}
		// A suffix of the name written last, ending at its NUL.
		s.syms[i].name = uint32(names.Len() - 1 - len(cs[i].name))
	}
	s.symNames = names.String()
	return nil
}

// symbolName returns the name of sym.
func (s *Symbolizer) symbolName(sym *symbol) string {
	name := s.symNames[sym.name:]
	return name[:strings.IndexByte(name, 0)]
}
