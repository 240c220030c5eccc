package hostile

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
)

// An ELFSection is one section of an ELF file.
type ELFSection struct {
	Name    string
	Type    elf.SectionType
	Flags   elf.SectionFlag
	Addr    uint64
	Data    []byte // laid out in the file, unless Alias
	Link    uint32
	Info    uint32
	Entsize uint64
	// Alias, if not 0, is the index of an earlier section whose bytes
	// this one's header points at (sh_offset and sh_size), Data unused.
	Alias int
	// NameAlias, if not 0, is the index of an earlier section whose name
	// this one's header points at (sh_name).
	NameAlias int
}

// An ELF is an ELF file to lay out: little-endian, its sections after
// the null one, then .shstrtab; with one PT_LOAD segment over the first
// section that has SHF_EXECINSTR, if any, which is laid out at a page
// boundary (TextOffset, if the sections before it are small).
type ELF struct {
	Class    elf.Class // ELFCLASS32 or ELFCLASS64
	Type     elf.Type
	Machine  elf.Machine
	Sections []ELFSection
	// TextAlign is the alignment of the code in the file; 0 means
	// TextOffset (a page).
	TextAlign int
}

// Bytes lays out the file.
func (f ELF) Bytes() []byte {
	bo := binary.LittleEndian
	is64 := f.Class == elf.ELFCLASS64
	ehsize, phsize, shsize := 52, 32, 40
	if is64 {
		ehsize, phsize, shsize = 64, 56, 64
	}
	secs := append(append([]ELFSection{{}}, f.Sections...), ELFSection{Name: ".shstrtab", Type: elf.SHT_STRTAB})
	// Section names; an aliased name is not written again.
	names := []byte{0}
	nameOff := make([]uint32, len(secs))
	for i, s := range secs {
		switch {
		case i == 0:
		case s.NameAlias != 0:
			nameOff[i] = nameOff[s.NameAlias]
		default:
			nameOff[i] = uint32(len(names))
			names = append(append(names, s.Name...), 0)
		}
	}
	secs[len(secs)-1].Data = names
	text := -1
	for i, s := range secs {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Alias == 0 {
			text = i
			break
		}
	}
	out := make([]byte, ehsize)
	phoff, phnum := 0, 0
	if text >= 0 {
		phoff, phnum = len(out), 1
		out = append(out, make([]byte, phsize)...)
	}
	offs := make([]uint64, len(secs))
	sizes := make([]uint64, len(secs))
	for i, s := range secs {
		if i == 0 {
			continue
		}
		if s.Alias != 0 {
			offs[i], sizes[i] = offs[s.Alias], sizes[s.Alias]
			continue
		}
		align := 8
		if i == text {
			align = cmp.Or(f.TextAlign, TextOffset) // page-aligned, as its segment
		}
		for len(out)%align != 0 {
			out = append(out, 0)
		}
		offs[i], sizes[i] = uint64(len(out)), uint64(len(s.Data))
		if s.Type != elf.SHT_NOBITS {
			out = append(out, s.Data...)
		}
	}
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := len(out)
	out = append(out, make([]byte, shsize*len(secs))...)
	for i, s := range secs {
		if i == 0 {
			continue
		}
		h := out[shoff+i*shsize:]
		bo.PutUint32(h[0:], nameOff[i])
		bo.PutUint32(h[4:], uint32(s.Type))
		if is64 {
			bo.PutUint64(h[8:], uint64(s.Flags))
			bo.PutUint64(h[16:], s.Addr)
			bo.PutUint64(h[24:], offs[i])
			bo.PutUint64(h[32:], sizes[i])
			bo.PutUint32(h[40:], s.Link)
			bo.PutUint32(h[44:], s.Info)
			bo.PutUint64(h[48:], 1)
			bo.PutUint64(h[56:], s.Entsize)
		} else {
			bo.PutUint32(h[8:], uint32(s.Flags))
			bo.PutUint32(h[12:], uint32(s.Addr))
			bo.PutUint32(h[16:], uint32(offs[i]))
			bo.PutUint32(h[20:], uint32(sizes[i]))
			bo.PutUint32(h[24:], s.Link)
			bo.PutUint32(h[28:], s.Info)
			bo.PutUint32(h[32:], 1)
			bo.PutUint32(h[36:], uint32(s.Entsize))
		}
	}
	if text >= 0 {
		p := out[phoff:]
		s := secs[text]
		bo.PutUint32(p[0:], uint32(elf.PT_LOAD))
		if is64 {
			bo.PutUint32(p[4:], uint32(elf.PF_R|elf.PF_X))
			bo.PutUint64(p[8:], offs[text])
			bo.PutUint64(p[16:], s.Addr)
			bo.PutUint64(p[24:], s.Addr)
			bo.PutUint64(p[32:], sizes[text])
			bo.PutUint64(p[40:], sizes[text])
			bo.PutUint64(p[48:], 1)
		} else {
			bo.PutUint32(p[4:], uint32(offs[text]))
			bo.PutUint32(p[8:], uint32(s.Addr))
			bo.PutUint32(p[12:], uint32(s.Addr))
			bo.PutUint32(p[16:], uint32(sizes[text]))
			bo.PutUint32(p[20:], uint32(sizes[text]))
			bo.PutUint32(p[24:], uint32(elf.PF_R|elf.PF_X))
			bo.PutUint32(p[28:], 1)
		}
	}
	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(f.Class)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	bo.PutUint16(out[16:], uint16(f.Type))
	bo.PutUint16(out[18:], uint16(f.Machine))
	bo.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	w := 4
	if is64 {
		w = 8
	}
	put := func(at, v int) {
		if is64 {
			bo.PutUint64(out[at:], uint64(v))
		} else {
			bo.PutUint32(out[at:], uint32(v))
		}
	}
	put(24+w, phoff) // after e_entry
	put(24+2*w, shoff)
	rest := 24 + 3*w + 4 // after e_flags
	bo.PutUint16(out[rest:], uint16(ehsize))
	bo.PutUint16(out[rest+2:], uint16(phsize))
	bo.PutUint16(out[rest+4:], uint16(phnum))
	bo.PutUint16(out[rest+6:], uint16(shsize))
	bo.PutUint16(out[rest+8:], uint16(len(secs)))
	bo.PutUint16(out[rest+10:], uint16(len(secs)-1))
	return out
}

// textAddr is where the generated files' code is: an address no real
// mapping of the test profiles holds.
const textAddr = 0x20000000

// TextAddr is the address of the code of the ELF files this package
// builds, at TextOffset in the file: a sample there, in a mapping of
// offset TextOffset, has a reader open them.
const (
	TextAddr   = textAddr
	TextOffset = 0x1000
)

// text is the code of the generated files: 4 KiB of x86 ret.
func text() []byte { return textOf(0) }

// textOf returns n bytes of x86 ret, 4 KiB if n is 0.
func textOf(n int) []byte {
	return bytes.Repeat([]byte{0xc3}, cmp.Or(n, 4096))
}

// ELFCompressed returns an executable of class c and machine m whose
// .debug_info is SHF_COMPRESSED: zlib (ZlibZeros(k)) or, if zstd,
// Zstandard (ZstdZeros), of size zero bytes, which its compression
// header claims, and copies more sections of the same name aliasing its
// bytes. A reader decompressing every compressed debug section whole
// allocates size times (1+copies), from k/4 bytes of zlib or
// size/32,768 of Zstandard.
func ELFCompressed(c elf.Class, m elf.Machine, size uint64, zstd bool, copies int) []byte {
	return elfCompressed(c, m, size, zstd, copies, text(), 0)
}

// elfCompressed is ELFCompressed with the code code, aligned to align.
func elfCompressed(c elf.Class, m elf.Machine, size uint64, zstd bool, copies int, code []byte, align int) []byte {
	var stream []byte
	if zstd {
		stream = ZstdZeros(size)
	} else {
		stream = ZlibZeros((size - 1) / 258)
		size = 1 + (size-1)/258*258
	}
	bo := binary.LittleEndian
	var chdr []byte
	typ := uint32(elf.COMPRESS_ZLIB)
	if zstd {
		typ = uint32(elf.COMPRESS_ZSTD)
	}
	if c == elf.ELFCLASS64 {
		chdr = bo.AppendUint32(bo.AppendUint32(nil, typ), 0)
		chdr = bo.AppendUint64(bo.AppendUint64(chdr, size), 1)
	} else {
		chdr = bo.AppendUint32(bo.AppendUint32(bo.AppendUint32(nil, typ), uint32(size)), 1)
	}
	f := ELF{Class: c, Type: elf.ET_EXEC, Machine: m, TextAlign: align, Sections: []ELFSection{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: code},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Data: append(chdr, stream...)},
	}}
	for i := range copies {
		name := []string{".debug_abbrev", ".debug_line", ".debug_str", ".debug_ranges", ".debug_frame"}[i%5]
		f.Sections = append(f.Sections, ELFSection{Name: name, Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Alias: 2})
	}
	return f.Bytes()
}

// ELFSymbols returns an executable of class c with n function symbols
// in its .symtab, in its code: at 4,096 addresses in turn, or, if
// spread, each at its own (the code is then n bytes long). With nameLen
// above 0 every symbol names one string of nameLen bytes, so that a
// reader copying each symbol's name allocates n*nameLen bytes from a
// string table of nameLen; else each has a name of its own ("f" and its
// number).
func ELFSymbols(c elf.Class, n, nameLen int, spread bool) []byte {
	return elfSymbols(c, n, nameLen, spread, text(), 0)
}

// elfSymbols is ELFSymbols with the code code (grown to n+1 bytes if
// spread), aligned to align.
func elfSymbols(c elf.Class, n, nameLen int, spread bool, code []byte, align int) []byte {
	bo := binary.LittleEndian
	symSize := 16
	if c == elf.ELFCLASS64 {
		symSize = 24
	}
	strtab := []byte{0}
	if nameLen > 0 {
		for range nameLen {
			strtab = append(strtab, 'x')
		}
		strtab = append(strtab, 0)
	}
	symtab := make([]byte, symSize*(n+1))
	for i := 1; i <= n; i++ {
		name := 1
		if nameLen == 0 {
			name = len(strtab)
			strtab = append(strtab, 'f')
			strtab = appendDec(strtab, i)
			strtab = append(strtab, 0)
		}
		s := symtab[i*symSize:]
		addr := uint64(textAddr + i%len(code))
		if spread {
			addr = uint64(textAddr + i)
		}
		bo.PutUint32(s, uint32(name))
		if c == elf.ELFCLASS64 {
			s[4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
			bo.PutUint16(s[6:], 1)
			bo.PutUint64(s[8:], addr)
			bo.PutUint64(s[16:], 1)
		} else {
			bo.PutUint32(s[4:], uint32(addr))
			bo.PutUint32(s[8:], 1)
			s[12] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
			bo.PutUint16(s[14:], 1)
		}
	}
	machine := elf.EM_386
	if c == elf.ELFCLASS64 {
		machine = elf.EM_X86_64
	}
	if spread && n+1 > len(code) {
		code = make([]byte, n+1)
	}
	return ELF{Class: c, Type: elf.ET_EXEC, Machine: machine, TextAlign: align, Sections: []ELFSection{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: code},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: symtab, Link: 3, Info: 1, Entsize: uint64(symSize)},
		{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
	}}.Bytes()
}

// ELFSectionNames returns an executable of class c with n sections
// besides its code, all named by one name of nameLen bytes: a reader
// copying each section's name allocates n*nameLen bytes.
func ELFSectionNames(c elf.Class, n, nameLen int) []byte {
	return elfSectionNames(c, n, nameLen, text(), 0)
}

// elfSectionNames is ELFSectionNames with the code code, aligned to
// align.
func elfSectionNames(c elf.Class, n, nameLen int, code []byte, align int) []byte {
	name := make([]byte, nameLen)
	for i := range name {
		name[i] = 'n'
	}
	machine := elf.EM_386
	if c == elf.ELFCLASS64 {
		machine = elf.EM_X86_64
	}
	f := ELF{Class: c, Type: elf.ET_EXEC, Machine: machine, TextAlign: align, Sections: []ELFSection{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: code},
		{Name: string(name), Type: elf.SHT_PROGBITS},
	}}
	for range n - 1 {
		f.Sections = append(f.Sections, ELFSection{Type: elf.SHT_PROGBITS, NameAlias: 2, Alias: 2})
	}
	return f.Bytes()
}

func appendDec(b []byte, n int) []byte {
	if n >= 10 {
		b = appendDec(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// Seeds returns small files of each hostile kind this package builds,
// a few KiB each, for the fuzzers' seed corpora: of the format "macho",
// "pe" or "elf32".
func Seeds(format string) [][]byte {
	code := textOf(16)
	switch format {
	case "macho":
		return [][]byte{
			MachO{Symbols: 3, CodeSize: 16}.Bytes(),
			MachO{Symbols: 4, NameLen: 40, UUID: make([]byte, 16), CodeSize: 16}.Bytes(),
			MachO{Sections: 3, Relocs: 2, CodeSize: 16}.Bytes(),
			MachOFat(MachO{Symbols: 2, CodeSize: 16}.Bytes(), 3),
		}
	case "pe":
		return [][]byte{
			PE{Symbols: 3, CodeSize: 16}.Bytes(),
			PE{Symbols: 4, NameLen: 40, CodeSize: 16}.Bytes(),
			PE{Sections: 3, Relocs: 2, CodeSize: 16}.Bytes(),
		}
	case "elf32":
		return [][]byte{
			elfCompressed(elf.ELFCLASS32, elf.EM_386, 4096, false, 0, code, 16),
			elfCompressed(elf.ELFCLASS32, elf.EM_ARM, 1<<20, true, 1, code, 16),
			elfSymbols(elf.ELFCLASS32, 8, 0, false, code, 16),
			elfSymbols(elf.ELFCLASS32, 8, 40, true, code, 16),
			elfSectionNames(elf.ELFCLASS32, 4, 40, code, 16),
		}
	}
	return nil
}
