// Package elftest builds small ELF64 files for tests that need exact
// control of headers, sections, symbols and relocations: the malformed,
// huge or unusual objects no compiler produces on demand.
package elftest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// Sizes of the ELF64 structures written.
const (
	EhdrSize = 64 // Elf64_Ehdr
	ShdrSize = 64 // Elf64_Shdr
	SymSize  = 24 // Elf64_Sym
	RelaSize = 24 // Elf64_Rela
)

// A Section is one section of a File.
type Section struct {
	Name    string
	Type    elf.SectionType
	Flags   elf.SectionFlag
	Addr    uint64 // sh_addr
	Data    []byte // contents; ignored for SHT_NOBITS
	Size    uint64 // sh_size of an SHT_NOBITS section; others use len(Data)
	Link    uint32
	Info    uint32
	Entsize uint64
}

// A File is an ELF64 file to lay out.
type File struct {
	Type    elf.Type         // e_type; 0 means ET_REL
	Machine elf.Machine      // e_machine; 0 means EM_X86_64
	Order   binary.ByteOrder // nil means little-endian
	// Sections are section headers 1 to len(Sections); Bytes adds the null
	// section before them and a .shstrtab after them.
	Sections []Section
}

// Bytes lays out the file: the ELF header, each section's contents
// (8-byte aligned), the section name table, then the section header
// table. With 0xff00 sections or more it uses extended section numbering
// (counts in section header 0), as LLVM does for large objects.
func (f File) Bytes() []byte {
	bo := f.Order
	if bo == nil {
		bo = binary.LittleEndian
	}
	typ, machine := f.Type, f.Machine
	if typ == 0 {
		typ = elf.ET_REL
	}
	if machine == 0 {
		machine = elf.EM_X86_64
	}
	var names bytes.Buffer
	names.WriteByte(0)
	secs := append(append([]Section(nil), f.Sections...), Section{Name: ".shstrtab", Type: elf.SHT_STRTAB})
	nameOff := make([]uint32, len(secs))
	for i, s := range secs {
		nameOff[i] = uint32(names.Len())
		names.WriteString(s.Name)
		names.WriteByte(0)
	}
	secs[len(secs)-1].Data = names.Bytes()
	shstrndx := len(secs)

	out := make([]byte, EhdrSize)
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		out = pad8(out)
		offs[i] = uint64(len(out))
		if s.Type != elf.SHT_NOBITS {
			out = append(out, s.Data...)
		}
	}
	out = pad8(out)
	shoff := uint64(len(out))
	count := len(secs) + 1
	out = append(out, make([]byte, ShdrSize*count)...)
	if count >= 0xff00 {
		bo.PutUint64(out[shoff+32:], uint64(count))
	}
	if shstrndx >= 0xff00 {
		bo.PutUint32(out[shoff+40:], uint32(shstrndx))
	}
	for i, s := range secs {
		h := out[shoff+uint64(i+1)*ShdrSize:]
		size := uint64(len(s.Data))
		if s.Type == elf.SHT_NOBITS {
			size = s.Size
		}
		bo.PutUint32(h[0:], nameOff[i])
		bo.PutUint32(h[4:], uint32(s.Type))
		bo.PutUint64(h[8:], uint64(s.Flags))
		bo.PutUint64(h[16:], s.Addr)
		bo.PutUint64(h[24:], offs[i])
		bo.PutUint64(h[32:], size)
		bo.PutUint32(h[40:], s.Link)
		bo.PutUint32(h[44:], s.Info)
		bo.PutUint64(h[48:], 1)
		bo.PutUint64(h[56:], s.Entsize)
	}

	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if bo == binary.BigEndian {
		out[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	bo.PutUint16(out[16:], uint16(typ))
	bo.PutUint16(out[18:], uint16(machine))
	bo.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	bo.PutUint64(out[40:], shoff)
	bo.PutUint16(out[52:], EhdrSize)
	bo.PutUint16(out[58:], ShdrSize)
	if count < 0xff00 {
		bo.PutUint16(out[60:], uint16(count))
	}
	if shstrndx < 0xff00 {
		bo.PutUint16(out[62:], uint16(shstrndx))
	} else {
		bo.PutUint16(out[62:], uint16(elf.SHN_XINDEX))
	}
	return out
}

func pad8(b []byte) []byte {
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// A Symbol is one entry of a symbol table.
type Symbol struct {
	Name  string
	Info  byte // st_info: binding << 4 | type
	Shndx uint16
	Value uint64
	Size  uint64
}

// Symtab returns the contents of a symbol table, the null symbol first,
// and of its string table.
func Symtab(bo binary.ByteOrder, syms []Symbol) (symtab, strtab []byte) {
	strtab = []byte{0}
	symtab = make([]byte, SymSize*(len(syms)+1))
	for i, s := range syms {
		b := symtab[(i+1)*SymSize:]
		if s.Name != "" {
			bo.PutUint32(b, uint32(len(strtab)))
			strtab = append(append(strtab, s.Name...), 0)
		}
		b[4] = s.Info
		bo.PutUint16(b[6:], s.Shndx)
		bo.PutUint64(b[8:], s.Value)
		bo.PutUint64(b[16:], s.Size)
	}
	return symtab, strtab
}

// A Rela is one SHT_RELA entry.
type Rela struct {
	Off    uint64
	Sym    uint32
	Type   uint32
	Addend int64
}

// RelaData returns the contents of an SHT_RELA section.
func RelaData(bo binary.ByteOrder, rs []Rela) []byte {
	b := make([]byte, RelaSize*len(rs))
	for i, r := range rs {
		e := b[i*RelaSize:]
		bo.PutUint64(e, r.Off)
		bo.PutUint64(e[8:], uint64(r.Sym)<<32|uint64(r.Type))
		bo.PutUint64(e[16:], uint64(r.Addend))
	}
	return b
}
