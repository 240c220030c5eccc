package hostile

import (
	"debug/macho"
	"encoding/binary"
)

// Mach-O load commands and sizes (mach-o/loader.h).
const (
	lcSegment64   = 0x19
	lcSymtab      = 0x2
	lcUUID        = 0x1b
	machHeader64  = 32
	segment64Size = 72
	section64Size = 80
	nlist64Size   = 16
	pureCode      = 0x80000400 // S_ATTR_PURE_INSTRUCTIONS | S_ATTR_SOME_INSTRUCTIONS
)

// A MachO is a thin 64-bit little-endian x86-64 Mach-O executable to lay
// out: a __TEXT segment of one section of code at MachOTextAddr (a
// mapping there has base 0) and a symbol table.
type MachO struct {
	// Sections more than __text, each of relocations aliasing one table
	// of Relocs entries: a reader copying each section's relocations
	// allocates Sections*Relocs of them.
	Sections, Relocs int
	// Symbols is the number of symbols, one per byte of code from its
	// start; with NameLen above 0 they all name one string of NameLen
	// bytes, else each its own ("_f" and its number).
	Symbols, NameLen int
	// UUID, if not nil, is written as LC_UUID.
	UUID []byte
	// CodeSize is the size of the code; 0 means 4 KiB.
	CodeSize int
}

// MachOTextAddr is the address of a generated Mach-O file's code.
const MachOTextAddr = 0x100000000 + textAddr

// Bytes lays out the file.
func (m MachO) Bytes() []byte {
	bo := binary.LittleEndian
	nsects := 1 + m.Sections
	cmds := segment64Size + section64Size*nsects + 24
	ncmds := 2
	if m.UUID != nil {
		cmds += 24
		ncmds++
	}
	code := textOf(m.CodeSize)
	codeOff := machHeader64 + cmds
	relOff := codeOff + len(code)
	rel := make([]byte, 8*m.Relocs)
	for i := range m.Relocs {
		bo.PutUint32(rel[8*i:], uint32(i%len(code)))
		bo.PutUint32(rel[8*i+4:], 1|2<<25) // section 1, length 2^2
	}
	strtab := []byte{' ', 0}
	if m.NameLen > 0 {
		strtab = append(strtab, '_')
		for range m.NameLen - 1 {
			strtab = append(strtab, 'x')
		}
		strtab = append(strtab, 0)
	}
	syms := make([]byte, nlist64Size*m.Symbols)
	for i := range m.Symbols {
		s := syms[nlist64Size*i:]
		name := 2
		if m.NameLen == 0 {
			name = len(strtab)
			strtab = appendDec(append(strtab, '_', 'f'), i)
			strtab = append(strtab, 0)
		}
		bo.PutUint32(s, uint32(name))
		s[4] = 0x0f // N_SECT | N_EXT
		s[5] = 1
		bo.PutUint64(s[8:], MachOTextAddr+uint64(i%len(code)))
	}
	symOff := relOff + len(rel)
	strOff := symOff + len(syms)

	out := make([]byte, 0, strOff+len(strtab))
	out = bo.AppendUint32(out, macho.Magic64)
	out = bo.AppendUint32(out, uint32(macho.CpuAmd64))
	out = bo.AppendUint32(out, 3) // CPU_SUBTYPE_X86_64_ALL
	out = bo.AppendUint32(out, uint32(macho.TypeExec))
	out = bo.AppendUint32(out, uint32(ncmds))
	out = bo.AppendUint32(out, uint32(cmds))
	out = bo.AppendUint32(out, 0)
	out = bo.AppendUint32(out, 0)

	out = bo.AppendUint32(out, lcSegment64)
	out = bo.AppendUint32(out, uint32(segment64Size+section64Size*nsects))
	out = append(out, name16("__TEXT")...)
	out = bo.AppendUint64(out, MachOTextAddr)
	out = bo.AppendUint64(out, uint64(len(code)))
	out = bo.AppendUint64(out, uint64(codeOff))
	out = bo.AppendUint64(out, uint64(len(code)))
	out = bo.AppendUint32(out, 5)
	out = bo.AppendUint32(out, 5)
	out = bo.AppendUint32(out, uint32(nsects))
	out = bo.AppendUint32(out, 0)
	for i := range nsects {
		out = append(out, name16("__text")...)
		out = append(out, name16("__TEXT")...)
		out = bo.AppendUint64(out, MachOTextAddr)
		out = bo.AppendUint64(out, uint64(len(code)))
		out = bo.AppendUint32(out, uint32(codeOff))
		out = bo.AppendUint32(out, 0)
		if i == 0 {
			out = bo.AppendUint32(out, 0)
			out = bo.AppendUint32(out, 0)
		} else {
			out = bo.AppendUint32(out, uint32(relOff))
			out = bo.AppendUint32(out, uint32(m.Relocs))
		}
		out = bo.AppendUint32(out, pureCode)
		out = append(out, make([]byte, 12)...)
	}
	out = bo.AppendUint32(out, lcSymtab)
	out = bo.AppendUint32(out, 24)
	out = bo.AppendUint32(out, uint32(symOff))
	out = bo.AppendUint32(out, uint32(m.Symbols))
	out = bo.AppendUint32(out, uint32(strOff))
	out = bo.AppendUint32(out, uint32(len(strtab)))
	if m.UUID != nil {
		out = bo.AppendUint32(out, lcUUID)
		out = bo.AppendUint32(out, 24)
		out = append(out, m.UUID[:16]...)
	}
	out = append(out, code...)
	out = append(out, rel...)
	out = append(out, syms...)
	return append(out, strtab...)
}

func name16(s string) []byte {
	b := make([]byte, 16)
	copy(b, s)
	return b
}

// MachOFat returns a fat Mach-O file of n members that all point at the
// bytes of one thin file, member, each for its own CPU subtype of
// x86-64: a reader parsing every member parses member n times.
func MachOFat(member []byte, n int) []byte {
	be := binary.BigEndian
	out := be.AppendUint32(nil, macho.MagicFat)
	out = be.AppendUint32(out, uint32(n))
	off := (8 + 20*n + 4095) &^ 4095
	for i := range n {
		out = be.AppendUint32(out, uint32(macho.CpuAmd64))
		out = be.AppendUint32(out, uint32(3+i))
		out = be.AppendUint32(out, uint32(off))
		out = be.AppendUint32(out, uint32(len(member)))
		out = be.AppendUint32(out, 12)
	}
	out = append(out, make([]byte, off-len(out))...)
	return append(out, member...)
}
