package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// A Section is one section header of a JIT object. For a section the JIT
// loaded, Addr is its run-time address; otherwise it is 0.
type Section struct {
	Name  string
	Addr  uint64 // sh_addr: the load address, or 0
	Size  uint64 // sh_size
	Type  elf.SectionType
	Flags elf.SectionFlag
}

// Executable reports whether the section holds code (SHF_ALLOC and
// SHF_EXECINSTR).
func (s Section) Executable() bool {
	const f = elf.SHF_ALLOC | elf.SHF_EXECINSTR
	return s.Flags&f == f
}

// ELF64 header and section header layout.
const (
	ehdrSize      = 64
	shdrSize      = 64
	symSize       = 24
	shnXIndex     = 0xffff // e_shstrndx escape: the index is in section 0's sh_link
	identFallback = "jit"
)

// parseObject checks that data is a 64-bit relocatable ELF object in byte
// order order whose section header table, section names and section
// contents all lie within data, and returns its sections (without the
// null section 0) and its ident (the first STT_FILE symbol's base name,
// as the dump listener computes it, or "jit"). The checks come first
// with precise messages; debug/elf, which the mapping stage reads the
// file with, has the last word.
func parseObject(data []byte, order binary.ByteOrder) ([]Section, string, error) {
	fail := func(off uint64, format string, args ...any) ([]Section, string, error) {
		return nil, "", &FormatError{Off: off, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) < ehdrSize {
		return fail(0, "%d bytes, shorter than an ELF64 header", len(data))
	}
	if !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return fail(0, "no ELF magic (starts % x)", data[:4])
	}
	if c := elf.Class(data[elf.EI_CLASS]); c != elf.ELFCLASS64 {
		return fail(elf.EI_CLASS, "class %v, want ELFCLASS64", c)
	}
	if o, ok := byteOrder(elf.Data(data[elf.EI_DATA])); !ok || o != order {
		return fail(elf.EI_DATA, "data encoding %v does not match the process's %v", elf.Data(data[elf.EI_DATA]), order)
	}
	if t := elf.Type(order.Uint16(data[16:])); t != elf.ET_REL {
		return fail(16, "type %v, want ET_REL (a JIT debug object is relocatable)", t)
	}
	size := uint64(len(data))
	shoff := order.Uint64(data[40:])
	if es := order.Uint16(data[58:]); es != shdrSize {
		return fail(58, "section header size %d, want %d", es, shdrSize)
	}
	shnum := uint64(order.Uint16(data[60:]))
	shstrndx := uint64(order.Uint16(data[62:]))
	if shoff == 0 || shoff >= size || size-shoff < shdrSize {
		return fail(40, "section header table at %#x outside the %d-byte object", shoff, size)
	}
	sh0 := data[shoff:]
	if shnum == 0 { // more than 0xff00 sections: the count is in section 0
		shnum = order.Uint64(sh0[32:])
	}
	if shstrndx == shnXIndex {
		shstrndx = uint64(order.Uint32(sh0[40:]))
	}
	if shnum == 0 || shnum > (size-shoff)/shdrSize {
		return fail(60, "%d section headers at %#x do not fit in the %d-byte object", shnum, shoff, size)
	}
	if shstrndx == 0 || shstrndx >= shnum {
		return fail(62, "section name table index %d out of range (%d sections)", shstrndx, shnum)
	}

	type rawSection struct {
		name           uint32
		typ            elf.SectionType
		flags          elf.SectionFlag
		addr, off, sz  uint64
		link, entsize  uint64
		headerLocation uint64
	}
	raw := make([]rawSection, shnum)
	for i := range raw {
		at := shoff + uint64(i)*shdrSize
		h := data[at : at+shdrSize]
		r := rawSection{
			name: order.Uint32(h[0:]), typ: elf.SectionType(order.Uint32(h[4:])),
			flags: elf.SectionFlag(order.Uint64(h[8:])), addr: order.Uint64(h[16:]),
			off: order.Uint64(h[24:]), sz: order.Uint64(h[32:]),
			link: uint64(order.Uint32(h[40:])), entsize: order.Uint64(h[56:]), headerLocation: at,
		}
		if i > 0 && r.typ != elf.SHT_NOBITS && r.typ != elf.SHT_NULL && (r.off > size || r.sz > size-r.off) {
			return fail(at+24, "section %d: contents [%#x, +%#x) outside the %d-byte object", i, r.off, r.sz, size)
		}
		if r.sz > ^uint64(0)-r.addr {
			return fail(at+16, "section %d: address %#x + size %#x wraps around", i, r.addr, r.sz)
		}
		raw[i] = r
	}
	str := raw[shstrndx]
	if str.typ != elf.SHT_STRTAB {
		return fail(str.headerLocation+4, "section name table (section %d) has type %v, want SHT_STRTAB", shstrndx, str.typ)
	}
	names := data[str.off : str.off+str.sz]
	secs := make([]Section, 0, shnum-1)
	for i := uint64(1); i < shnum; i++ {
		r := raw[i]
		name, ok := cString(names, uint64(r.name))
		if !ok {
			return fail(raw[i].headerLocation, "section %d: name offset %d outside the %d-byte name table or unterminated", i, r.name, len(names))
		}
		secs = append(secs, Section{Name: name, Addr: r.addr, Size: r.sz, Type: r.typ, Flags: r.flags})
	}

	// The mapping stage opens the file with debug/elf, which checks more
	// (program headers, for one); what it rejects is of no use.
	if _, err := elf.NewFile(bytes.NewReader(data)); err != nil {
		return fail(0, "debug/elf rejects it: %v", err)
	}

	// The ident, as the dump listener computes it: the first named
	// STT_FILE symbol of .symtab. A malformed symbol table just means
	// no ident.
	ident := identFallback
	for i := uint64(1); i < shnum && ident == identFallback; i++ {
		st := raw[i]
		if st.typ != elf.SHT_SYMTAB || st.link == 0 || st.link >= shnum || raw[st.link].typ != elf.SHT_STRTAB {
			continue
		}
		symNames := data[raw[st.link].off : raw[st.link].off+raw[st.link].sz]
		syms := data[st.off : st.off+st.sz]
		for j := uint64(1); j < st.sz/symSize; j++ {
			s := syms[j*symSize:]
			if elf.ST_TYPE(s[4]) != elf.STT_FILE {
				continue
			}
			if n, ok := cString(symNames, uint64(order.Uint32(s))); ok && n != "" {
				ident = sanitizeIdent(llvmFilename(n))
				break
			}
		}
		break // LLVM reads only the first symbol table
	}
	return secs, ident, nil
}

// cString returns the NUL-terminated string at off in tab.
func cString(tab []byte, off uint64) (string, bool) {
	if off >= uint64(len(tab)) {
		return "", false
	}
	end := bytes.IndexByte(tab[off:], 0)
	if end < 0 {
		return "", false
	}
	return string(tab[off : off+uint64(end)]), true
}

// llvmFilename returns the last component of a path the way
// llvm::sys::path::filename does on POSIX: "a/b.c" gives "b.c", and a
// path ending in a separator gives ".".
func llvmFilename(p string) string {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return "."
	}
	if i := bytes.LastIndexByte([]byte(p), '/'); i >= 0 && len(p) > 1 {
		return p[i+1:]
	}
	return p
}

// sanitizeIdent reduces an ident to a file-name stem as the listener
// does: at most 96 bytes of [A-Za-z0-9._-], anything else becoming '_',
// and "jit" in front of an empty or dot-leading result.
func sanitizeIdent(s string) string {
	if len(s) > 96 {
		s = s[:96]
	}
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return identFallback + string(b)
	}
	return string(b)
}
