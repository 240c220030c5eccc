package objtool

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/membudget"
)

// newELF checks the ELF file of size bytes in r (see elfrel.CheckStd)
// and reads it with debug/elf. (Its symbol tables are read by
// elfSymbols, which copies no names.)
func newELF(r io.ReaderAt, size uint64) (*elf.File, error) {
	if err := elfrel.CheckStd(r, size); err != nil {
		return nil, err
	}
	return elf.NewFile(r)
}

// openELF reads the ELF file fd of size bytes at path: an executable or
// shared library that package elfrel does not read (32-bit, or of an
// unusual type).
func openELF(path string, fd *os.File, size uint64, o foreignOpts) (*foreignBin, error) {
	f, err := newELF(fd, size)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	if f.Type == elf.ET_REL {
		// Its DWARF would need relocating, which only elfrel does, for
		// the objects of the machines elfrel.Relocatable accepts.
		return nil, errNotForeign
	}
	b := &foreignBin{path: path, format: "ELF", closer: fd, elf: f, bo: f.ByteOrder, machine: f.Machine, class: f.Class,
		dwarf: map[string]rawSection{}, elfType: f.Type, progs: make([]elf.ProgHeader, len(f.Progs))}
	for i, p := range f.Progs {
		b.progs[i] = p.ProgHeader
	}
	var text *elf.Section
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 {
			b.code = append(b.code, rawSection{name: s.Name, addr: s.Addr, size: s.Size, data: s.Data, readAt: s.ReadAt})
		}
		if s.Name == ".text" && text == nil {
			text = s
		}
	}
	if b.dwarf, err = elfDWARF(path, f, fd, o.inflate); err != nil {
		return nil, err
	}
	if err := checkOverlap(path, b.dwarf, size); err != nil {
		return nil, err
	}
	if text != nil {
		b.textPH = textSegment(b.progs, text.Addr)
	}
	if id, err := elfrel.StdBuildID(f); err == nil && id != nil {
		b.buildID = fmt.Sprintf("%x", id)
	}
	b.goBin = gopclntab.StdBinary(path, f)
	if b.dwarf[".debug_info"].size == 0 {
		b.addELFDebugFile(f, o)
	} else {
		b.sup, b.hasSup = elfrel.StdSupLink(f)
		b.dwarfPath = path
	}
	table := elf.SHT_SYMTAB
	if s := f.SectionByType(elf.SHT_SYMTAB); s == nil || s.Size <= symSize(f.Class) {
		table, b.dynOnly = elf.SHT_DYNSYM, true
	}
	// One pass now, for what a 32-bit ARM file's symbols say of its code
	// and to find errors; then one for the index and one for Symbols, if
	// asked (see foreignBin.symbols).
	var arm armMarks
	each := func(yield func(jitsym.Sym) bool) error {
		file := "" // the last STT_FILE symbol's name
		return elfSymbols(f, table, func(s elfSym) bool {
			sym, ok := elfSymbol(f, s, &file)
			return !ok || yield(sym)
		})
	}
	err = elfSymbols(f, table, func(s elfSym) bool {
		if f.Machine == elf.EM_ARM && s.shndx > elf.SHN_UNDEF && int(s.shndx) < len(f.Sections) && s.shndx < elf.SHN_LORESERVE {
			arm.add(int(s.shndx), s.name, elf.ST_TYPE(s.info), s.value)
		}
		return true
	})
	if err == nil {
		err = each(func(jitsym.Sym) bool { b.nsyms++; return true })
	}
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("error reading ELF file %s: %w", path, err)
	}
	b.symSeq = func(yield func(jitsym.Sym) bool) { each(yield) }
	if f.Machine == elf.EM_ARM {
		b.arm = map[uint64]*armSection{}
		for i, as := range arm.sections() {
			b.arm[f.Sections[i].Addr] = as
		}
	}
	if f.Machine == elf.EM_MIPS {
		b.flags = elfFlags(fd, f)
	}
	b.sortCode()
	return b, nil
}

// elfSymbol returns the symbol of the ELF file f that s is, and true, if
// it names code or data (an STT_FILE symbol sets *file, the file of the
// local symbols after it).
func elfSymbol(f *elf.File, s elfSym, file *string) (jitsym.Sym, bool) {
	typ := elf.ST_TYPE(s.info)
	switch typ {
	case elf.STT_FILE:
		*file = s.name
		return jitsym.Sym{}, false
	case elf.STT_NOTYPE, elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
	default:
		return jitsym.Sym{}, false
	}
	if s.shndx == elf.SHN_UNDEF || s.shndx >= elf.SHN_LORESERVE || int(s.shndx) >= len(f.Sections) ||
		f.Sections[s.shndx].Flags&elf.SHF_ALLOC == 0 {
		return jitsym.Sym{}, false
	}
	if elfrel.MarkerSymbol(f.Machine, s.name) {
		return jitsym.Sym{}, false
	}
	sym := jitsym.Sym{Name: s.name, Addr: elfrel.StartAddr(f.Machine, typ, s.value), Size: s.size}
	if elf.ST_BIND(s.info) == elf.STB_LOCAL {
		sym.File = *file
	}
	return sym, true
}

// symSize is the size of a symbol table entry of class c.
func symSize(c elf.Class) uint64 {
	if c == elf.ELFCLASS64 {
		return 24
	}
	return 16
}

// elfSym is one entry of an ELF symbol table.
type elfSym struct {
	name        string
	value, size uint64
	info        byte
	shndx       elf.SectionIndex
}

// elfSymbols calls fn with each entry of f's first symbol table of type
// typ (SHT_SYMTAB or SHT_DYNSYM) but the first (the null symbol), as
// debug/elf's Symbols and DynamicSymbols list them, until fn returns
// false, or returns elf.ErrNoSymbols if it has none. Unlike them, it holds one entry at a
// time and copies no name: names are parts of one copy of the string
// table, found by a binary search of its NULs, however many symbols name
// the same bytes. (debug/elf took 1.8 GB for the 5,000,000 symbols of a
// 124 MB file, and 4.6 GB for 1,000,000 symbols naming one string of
// 4 KiB.)
func elfSymbols(f *elf.File, typ elf.SectionType, fn func(elfSym) bool) error {
	s := f.SectionByType(typ)
	if s == nil {
		return elf.ErrNoSymbols
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 || s.Link == 0 || int(s.Link) >= len(f.Sections) ||
		f.Sections[s.Link].Flags&elf.SHF_COMPRESSED != 0 || f.Sections[s.Link].Type == elf.SHT_NOBITS {
		return fmt.Errorf("symbol table %s: no string table it can use", s.Name)
	}
	entSize := symSize(f.Class)
	if s.Size%entSize != 0 {
		return fmt.Errorf("symbol table %s: %d bytes, not a multiple of %d", s.Name, s.Size, entSize)
	}
	strData, err := f.Sections[s.Link].Data()
	if err != nil {
		return fmt.Errorf("string table %s: %w", f.Sections[s.Link].Name, err)
	}
	strs := string(strData)
	var nuls []uint32
	for i := 0; i < len(strs); i++ {
		if strs[i] == 0 {
			nuls = append(nuls, uint32(i))
		}
	}
	nameAt := func(off uint32) string {
		k, _ := slices.BinarySearch(nuls, off)
		if k == len(nuls) || int(off) >= len(strs) {
			return "" // no NUL ends it: debug/elf gives no name either
		}
		return strs[off:nuls[k]]
	}
	bo := f.ByteOrder
	buf := make([]byte, 4096*entSize)
	for off := entSize; off < s.Size; {
		chunk := buf[:min(uint64(len(buf)), s.Size-off)]
		if _, err := s.ReadAt(chunk, int64(off)); err != nil {
			return fmt.Errorf("symbol table %s: %w", s.Name, err)
		}
		for e := chunk; len(e) > 0; e = e[entSize:] {
			var sym elfSym
			if f.Class == elf.ELFCLASS64 {
				sym = elfSym{name: nameAt(bo.Uint32(e)), info: e[4], shndx: elf.SectionIndex(bo.Uint16(e[6:])), value: bo.Uint64(e[8:]), size: bo.Uint64(e[16:])}
			} else {
				sym = elfSym{name: nameAt(bo.Uint32(e)), value: uint64(bo.Uint32(e[4:])), size: uint64(bo.Uint32(e[8:])), info: e[12], shndx: elf.SectionIndex(bo.Uint16(e[14:]))}
			}
			if !fn(sym) {
				return nil
			}
		}
		off += uint64(len(chunk))
	}
	return nil
}

// elfFlags returns the e_flags of the ELF file f, read from r, which
// package debug/elf does not give; 0 if it cannot be read.
func elfFlags(r io.ReaderAt, f *elf.File) uint32 {
	off := int64(36) // after e_entry, e_phoff and e_shoff
	if f.Class == elf.ELFCLASS64 {
		off = 48
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return 0
	}
	return f.ByteOrder.Uint32(b[:])
}

// elfDWARF returns the DWARF sections of the ELF file f at path, by
// name. A compressed one (SHF_COMPRESSED, zlib or Zstandard, or a GNU
// .zdebug_ section) is decompressed when the index reads it, after the
// size its header claims is checked against what its compressed bytes
// can hold (see maxInflate) and taken from inflate: 3 MB of zlib can
// hold 3 GB of zeros.
func elfDWARF(path string, f *elf.File, r io.ReaderAt, inflate *membudget.Budget) (map[string]rawSection, error) {
	dwarf := map[string]rawSection{}
	for _, s := range f.Sections {
		name := s.Name
		switch {
		case strings.HasPrefix(name, ".debug_"):
		case strings.HasPrefix(name, ".zdebug_"):
			name = "." + name[2:]
		default:
			continue
		}
		if _, dup := dwarf[name]; dup || s.Type == elf.SHT_NOBITS {
			continue
		}
		rs := rawSection{name: s.Name, addr: s.Addr, size: s.Size, fileSize: s.FileSize, data: s.Data}
		claim, header, compressed := s.Size, uint64(0), s.Flags&elf.SHF_COMPRESSED != 0
		if compressed {
			header = 12 // Elf32_Chdr
			if f.Class == elf.ELFCLASS64 {
				header = 24
			}
		} else if strings.HasPrefix(s.Name, ".zdebug_") {
			var zh [12]byte
			if _, err := r.ReadAt(zh[:], int64(s.Offset)); err == nil && string(zh[:4]) == "ZLIB" && s.FileSize >= 12 {
				claim, header, compressed = binary.BigEndian.Uint64(zh[4:]), 12, true
			}
		}
		if compressed {
			rs.size, rs.data = claim, inflateSection(path, s, claim, s.FileSize-min(header, s.FileSize), inflate)
		}
		dwarf[name] = rs
	}
	return dwarf, nil
}

// maxInflate bounds how many times its compressed bytes a section may
// claim to hold once decompressed: zlib's deflate cannot compress by
// more than about 1032 to 1 (as package elfrel bounds it).
const maxInflate = 1032

// inflateSection returns the function that decompresses the section s
// of the file at path, whose header claims size bytes from compressed
// bytes, after checking the claim (see maxInflate) and taking size bytes
// from inflate.
func inflateSection(path string, s *elf.Section, size, compressed uint64, inflate *membudget.Budget) func() ([]byte, error) {
	return func() ([]byte, error) {
		if size/maxInflate > compressed {
			return nil, &elfrel.FormatError{File: path, Section: s.Name, Off: -1,
				Msg: fmt.Sprintf("claims %d bytes once decompressed, more than %d compressed bytes can hold", size, compressed)}
		}
		if err := inflate.Take(size); err != nil {
			return nil, &elfrel.FormatError{File: path, Section: s.Name, Off: -1, Msg: "not decompressed", Err: err}
		}
		data := make([]byte, size)
		zr := s.Open()
		if n, err := io.ReadFull(zr, data); err != nil {
			return nil, fmt.Errorf("cannot decompress it: %d bytes of the %d its header claims: %w", n, size, err)
		}
		var one [1]byte
		if n, _ := zr.Read(one[:]); n != 0 {
			return nil, fmt.Errorf("cannot decompress it: more than the %d bytes its header claims", size)
		}
		return data, nil
	}
}

// addELFDebugFile takes b's DWARF from the separate debug file of the ELF
// file f, found where llvm-symbolizer finds it (see debugCandidates, then
// o.fetch), with the same class and machine and with DWARF.
func (b *foreignBin) addELFDebugFile(f *elf.File, o foreignOpts) {
	id, _ := hex.DecodeString(b.buildID)
	for _, c := range debugCandidates(b.path, id, elfDebugLink(f), o.dirs) {
		if c.matches() && b.useELFDebugFile(f, c.path, o) {
			return
		}
	}
	if o.fetch != nil && len(id) > 0 {
		if p := o.fetch(b.path, id); p != "" {
			b.useELFDebugFile(f, p, o)
		}
	}
}

// useELFDebugFile takes b's DWARF from the file at path, if it is an
// ELF file of f's class and machine with DWARF, and reports whether it
// did.
func (b *foreignBin) useELFDebugFile(f *elf.File, path string, o foreignOpts) bool {
	fd, size, err := openRegular(path)
	if err != nil {
		return false
	}
	d, err := newELF(fd, size)
	if err == nil && d.Class == f.Class && d.Machine == f.Machine {
		dwarf, err := elfDWARF(path, d, fd, o.inflate)
		if err == nil {
			err = checkOverlap(path, dwarf, size)
		}
		if err == nil && dwarf[".debug_info"].size > 0 {
			b.dwarf = dwarf
			b.closer = multiCloser{b.closer, fd}
			b.sup, b.hasSup = elfrel.StdSupLink(d)
			b.dwarfPath = path
			return true
		}
	}
	fd.Close()
	return false
}

// elfDebugLink reads the .gnu_debuglink section of f: a file name, zero
// padding to 4 bytes, and the file's CRC-32.
func elfDebugLink(f *elf.File) debugLink {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return debugLink{}
	}
	data, err := s.Data()
	if err != nil {
		return debugLink{}
	}
	name, crc, ok := elfrel.ParseDebugLink(data, f.ByteOrder)
	return debugLink{name, crc, ok}
}
