package elfrel

import (
	"debug/elf"
	"strings"
)

// A Symbol is one entry of the symbol table.
type Symbol struct {
	Name  string
	Info  byte // st_info: binding in the high 4 bits, type in the low 4
	Other byte // st_other
	// Section is the index of the section the symbol is defined in, with
	// SHN_XINDEX resolved through SHT_SYMTAB_SHNDX; 0 when Shndx is
	// SHN_UNDEF or a reserved index (SHN_ABS, SHN_COMMON, ...).
	Section int
	Shndx   elf.SectionIndex // st_shndx as stored
	Value   uint64           // st_value: an offset in Section, in a relocatable object
	Size    uint64           // st_size
}

// Type returns the symbol type (elf.STT_FUNC, ...).
func (s *Symbol) Type() elf.SymType { return elf.ST_TYPE(s.Info) }

// Bind returns the symbol binding (elf.STB_LOCAL, ...).
func (s *Symbol) Bind() elf.SymBind { return elf.ST_BIND(s.Info) }

// MarkerSymbol reports whether a symbol named name in an object of machine
// m marks something other than a function or data, so that symbolizers
// skip it: the mapping symbols of ARM ($a, $t, $d), AArch64 ($x, $d) and
// RISC-V ($x, $d), which say where instructions and data begin, which
// LLVM's ELF reader flags SF_FormatSpecific and llvm-symbolizer leaves
// out; and the assembler's local labels (.LBB0_2, .Lpcrel_hi0, ".L0 ",
// or unnamed before LLVM 17) that RISC-V and LoongArch objects keep
// because linker relaxation makes their relocations name them.
// llvm-symbolizer 14 names a frame after such a label (".LBB2_3" for the
// loop of main), 19 names it nothing; the function holding it is the
// name wanted.
func MarkerSymbol(m elf.Machine, name string) bool {
	switch m {
	case elf.EM_ARM:
		return strings.HasPrefix(name, "$a") || strings.HasPrefix(name, "$t") || strings.HasPrefix(name, "$d")
	case elf.EM_AARCH64:
		return strings.HasPrefix(name, "$x") || strings.HasPrefix(name, "$d")
	case elf.EM_RISCV:
		return name == "" || strings.HasPrefix(name, ".L") || strings.HasPrefix(name, "$x") || strings.HasPrefix(name, "$d")
	case elf.EM_LOONGARCH:
		return name == "" || strings.HasPrefix(name, ".L")
	}
	return false
}

// Symbols returns the symbol table (the first SHT_SYMTAB section). Unlike
// debug/elf, it keeps the null symbol at index 0, so that Symbols()[i] is
// the symbol a relocation's symbol index i refers to. An object without a
// symbol table has no symbols and no error. The table is decoded once and
// shared with later calls and with DWARF: callers must not modify it.
func (f *File) Symbols() ([]Symbol, error) {
	for i := 1; i < len(f.Sections); i++ {
		if f.Sections[i].Type == elf.SHT_SYMTAB {
			return f.symbolsAt(i)
		}
	}
	return nil, nil
}

// symbolsAt returns the decoded symbol table in section i, decoding it
// the first time.
func (f *File) symbolsAt(i int) ([]Symbol, error) {
	f.symMu.Lock()
	defer f.symMu.Unlock()
	if f.symIndex == i && (f.syms != nil || f.symErr != nil) {
		return f.syms, f.symErr
	}
	syms, err := f.decodeSymbols(i)
	if f.symIndex == 0 { // cache the first table asked for: in practice the only one
		f.symIndex, f.syms, f.symErr = i, syms, err
	}
	return syms, err
}

// EachSymbol calls fn for every entry of the symbol table (the first
// SHT_SYMTAB section) in order, from the null symbol at index 0, so that k
// is the index a relocation uses; it stops at the first error, from fn or
// from decoding, and returns it. An object without a symbol table has no
// symbols and no error. Unlike [File.Symbols] it decodes a chunk of
// entries at a time and keeps nothing: a caller that needs a few of the
// symbols holds only those (and the string table, which the names are
// substrings of). *s is reused for the next entry: copy what you keep.
// Without names, Name is "" and the string table is not read (nor are
// the name offsets checked).
func (f *File) EachSymbol(names bool, fn func(k int, s *Symbol) error) error {
	for i := 1; i < len(f.Sections); i++ {
		if f.Sections[i].Type == elf.SHT_SYMTAB {
			return f.scanSymbols(i, names, fn)
		}
	}
	return nil
}

// EachDynamicSymbol is [File.EachSymbol] for the dynamic symbol table
// (the first SHT_DYNSYM section), which is all a stripped executable or
// shared library has left.
func (f *File) EachDynamicSymbol(names bool, fn func(k int, s *Symbol) error) error {
	for i := 1; i < len(f.Sections); i++ {
		if f.Sections[i].Type == elf.SHT_DYNSYM {
			return f.scanSymbols(i, names, fn)
		}
	}
	return nil
}

// HasSymbols reports whether f has a symbol table (SHT_SYMTAB).
func (f *File) HasSymbols() bool {
	for i := 1; i < len(f.Sections); i++ {
		if f.Sections[i].Type == elf.SHT_SYMTAB {
			return true
		}
	}
	return false
}

// decodeSymbols decodes the symbol table in section i.
func (f *File) decodeSymbols(i int) ([]Symbol, error) {
	var syms []Symbol
	err := f.scanSymbols(i, true, func(k int, s *Symbol) error {
		if syms == nil {
			syms = make([]Symbol, f.Sections[i].Size/f.lay.sym) // validated by scanSymbols
		}
		syms[k] = *s
		return nil
	})
	if err != nil {
		return nil, err
	}
	if syms == nil {
		syms = []Symbol{}
	}
	return syms, nil
}

// symbolChunk is how many symbol table entries scanSymbols reads at a time.
const symbolChunk = 4096

// scanSymbols decodes the symbol table in section i a chunk at a time and
// calls fn for each entry, in order; without names, it leaves Name empty
// and does not read the string table.
func (f *File) scanSymbols(i int, names bool, fn func(k int, s *Symbol) error) error {
	st := &f.Sections[i]
	if st.Type != elf.SHT_SYMTAB && st.Type != elf.SHT_DYNSYM {
		return f.formatErr(st.Name, -1, "section %d has type %v, want SHT_SYMTAB", i, st.Type)
	}
	entSize := f.lay.sym
	if st.Entsize != entSize || st.Size%entSize != 0 {
		return f.formatErr(st.Name, -1, "symbol table entry size %d and size %d, want entries of %d bytes", st.Entsize, st.Size, entSize)
	}
	strs := &f.Sections[st.Link]
	if strs.Type != elf.SHT_STRTAB {
		return f.formatErr(st.Name, -1, "string table %d has type %v, want SHT_STRTAB", st.Link, strs.Type)
	}
	strtab := newStrTable("") // one allocation; names are substrings of it
	if names {
		s, err := f.sectionString(int(st.Link))
		if err != nil {
			return err
		}
		strtab = newStrTable(s)
	}
	n := int(st.Size / entSize)
	var xindex []byte // SHT_SYMTAB_SHNDX contents, read when first needed
	size := int(entSize)
	buf := make([]byte, min(n, symbolChunk)*size)
	bo := f.ByteOrder
	// Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name,
	// value, size, info, other, shndx.
	info, value, shndxAt := 4, 8, 6
	if f.lay.word == 4 {
		info, value, shndxAt = 12, 4, 14
	}
	var s Symbol
	for lo := 0; lo < n; lo += symbolChunk {
		chunk := buf[:min(n-lo, symbolChunk)*size]
		if _, err := f.r.ReadAt(chunk, int64(st.Offset)+int64(lo*size)); err != nil {
			return &FormatError{File: f.Name, Section: st.Name, Off: int64(lo * size), Msg: "cannot read symbols", Err: err}
		}
		for j := 0; j < len(chunk); j += size {
			k, b := lo+j/size, chunk[j:j+size]
			s = Symbol{Info: b[info], Other: b[info+1], Value: f.word(b[value:]), Size: f.word(b[value+int(f.lay.word):])}
			if nameOff := bo.Uint32(b); nameOff != 0 && names {
				name, ok := strtab.at(nameOff)
				if !ok {
					return f.formatErr(st.Name, int64(k*size), "symbol %d name offset %#x is outside string table %s (%d bytes) or unterminated", k, nameOff, strs.Name, len(strtab.s))
				}
				s.Name = name
			}
			shndx := uint32(bo.Uint16(b[shndxAt:]))
			s.Shndx = elf.SectionIndex(shndx)
			switch {
			case shndx == shnXindex:
				if xindex == nil {
					var err error
					if xindex, err = f.xindexFor(i, n); err != nil {
						return err
					}
				}
				shndx = bo.Uint32(xindex[k*4:])
				if shndx == 0 || shndx >= uint32(len(f.Sections)) {
					return f.formatErr(st.Name, int64(k*size), "symbol %d extended section index %d out of range (%d sections)", k, shndx, len(f.Sections))
				}
			case shndx >= uint32(elf.SHN_LORESERVE):
				shndx = 0 // SHN_ABS, SHN_COMMON and other reserved indexes
			case shndx >= uint32(len(f.Sections)):
				return f.formatErr(st.Name, int64(k*size), "symbol %d section index %d out of range (%d sections)", k, shndx, len(f.Sections))
			}
			s.Section = int(shndx)
			if err := fn(k, &s); err != nil {
				return err
			}
		}
	}
	return nil
}

// xindexFor returns the SHT_SYMTAB_SHNDX contents for the n-entry symbol
// table in section symtab.
func (f *File) xindexFor(symtab, n int) ([]byte, error) {
	for i := 1; i < len(f.Sections); i++ {
		s := &f.Sections[i]
		if s.Type != elf.SHT_SYMTAB_SHNDX || int(s.Link) != symtab {
			continue
		}
		if s.Size/4 < uint64(n) {
			return nil, f.formatErr(s.Name, -1, "extended section index table has %d entries for %d symbols", s.Size/4, n)
		}
		return f.SectionData(i)
	}
	return nil, f.formatErr(f.Sections[symtab].Name, -1, "a symbol uses SHN_XINDEX but there is no SHT_SYMTAB_SHNDX section")
}

// CodeAddr returns where the function or data symbol s starts:
// [File.SymbolAddr] as [StartAddr] gives it.
func (f *File) CodeAddr(s *Symbol) uint64 {
	return StartAddr(f.Machine, s.Type(), f.SymbolAddr(s))
}

// StartAddr returns where a symbol of type t whose value is addr starts,
// in an object of machine m: addr without the Thumb bit that an ARM
// function's value carries (as LLVM's ELF reader gives it, and objdump).
func StartAddr(m elf.Machine, t elf.SymType, addr uint64) uint64 {
	if m == elf.EM_ARM && t == elf.STT_FUNC {
		return addr &^ 1
	}
	return addr
}

// SymbolAddr returns the address a relocation against s resolves to, S
// in the psABI formulas: s.Value plus the load address (sh_addr) of its
// section when that section is SHF_ALLOC, else s.Value alone. In an
// executable or shared library, whose symbol values are addresses
// already, it is s.Value.
//
// Why only SHF_ALLOC: RuntimeDyld writes a load address into sh_addr for
// the sections it loaded, which are the SHF_ALLOC ones, and leaves the
// others (.debug_*) at 0, so for them both readings agree. But a host that
// loads every section (RuntimeDyld's ProcessAllSections) also gives
// .debug_str, .debug_line and .debug_abbrev a non-zero sh_addr, and DWARF
// refers into those sections by offset, never by address. A worked example:
// .debug_info holds R_X86_64_32 .debug_str+0x2a for a DW_FORM_strp name.
// With .debug_str at sh_addr 0, S+A = 0+0+0x2a either way. With .debug_str
// at sh_addr 0x500000, llvm-symbolizer 14 (which adds sh_addr for every
// section) computes 0x50002a, past the end of .debug_str, and prints
// "??:0:0" (its abbreviation offsets break the same way: "invalid
// abbreviation set offset 0x600000"); this function gives 0x2a. A
// .text._Z3fooi section loaded at 0x7f0000104000 makes R_X86_64_64
// .text._Z3fooi+0x10 resolve to 0x7f0000104010 here and there.
func (f *File) SymbolAddr(s *Symbol) uint64 {
	if f.Type != elf.ET_REL {
		return s.Value // executables and shared libraries: an address already
	}
	if i := s.Section; i > 0 && i < len(f.Sections) && f.Sections[i].Flags&elf.SHF_ALLOC != 0 {
		return f.Sections[i].Addr + s.Value
	}
	return s.Value
}
