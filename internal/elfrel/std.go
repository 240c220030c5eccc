package elfrel

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// CheckStd checks the ELF file of size bytes in r before package
// debug/elf reads it: the names of its sections, which debug/elf copies
// one by one, must add up to at most four times the file and 1 MiB
// (20,000 section names that all point at one string of 100 KB would
// take 2 GB). A file debug/elf refuses anyway passes.
func CheckStd(r io.ReaderAt, size uint64) error {
	var ident [64]byte
	if _, err := r.ReadAt(ident[:52], 0); err != nil {
		return nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(ident[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	var shoff, shentsize, shnum, shstrndx uint64
	switch elf.Class(ident[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
		shoff, shentsize, shnum, shstrndx = uint64(bo.Uint32(ident[32:])), uint64(bo.Uint16(ident[46:])), uint64(bo.Uint16(ident[48:])), uint64(bo.Uint16(ident[50:]))
	case elf.ELFCLASS64:
		if _, err := r.ReadAt(ident[:], 0); err != nil {
			return nil
		}
		shoff, shentsize, shnum, shstrndx = bo.Uint64(ident[40:]), uint64(bo.Uint16(ident[58:])), uint64(bo.Uint16(ident[60:])), uint64(bo.Uint16(ident[62:]))
	default:
		return nil
	}
	is64 := elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS64
	// Section header fields: sh_name, then sh_offset and sh_size, sh_link.
	offAt, sizeAt, linkAt, want := uint64(16), uint64(20), uint64(24), uint64(40)
	if is64 {
		offAt, sizeAt, linkAt, want = 24, 32, 40, 64
	}
	if shentsize < want || shoff == 0 {
		return nil
	}
	word := func(h []byte, at uint64) uint64 {
		if is64 {
			return bo.Uint64(h[at:])
		}
		return uint64(bo.Uint32(h[at:]))
	}
	if shnum == 0 || shstrndx == uint64(elf.SHN_XINDEX) {
		// Extended numbering: section 0 holds the counts.
		h := readTable(r, shoff, shentsize, size)
		if h == nil {
			return nil
		}
		if shnum == 0 {
			shnum = word(h, sizeAt)
		}
		if shstrndx == uint64(elf.SHN_XINDEX) {
			shstrndx = uint64(bo.Uint32(h[linkAt:]))
		}
	}
	if shstrndx >= shnum || shnum > size/shentsize {
		return nil
	}
	headers := readTable(r, shoff, shnum*shentsize, size)
	if headers == nil {
		return nil
	}
	h := headers[shstrndx*shentsize:]
	names := readTable(r, word(h, offAt), word(h, sizeAt), size)
	if names == nil {
		return nil
	}
	// debug/elf copies a name only if a NUL ends it.
	tab := newStrTable(string(names))
	var total uint64
	limit := 4*size + 1<<20
	for i := range shnum {
		name, ok := tab.at(bo.Uint32(headers[i*shentsize:]))
		if total += uint64(len(name)); ok && total > limit {
			return fmt.Errorf("its sections' names, one copy per reference, add up to more than %d bytes for a %d-byte file: they overlap", limit, size)
		}
	}
	return nil
}

// readTable reads n bytes at off of r; nil if they are not all there.
func readTable(r io.ReaderAt, off, n, size uint64) []byte {
	if off > size || n > size-off {
		return nil
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, int64(off)); err != nil {
		return nil
	}
	return b
}
