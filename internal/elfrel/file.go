// Package elfrel reads 64-bit ELF files: relocatable objects (ET_REL)
// whose section headers carry load addresses, as JIT hosts dump them, and
// the executables and shared libraries (ET_EXEC, ET_DYN) of native code.
// It returns their sections, program headers, symbols, notes and DWARF
// debug sections, with relocations applied for the load addresses of a
// relocatable object and compressed sections decompressed.
//
// LLVM's RuntimeDyld (MCJIT) loads each section of a relocatable object at
// its own address, and the object it hands to debuggers is the original
// ET_REL file with every loaded section's sh_addr rewritten to that address.
// Symbol values stay section-relative. Go's debug/elf applies DWARF
// relocations with the symbol value alone (S = st_value), so every address
// in such an object's DWARF comes out as an offset from its own section. This
// package adds the section address of SHF_ALLOC sections; see
// [File.SymbolAddr] for the exact rule.
//
// ELFCLASS64 files (either byte order) are read, and ELFCLASS32
// relocatable objects; relocatable objects only for the machines whose
// relocations it applies (see [Relocatable]: x86-64, AArch64, PowerPC64,
// s390x, RISC-V, LoongArch, 386, 32-bit ARM). Others give an
// [*UnsupportedError]; package debug/elf reads 32-bit executables. Headers are validated before
// anything is allocated from them, so allocation stays bounded by the file
// size whatever counts the headers claim.
package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/membudget"
	"github.com/jitpprof/pprof/internal/regfile"
)

// Sizes of ELF64 structures.
const (
	ehdrSize  = 64 // Elf64_Ehdr
	shdrSize  = 64 // Elf64_Shdr
	phdrSize  = 56 // Elf64_Phdr
	chdrSize  = 24 // Elf64_Chdr
	symSize   = 24 // Elf64_Sym
	relaSize  = 24 // Elf64_Rela
	relSize   = 16 // Elf64_Rel
	shnXindex = 0xffff
)

// A layout gives the sizes of the structures of one ELF class.
type layout struct {
	word             uint64 // bytes of an address, offset or size field: 4 or 8
	ehdr, shdr, phdr uint64 // Elf*_Ehdr, Elf*_Shdr, Elf*_Phdr
	chdr, sym        uint64 // Elf*_Chdr, Elf*_Sym
	rela, rel        uint64 // Elf*_Rela, Elf*_Rel
}

var (
	layout64 = layout{word: 8, ehdr: ehdrSize, shdr: shdrSize, phdr: phdrSize, chdr: chdrSize, sym: symSize, rela: relaSize, rel: relSize}
	layout32 = layout{word: 4, ehdr: 52, shdr: 40, phdr: 32, chdr: 12, sym: 16, rela: 12, rel: 8}
)

// word reads the address, offset or size field at the start of b: four
// bytes in an ELFCLASS32 file, eight in an ELFCLASS64 one.
func (f *File) word(b []byte) uint64 {
	if f.lay.word == 4 {
		return uint64(f.ByteOrder.Uint32(b))
	}
	return f.ByteOrder.Uint64(b)
}

// A File is an open relocatable ELF object. Its methods read from the
// underlying [io.ReaderAt] on demand; they may be called concurrently if
// the ReaderAt allows it (an *os.File does).
type File struct {
	Name      string           // name used in errors
	Class     elf.Class        // elf.ELFCLASS64, or elf.ELFCLASS32 for a relocatable object
	ByteOrder binary.ByteOrder // byte order of the object
	Type      elf.Type         // elf.ET_REL, elf.ET_EXEC or elf.ET_DYN
	Machine   elf.Machine      // any for an executable or shared library; one that Relocatable accepts for ET_REL
	Flags     uint32           // e_flags: processor-specific (MIPS's ABI, ARM's EABI version, ...)

	// Progs lists the program headers (none in a relocatable object).
	Progs []elf.ProgHeader

	// Sections lists the section headers in file order: Sections[i] is
	// section header i, and Sections[0] is the null section, all zero
	// whatever its header holds (the extended counts, or garbage).
	Sections []Section

	lay      layout // the sizes of Class's structures
	shoff    uint64 // e_shoff
	shstrndx int    // the section name table's index (0: none)

	r      io.ReaderAt
	size   int64
	closer io.Closer
	fd     *os.File // r, when it is a file: asked for holes

	inflate *membudget.Budget // what decompressing its sections may take; nil: no limit

	symMu    sync.Mutex // guards the decoded symbol table below
	symIndex int        // its section index, 0 until decoded
	syms     []Symbol
	symErr   error
}

// A Section is one section header. For a section the JIT host loaded,
// Addr is its run-time address; otherwise Addr is usually 0.
type Section struct {
	Name      string
	Type      elf.SectionType
	Flags     elf.SectionFlag
	Addr      uint64 // sh_addr
	Offset    uint64 // sh_offset: position of the contents in the file
	Size      uint64 // sh_size
	Link      uint32 // sh_link
	Info      uint32 // sh_info
	Addralign uint64
	Entsize   uint64
}

// Executable reports whether the section holds code the process runs:
// SHF_ALLOC and SHF_EXECINSTR are both set.
func (s *Section) Executable() bool {
	const f = elf.SHF_ALLOC | elf.SHF_EXECINSTR
	return s.Flags&f == f
}

// Open opens the named file, if it is a regular file, and reads it with
// [NewFile].
// The caller must Close the returned File.
func Open(name string) (*File, error) {
	// Paths come from profiles and debug information, which anyone may
	// write: only a regular file is opened, never a FIFO that would block.
	fd, err := regfile.Open(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return OpenFile(fd)
}

// OpenFile reads the ELF object in the open file fd, named in errors as
// it was opened; the File's Close closes fd, as does OpenFile if it
// fails.
func OpenFile(fd *os.File) (*File, error) {
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	f, err := NewFile(fd, st.Size(), fd.Name())
	if err != nil {
		fd.Close()
		return nil, err
	}
	f.closer = fd
	return f, nil
}

// SetInflateBudget has the file's compressed sections decompressed only
// within b: each takes its size once decompressed from b before it is
// allocated, and fails with a [*FormatError] wrapping the
// *membudget.ExceededError if b has too little left. A nil b, the
// default, sets no limit but that of maxInflate.
func (f *File) SetInflateBudget(b *membudget.Budget) { f.inflate = b }

// Close closes the file if it was opened by [Open]; otherwise it does
// nothing.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// NewFile reads and validates the ELF header and section header table of
// the size-byte object in r; name is used in errors only. It reads two
// regions: the section header table and the section name table.
//
// When r is an *os.File, a large section that is mostly holes is refused
// too: a sparse file's headers may claim gigabytes that hold nothing,
// which reading would turn into memory.
func NewFile(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{Name: name, r: r, size: size}
	f.fd, _ = r.(*os.File)
	if size < elf.EI_NIDENT {
		return nil, f.formatErr("", 0, "file of %d bytes is too short for an ELF header", size)
	}
	var hdr [ehdrSize]byte
	if _, err := r.ReadAt(hdr[:min(size, ehdrSize)], 0); err != nil {
		return nil, &FormatError{File: name, Off: 0, Msg: "cannot read the ELF header", Err: err}
	}
	if !bytes.Equal(hdr[:4], []byte(elf.ELFMAG)) {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("bad magic number %q", hdr[:4]), Err: ErrNotELF}
	}
	switch f.Class = elf.Class(hdr[elf.EI_CLASS]); f.Class {
	case elf.ELFCLASS64:
		f.lay = layout64
	case elf.ELFCLASS32:
		f.lay = layout32
	default:
		return nil, f.formatErr("", elf.EI_CLASS, "unknown ELF class %d", hdr[elf.EI_CLASS])
	}
	if uint64(size) < f.lay.ehdr {
		return nil, f.formatErr("", 0, "file of %d bytes is too short for an ELF%d header", size, f.lay.word*8)
	}
	switch elf.Data(hdr[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		f.ByteOrder = binary.LittleEndian
	case elf.ELFDATA2MSB:
		f.ByteOrder = binary.BigEndian
	default:
		return nil, f.formatErr("", elf.EI_DATA, "unknown ELF data encoding %d", hdr[elf.EI_DATA])
	}
	if v := hdr[elf.EI_VERSION]; v != byte(elf.EV_CURRENT) {
		return nil, f.formatErr("", elf.EI_VERSION, "unknown ELF version %d", v)
	}
	bo := f.ByteOrder
	switch f.Type = elf.Type(bo.Uint16(hdr[16:])); f.Type {
	case elf.ET_REL, elf.ET_EXEC, elf.ET_DYN:
	default:
		return nil, &UnsupportedError{File: name, Msg: fmt.Sprintf("ELF type %v", f.Type)}
	}
	f.Machine = elf.Machine(bo.Uint16(hdr[18:]))
	if f.Type == elf.ET_REL && !Relocatable(f.Machine) {
		// Only a relocatable object needs its relocations understood.
		return nil, &UnsupportedError{File: name, Msg: fmt.Sprintf("machine %v", f.Machine)}
	}
	if f.Class == elf.ELFCLASS32 && f.Type != elf.ET_REL {
		// Package debug/elf reads these (see package objtool).
		return nil, &UnsupportedError{File: name, Msg: "ELFCLASS32 executable or shared library"}
	}
	if v := bo.Uint32(hdr[20:]); v != uint32(elf.EV_CURRENT) {
		return nil, f.formatErr("", 20, "unknown e_version %d", v)
	}
	// The fields after e_entry, e_phoff and e_shoff: at 36 in ELF32, 48
	// in ELF64.
	w := f.lay.word
	rest := 24 + 3*w
	f.Flags = bo.Uint32(hdr[rest:])
	if n := uint64(bo.Uint16(hdr[rest+4:])); n != f.lay.ehdr {
		return nil, f.formatErr("", int64(rest+4), "e_ehsize is %d, want %d", n, f.lay.ehdr)
	}
	if err := f.readProgs(hdr[:]); err != nil {
		return nil, err
	}
	shoff := f.word(hdr[24+2*w:])
	shentsize := uint64(bo.Uint16(hdr[rest+10:]))
	shnum := uint64(bo.Uint16(hdr[rest+12:]))
	shstrndx := uint32(bo.Uint16(hdr[rest+14:]))
	shdr := f.lay.shdr
	if shoff == 0 {
		if shnum != 0 {
			return nil, f.formatErr("", int64(rest+12), "e_shnum is %d but e_shoff is 0", shnum)
		}
		return f, nil // no sections at all
	}
	if shentsize != shdr {
		return nil, f.formatErr("", int64(rest+10), "e_shentsize is %d, want %d", shentsize, shdr)
	}
	if shoff > uint64(size) || uint64(size)-shoff < shdr {
		return nil, f.formatErr("", int64(24+2*w), "section header table offset %#x is past the end of the file (%d bytes)", shoff, size)
	}
	sh0 := make([]byte, shdr)
	if _, err := r.ReadAt(sh0, int64(shoff)); err != nil {
		return nil, &FormatError{File: name, Off: int64(shoff), Msg: "cannot read section header 0", Err: err}
	}
	if shnum == 0 { // extended numbering: the count is in section 0's sh_size
		shnum = f.word(sh0[8+3*w:])
	}
	if shstrndx == shnXindex { // extended numbering: the index is in section 0's sh_link
		shstrndx = bo.Uint32(sh0[8+4*w:])
	}
	if shnum == 0 {
		return nil, f.formatErr("", int64(shoff), "section header table has no entries")
	}
	if max := (uint64(size) - shoff) / shdr; shnum > max {
		return nil, f.formatErr("", int64(shoff), "%d section headers do not fit in the %d bytes after the table offset", shnum, uint64(size)-shoff)
	}
	if uint64(shstrndx) >= shnum {
		return nil, f.formatErr("", int64(rest+14), "section name table index %d out of range (%d sections)", shstrndx, shnum)
	}
	f.shoff, f.shstrndx = shoff, int(shstrndx)
	// The table is read a chunk at a time (47,000 sections take 3 MB of
	// headers); only the name offsets are kept until the names are read.
	f.Sections = make([]Section, shnum)
	nameOffs := make([]uint32, shnum)
	buf := make([]byte, min(shnum, headerChunk)*shdr)
	for lo := uint64(0); lo < shnum; lo += headerChunk {
		n := min(shnum-lo, headerChunk)
		chunk := buf[:n*shdr]
		if _, err := r.ReadAt(chunk, int64(shoff+lo*shdr)); err != nil {
			return nil, &FormatError{File: name, Off: int64(shoff), Msg: "cannot read the section header table", Err: err}
		}
		for k := range n {
			b := chunk[k*shdr : (k+1)*shdr]
			nameOffs[lo+k] = f.ByteOrder.Uint32(b)
			if err := f.parseSectionHeader(int(lo+k), b, int64(shoff)); err != nil {
				return nil, err
			}
		}
	}
	return f, f.nameSections(nameOffs, int(shstrndx), int64(shoff))
}

// SectionHeaderOffset returns the file offset of section header i.
func (f *File) SectionHeaderOffset(i int) uint64 {
	return f.shoff + uint64(i)*f.lay.shdr
}

// AddrField returns the offset of the sh_addr field in a section header
// and its size: 16 and 8 in an ELFCLASS64 file, 12 and 4 in an
// ELFCLASS32 one.
func (f *File) AddrField() (off, size uint64) {
	return 8 + f.lay.word, f.lay.word
}

// NameTable returns the index of the section name table, 0 if the file
// has none.
func (f *File) NameTable() int { return f.shstrndx }

// RequireRel returns an *[UnsupportedError] unless f is a relocatable
// object (ET_REL), as a JIT object dump is.
func (f *File) RequireRel() error {
	if f.Type != elf.ET_REL {
		return &UnsupportedError{File: f.Name, Msg: fmt.Sprintf("ELF type %v, want ET_REL", f.Type)}
	}
	return nil
}

// maxProgs bounds the program header count: the ELF format allows 65,535
// and real files have a dozen.
const maxProgs = 4096

// readProgs reads and validates the program header table that the ELF
// header hdr describes.
func (f *File) readProgs(hdr []byte) error {
	bo, w := f.ByteOrder, f.lay.word
	phoff := f.word(hdr[24+w:])
	phentsize := uint64(bo.Uint16(hdr[30+3*w:]))
	phnum := uint64(bo.Uint16(hdr[32+3*w:]))
	if phoff == 0 || phnum == 0 {
		return nil
	}
	phdr := f.lay.phdr
	if phentsize != phdr {
		return f.formatErr("", int64(30+3*w), "e_phentsize is %d, want %d", phentsize, phdr)
	}
	if phnum == 0xffff || phnum > maxProgs {
		return &UnsupportedError{File: f.Name, Msg: fmt.Sprintf("%d program headers", phnum)}
	}
	if phoff > uint64(f.size) || (uint64(f.size)-phoff)/phdr < phnum {
		return f.formatErr("", int64(24+w), "%d program headers at offset %#x do not fit in the %d-byte file", phnum, phoff, f.size)
	}
	buf := make([]byte, phnum*phdr)
	if _, err := f.r.ReadAt(buf, int64(phoff)); err != nil {
		return &FormatError{File: f.Name, Off: int64(phoff), Msg: "cannot read the program header table", Err: err}
	}
	f.Progs = make([]elf.ProgHeader, phnum)
	for i := range f.Progs {
		b := buf[uint64(i)*phdr:]
		p := &f.Progs[i]
		p.Type = elf.ProgType(bo.Uint32(b))
		if w == 4 { // Elf32_Phdr: p_flags comes after p_memsz
			p.Off, p.Vaddr, p.Paddr = f.word(b[4:]), f.word(b[8:]), f.word(b[12:])
			p.Filesz, p.Memsz = f.word(b[16:]), f.word(b[20:])
			p.Flags, p.Align = elf.ProgFlag(bo.Uint32(b[24:])), f.word(b[28:])
			continue
		}
		p.Flags = elf.ProgFlag(bo.Uint32(b[4:]))
		p.Off, p.Vaddr, p.Paddr = bo.Uint64(b[8:]), bo.Uint64(b[16:]), bo.Uint64(b[24:])
		p.Filesz, p.Memsz, p.Align = bo.Uint64(b[32:]), bo.Uint64(b[40:]), bo.Uint64(b[48:])
	}
	return nil
}

// minHoleCheck is the smallest section NewFile asks the file system about
// holes in: smaller ones cost little to read whatever they hold.
const minHoleCheck = 1 << 20

// headerChunk is how many section headers NewFile reads at a time.
const headerChunk = 1024

// parseSectionHeader decodes and validates section header i from b, which
// starts at file offset tableOff + i*(the header size).
func (f *File) parseSectionHeader(i int, b []byte, tableOff int64) error {
	if i == 0 {
		// Not a section: its header holds the extended counts, which
		// NewFile reads itself. Whatever type or link it claims, it
		// stays the null section, for every loop over Sections.
		return nil
	}
	bo, w := f.ByteOrder, f.lay.word
	s := &f.Sections[i]
	s.Type = elf.SectionType(bo.Uint32(b[4:]))
	s.Flags = elf.SectionFlag(f.word(b[8:]))
	s.Addr = f.word(b[8+w:])
	s.Offset = f.word(b[8+2*w:])
	s.Size = f.word(b[8+3*w:])
	s.Link = bo.Uint32(b[8+4*w:])
	s.Info = bo.Uint32(b[12+4*w:])
	s.Addralign = f.word(b[16+4*w:])
	s.Entsize = f.word(b[16+5*w:])
	off := tableOff + int64(i)*int64(f.lay.shdr)
	limit := ^uint64(0)
	if w == 4 {
		limit = 1<<32 - 1
	}
	if f.Type == elf.ET_REL && s.Size > limit-s.Addr {
		// A JIT host's load address plus the size: no object can hold
		// a range that wraps around the address space.
		return f.formatErr("", off+int64(8+w), "section %d: address %#x + size %#x wraps around the address space", i, s.Addr, s.Size)
	}
	if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL {
		if s.Offset > uint64(f.size) || s.Size > uint64(f.size)-s.Offset {
			return f.formatErr("", off, "section %d contents [%#x, +%#x) extend past the end of the file (%d bytes)", i, s.Offset, s.Size, f.size)
		}
		if f.fd != nil && s.Size >= minHoleCheck {
			if holes, ok := regfile.Holes(f.fd, int64(s.Offset), int64(s.Size)); ok && holes > int64(s.Size/2) {
				return f.formatErr("", off, "section %d claims %d bytes, of which %d are holes of a sparse file", i, s.Size, holes)
			}
		}
	}
	n := uint32(len(f.Sections))
	switch s.Type {
	case elf.SHT_SYMTAB, elf.SHT_DYNSYM, elf.SHT_SYMTAB_SHNDX:
		if s.Link >= n {
			return f.formatErr("", off, "section %d links to section %d (%d sections)", i, s.Link, n)
		}
	case elf.SHT_REL, elf.SHT_RELA:
		if s.Link >= n || s.Info >= n {
			return f.formatErr("", off, "relocation section %d refers to sections %d and %d (%d sections)", i, s.Link, s.Info, n)
		}
	}
	return nil
}

// nameSections reads the section name table and sets every section's
// Name from its sh_name offset in nameOffs.
func (f *File) nameSections(nameOffs []uint32, shstrndx int, tableOff int64) error {
	if shstrndx == 0 {
		return nil // no names
	}
	st := &f.Sections[shstrndx]
	if st.Type != elf.SHT_STRTAB {
		return f.formatErr("", tableOff+int64(shstrndx)*int64(f.lay.shdr), "section name table %d has type %v, want SHT_STRTAB", shstrndx, st.Type)
	}
	names, err := f.sectionString(shstrndx) // names below are substrings of it
	if err != nil {
		return err
	}
	tab := newStrTable(names)
	for i := 1; i < len(f.Sections); i++ {
		name, ok := tab.at(nameOffs[i])
		if !ok {
			return f.formatErr("", tableOff+int64(i)*int64(f.lay.shdr), "section %d name offset %#x is outside the name table (%d bytes) or unterminated", i, nameOffs[i], len(names))
		}
		f.Sections[i].Name = name
	}
	return nil
}

// sectionString reads the contents of section i, a string table, as one
// string, without the intermediate copy a []byte conversion would make.
func (f *File) sectionString(i int) (string, error) {
	s := &f.Sections[i]
	if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL || s.Size == 0 {
		return "", nil
	}
	var sb strings.Builder
	sb.Grow(int(s.Size))
	buf := make([]byte, min(s.Size, 32<<10))
	if _, err := io.CopyBuffer(&sb, io.NewSectionReader(f.r, int64(s.Offset), int64(s.Size)), buf); err != nil || uint64(sb.Len()) != s.Size {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return "", &FormatError{File: f.Name, Section: s.Name, Off: 0, Msg: fmt.Sprintf("cannot read %d bytes at file offset %#x", s.Size, s.Offset), Err: err}
	}
	return sb.String(), nil
}

// A strTable is a string table that finds where a name ends by scanning
// for its NUL, until the scans add up to more than four times the table,
// and then by binary search of the positions of its NULs: names that
// all point into one long string would otherwise be scanned once per
// reference (the names of 40,000 sections that all point into one
// string of 400 KB were scanned 16 GB in all, 11 s). The names of a real
// table, each scanned once, never get there.
type strTable struct {
	s       string
	scanned int      // bytes scanned so far
	nuls    []uint32 // positions of the NULs of s, in order, once scans cost too much
}

func newStrTable(s string) *strTable { return &strTable{s: s} }

// at returns the NUL-terminated string at offset off of the table; false
// if off is outside it or no NUL ends the string.
func (t *strTable) at(off uint32) (string, bool) {
	if uint64(off) >= uint64(len(t.s)) {
		return "", false
	}
	if t.nuls == nil && t.scanned <= 4*len(t.s) {
		i := strings.IndexByte(t.s[off:], 0)
		if i < 0 {
			t.scanned += len(t.s) - int(off)
			return "", false
		}
		t.scanned += i + 1
		return t.s[off : int(off)+i], true
	}
	if t.nuls == nil {
		t.nuls = make([]uint32, 0, 16)
		for i := 0; i < len(t.s); i++ {
			if t.s[i] == 0 {
				t.nuls = append(t.nuls, uint32(i))
			}
		}
	}
	k, _ := slices.BinarySearch(t.nuls, off)
	if k == len(t.nuls) {
		return "", false
	}
	return t.s[off:t.nuls[k]], true
}

// SectionData reads the contents of section i into a new slice. It
// returns an empty slice for SHT_NOBITS and SHT_NULL sections.
func (f *File) SectionData(i int) ([]byte, error) {
	if i <= 0 || i >= len(f.Sections) {
		return nil, f.formatErr("", -1, "section index %d out of range (%d sections)", i, len(f.Sections))
	}
	s := &f.Sections[i]
	if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL || s.Size == 0 {
		return []byte{}, nil
	}
	// NewFile checked that the contents lie within the file.
	data := make([]byte, s.Size)
	if _, err := f.r.ReadAt(data, int64(s.Offset)); err != nil {
		return nil, &FormatError{File: f.Name, Section: s.Name, Off: 0, Msg: fmt.Sprintf("cannot read %d bytes at file offset %#x", s.Size, s.Offset), Err: err}
	}
	return data, nil
}

// Section returns the index of the first section with the given name, or
// -1. It scans the section headers: linear in their number.
func (f *File) Section(name string) int {
	for i := 1; i < len(f.Sections); i++ {
		if f.Sections[i].Name == name {
			return i
		}
	}
	return -1
}

// formatErr returns a *FormatError about section sec (or the headers when
// sec is "").
func (f *File) formatErr(sec string, off int64, format string, args ...any) error {
	return &FormatError{File: f.Name, Section: sec, Off: off, Msg: fmt.Sprintf(format, args...)}
}

// ReadAt reads len(p) bytes of the file at offset off, which must lie
// within the file.
func (f *File) ReadAt(p []byte, off uint64) error {
	if off > uint64(f.size) || uint64(len(p)) > uint64(f.size)-off {
		return f.formatErr("", int64(off), "%d bytes at offset %#x are past the end of the file (%d bytes)", len(p), off, f.size)
	}
	if _, err := f.r.ReadAt(p, int64(off)); err != nil {
		return &FormatError{File: f.Name, Off: int64(off), Msg: fmt.Sprintf("cannot read %d bytes", len(p)), Err: err}
	}
	return nil
}
