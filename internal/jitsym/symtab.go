package jitsym

import (
	"cmp"
	"debug/elf"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// buildSymbols indexes the ELF symbols that name code or data, choosing
// them as llvm-symbolizer 14 does (SymbolizableObjectFile::addSymbol):
// types STT_NOTYPE, STT_FUNC, STT_OBJECT and STT_GNU_IFUNC, defined in a
// section, excluding AArch64 mapping symbols ($x, $d). Unlike it, only
// symbols in SHF_ALLOC sections are kept, since others have no run-time
// address.
//
// Sorted by address and then size, several symbols at one address keep
// only the last, which is the largest (llvm: "pick the one with the
// largest Size"); a symbol of size 0 extends to the next symbol, or to the
// end of its section. A local symbol remembers the last STT_FILE symbol
// before it, whose name llvm-symbolizer prints as the file of a frame
// that DWARF gives no file for.
func (s *Symbolizer) buildSymbols(f *elfrel.File) error {
	all, err := f.Symbols()
	if err != nil {
		return err
	}
	type cand struct {
		addr, size uint64
		index      int32 // in the symbol table: the last of equals wins
		file       int32 // index of the STT_FILE symbol before a local one, or -1
	}
	var cs []cand
	lastFile := int32(-1)
	for i := 1; i < len(all); i++ {
		sym := &all[i]
		if sym.Type() == elf.STT_FILE && sym.Section == 0 {
			lastFile = int32(i)
			continue
		}
		switch sym.Type() {
		case elf.STT_NOTYPE, elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
		default:
			continue
		}
		if sym.Section == 0 {
			continue
		}
		sec := &f.Sections[sym.Section]
		if sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if f.Machine == elf.EM_AARCH64 && (strings.HasPrefix(sym.Name, "$x") || strings.HasPrefix(sym.Name, "$d")) {
			continue
		}
		c := cand{addr: f.SymbolAddr(sym), size: sym.Size, index: int32(i), file: -1}
		if sym.Bind() == elf.STB_LOCAL {
			c.file = lastFile
		}
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if c := cmp.Compare(a.size, b.size); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	s.syms = make([]symbol, 0, len(cs))
	for i, c := range cs {
		if i+1 < len(cs) && cs[i+1].addr == c.addr {
			continue // a larger symbol at the same address follows
		}
		sym := &all[c.index]
		end := c.addr + c.size
		if c.size == 0 {
			sec := &f.Sections[sym.Section]
			end = sec.Addr + sec.Size
		}
		if end < c.addr { // wrapped around
			end = ^uint64(0)
		}
		file := ""
		if c.file >= 0 {
			file = all[c.file].Name
		}
		s.syms = append(s.syms, symbol{addr: c.addr, end: end, name: sym.Name, file: file})
		s.symAddr = append(s.symAddr, c.addr)
	}
	return nil
}
