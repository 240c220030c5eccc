package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// This file builds small ELF64 relocatable objects for tests that need
// exact control of headers, symbols and relocations.

// testSection is one section of a testObject; the null section and the
// section name table are added by bytes.
type testSection struct {
	name    string
	typ     elf.SectionType
	flags   elf.SectionFlag
	addr    uint64
	data    []byte
	size    uint64 // for SHT_NOBITS; otherwise len(data)
	link    uint32
	info    uint32
	entsize uint64
}

type testObject struct {
	machine  elf.Machine
	order    binary.ByteOrder
	sections []testSection // section i+1
}

// bytes lays out the object: header, section contents, name table, then
// the section header table.
func (o *testObject) bytes() []byte {
	bo := o.order
	if bo == nil {
		bo = binary.LittleEndian
	}
	var names bytes.Buffer
	names.WriteByte(0)
	nameOff := make([]uint32, len(o.sections)+1)
	for i, s := range o.sections {
		nameOff[i] = uint32(names.Len())
		names.WriteString(s.name)
		names.WriteByte(0)
	}
	nameOff[len(o.sections)] = uint32(names.Len())
	names.WriteString(".shstrtab\x00")
	secs := append(append([]testSection(nil), o.sections...), testSection{name: ".shstrtab", typ: elf.SHT_STRTAB, data: names.Bytes()})

	out := make([]byte, ehdrSize)
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		offs[i] = uint64(len(out))
		if s.typ != elf.SHT_NOBITS {
			out = append(out, s.data...)
		}
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := uint64(len(out))
	out = append(out, make([]byte, shdrSize*(len(secs)+1))...)
	for i, s := range secs {
		h := out[shoff+uint64(i+1)*shdrSize:]
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.size
		}
		bo.PutUint32(h[0:], nameOff[i])
		bo.PutUint32(h[4:], uint32(s.typ))
		bo.PutUint64(h[8:], uint64(s.flags))
		bo.PutUint64(h[16:], s.addr)
		bo.PutUint64(h[24:], offs[i])
		bo.PutUint64(h[32:], size)
		bo.PutUint32(h[40:], s.link)
		bo.PutUint32(h[44:], s.info)
		bo.PutUint64(h[48:], 1)
		bo.PutUint64(h[56:], s.entsize)
	}

	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if bo == binary.BigEndian {
		out[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	bo.PutUint16(out[16:], uint16(elf.ET_REL))
	bo.PutUint16(out[18:], uint16(o.machine))
	bo.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	bo.PutUint64(out[40:], shoff)
	bo.PutUint16(out[52:], ehdrSize)
	bo.PutUint16(out[58:], shdrSize)
	bo.PutUint16(out[60:], uint16(len(secs)+1))
	bo.PutUint16(out[62:], uint16(len(secs)))
	return out
}

// testSym is one symbol for symtabData.
type testSym struct {
	name  string
	info  byte
	shndx uint16
	value uint64
	size  uint64
}

// symtabData returns the contents of a symbol table (with the null symbol
// first) and of its string table.
func symtabData(bo binary.ByteOrder, syms []testSym) (symtab, strtab []byte) {
	strtab = []byte{0}
	symtab = make([]byte, symSize*(len(syms)+1))
	for i, s := range syms {
		b := symtab[(i+1)*symSize:]
		if s.name != "" {
			bo.PutUint32(b, uint32(len(strtab)))
			strtab = append(append(strtab, s.name...), 0)
		}
		b[4] = s.info
		bo.PutUint16(b[6:], s.shndx)
		bo.PutUint64(b[8:], s.value)
		bo.PutUint64(b[16:], s.size)
	}
	return symtab, strtab
}

// testRela is one SHT_RELA entry.
type testRela struct {
	off    uint64
	sym    uint32
	typ    uint32
	addend int64
}

func relaData(bo binary.ByteOrder, rs []testRela) []byte {
	b := make([]byte, relaSize*len(rs))
	for i, r := range rs {
		e := b[i*relaSize:]
		bo.PutUint64(e, r.off)
		bo.PutUint64(e[8:], uint64(r.sym)<<32|uint64(r.typ))
		bo.PutUint64(e[16:], uint64(r.addend))
	}
	return b
}
