package hostile

import (
	"bytes"
	"debug/pe"
	"encoding/binary"
)

// PEImageBase is a generated PE file's ImageBase; its code is at
// PEImageBase+0x1000.
const PEImageBase = 0x140000000

// A PE is a PE32+ x86-64 executable to lay out: a .text section of code
// at RVA 0x1000 and a COFF symbol table.
type PE struct {
	// Sections more than .text, each with relocations aliasing one table
	// of Relocs entries (at most 65,535): a reader copying each
	// section's relocations allocates Sections*Relocs of them.
	Sections, Relocs int
	// Symbols is the number of COFF symbols in .text; with NameLen above
	// 8 they all name one string of the string table of NameLen bytes,
	// else each has its own short name.
	Symbols, NameLen int
	// CodeSize is the size of the code; 0 means 4 KiB.
	CodeSize int
}

// Bytes lays out the file.
func (p PE) Bytes() []byte {
	le := binary.LittleEndian
	nsects := 1 + p.Sections
	const optSize = 240 // PE32+ with 16 data directories
	hdrEnd := 0x40 + 4 + 20 + optSize + 40*nsects
	codeOff := (hdrEnd + 0x1ff) &^ 0x1ff
	code := textOf(p.CodeSize)
	relOff := codeOff + len(code)
	rel := make([]byte, 10*p.Relocs)
	for i := range p.Relocs {
		le.PutUint32(rel[10*i:], uint32(0x1000+i%len(code)))
		le.PutUint16(rel[10*i+8:], 4) // IMAGE_REL_AMD64_REL32
	}
	symOff := relOff + len(rel)
	strtab := le.AppendUint32(nil, 0) // its size, set below
	if p.NameLen > 8 {
		strtab = append(strtab, bytes.Repeat([]byte{'x'}, p.NameLen)...)
		strtab = append(strtab, 0)
	}
	le.PutUint32(strtab, uint32(len(strtab)))
	var syms []byte
	for i := range p.Symbols {
		var name [8]byte
		if p.NameLen > 8 {
			le.PutUint32(name[4:], 4) // Zeroes 0, then the string's offset
		} else {
			copy(name[:], appendDec([]byte("f"), i))
		}
		syms = append(syms, name[:]...)
		syms = le.AppendUint32(syms, uint32(i%len(code))) // Value
		syms = le.AppendUint16(syms, 1)                   // SectionNumber
		syms = le.AppendUint16(syms, 0x20)                // Type: function
		syms = append(syms, 2, 0)                         // IMAGE_SYM_CLASS_EXTERNAL, no aux
	}

	out := make([]byte, 0x40)
	out[0], out[1] = 'M', 'Z'
	le.PutUint32(out[0x3c:], 0x40)
	out = append(out, 'P', 'E', 0, 0)
	out = le.AppendUint16(out, pe.IMAGE_FILE_MACHINE_AMD64)
	out = le.AppendUint16(out, uint16(nsects))
	out = le.AppendUint32(out, 0)
	if p.Symbols > 0 {
		out = le.AppendUint32(out, uint32(symOff))
	} else {
		out = le.AppendUint32(out, 0)
	}
	out = le.AppendUint32(out, uint32(p.Symbols))
	out = le.AppendUint16(out, optSize)
	out = le.AppendUint16(out, 0x22) // executable, large address aware
	oh := pe.OptionalHeader64{
		Magic: 0x20b, SizeOfCode: uint32(len(code)), AddressOfEntryPoint: 0x1000, BaseOfCode: 0x1000,
		ImageBase: PEImageBase, SectionAlignment: 0x1000, FileAlignment: 0x200,
		MajorOperatingSystemVersion: 6, MajorSubsystemVersion: 6, SizeOfImage: 0x2000,
		SizeOfHeaders: uint32(codeOff), Subsystem: 3, NumberOfRvaAndSizes: 16,
	}
	var ob bytes.Buffer
	binary.Write(&ob, le, &oh)
	out = append(out, ob.Bytes()...)
	for i := range nsects {
		out = append(out, '.', 't', 'e', 'x', 't', 0, 0, 0)
		out = le.AppendUint32(out, uint32(len(code)))
		out = le.AppendUint32(out, 0x1000)
		out = le.AppendUint32(out, uint32(len(code)))
		out = le.AppendUint32(out, uint32(codeOff))
		if i == 0 {
			out = le.AppendUint32(out, 0)
		} else {
			out = le.AppendUint32(out, uint32(relOff))
		}
		out = le.AppendUint32(out, 0)
		if i == 0 {
			out = le.AppendUint16(out, 0)
		} else {
			out = le.AppendUint16(out, uint16(p.Relocs))
		}
		out = le.AppendUint16(out, 0)
		out = le.AppendUint32(out, pe.IMAGE_SCN_CNT_CODE|pe.IMAGE_SCN_MEM_EXECUTE|pe.IMAGE_SCN_MEM_READ)
	}
	out = append(out, make([]byte, codeOff-len(out))...)
	out = append(out, code...)
	out = append(out, rel...)
	out = append(out, syms...)
	return append(out, strtab...)
}
