package jitsnap

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"syscall"
)

// image is a synthetic address space for tests: regions of bytes at
// fixed addresses, read like a process's memory.
type image struct {
	regions []region
	// beforeRead, if set, runs before every read; tests use it to change
	// the list while Collect reads it.
	beforeRead func(im *image, addr uint64)
}

type region struct {
	addr uint64
	data []byte
}

var _ Memory = (*image)(nil)

func (im *image) ReadMemory(addr uint64, p []byte) error {
	if im.beforeRead != nil {
		im.beforeRead(im, addr)
	}
	for _, r := range im.regions {
		if addr >= r.addr && addr-r.addr <= uint64(len(r.data)) && uint64(len(p)) <= uint64(len(r.data))-(addr-r.addr) {
			copy(p, r.data[addr-r.addr:])
			return nil
		}
	}
	return &ReadError{Addr: addr, Len: uint64(len(p)), Err: syscall.EFAULT}
}

// mappings returns the regions as readable anonymous mappings.
func (im *image) mappings() []Mapping {
	var maps []Mapping
	for _, r := range im.regions {
		maps = append(maps, Mapping{Start: r.addr, Limit: r.addr + uint64(len(r.data)), Perms: "rw-p", Dev: "00:00"})
	}
	slices.SortFunc(maps, func(a, b Mapping) int { return int(a.Start>>12) - int(b.Start>>12) })
	return maps
}

// bytesAt returns the writable bytes at addr.
func (im *image) bytesAt(addr uint64, n int) []byte {
	for _, r := range im.regions {
		if addr >= r.addr && addr+uint64(n) <= r.addr+uint64(len(r.data)) {
			return r.data[addr-r.addr : addr-r.addr+uint64(n)]
		}
	}
	panic(fmt.Sprintf("no region holds %#x+%d", addr, n))
}

func (im *image) put64(addr, v uint64) { binary.LittleEndian.PutUint64(im.bytesAt(addr, 8), v) }
func (im *image) put32(addr uint64, v uint32) {
	binary.LittleEndian.PutUint32(im.bytesAt(addr, 4), v)
}

// Layout of a test image: the descriptor at descAddr, entries at
// entryAddr(i), symfiles from symBase on.
const (
	descAddr = 0x10000
	heapBase = 0x200000
	symBase  = 0x400000
)

func entryAddr(i int) uint64 { return heapBase + uint64(i)*entrySize }

// listImage lays out a descriptor whose list holds one entry per
// symfile, in order, like LLVM's (doubly linked, prev of the first 0).
func listImage(symfiles ...[]byte) (*image, Descriptor) {
	desc := make([]byte, 0x1000)
	heap := make([]byte, max(0x1000, len(symfiles)*entrySize))
	var syms []byte
	im := &image{regions: []region{{descAddr, desc}, {heapBase, heap}}}
	binary.LittleEndian.PutUint32(desc, 1)
	if len(symfiles) > 0 {
		binary.LittleEndian.PutUint64(desc[16:], entryAddr(0))
	}
	var at []uint64
	for _, s := range symfiles {
		at = append(at, symBase+uint64(len(syms)))
		syms = append(syms, s...)
		for len(syms)%16 != 0 {
			syms = append(syms, 0)
		}
	}
	im.regions = append(im.regions, region{symBase, append(syms, make([]byte, 0x1000)...)})
	for i, s := range symfiles {
		e := entryAddr(i)
		if i+1 < len(symfiles) {
			im.put64(e, entryAddr(i+1))
		}
		if i > 0 {
			im.put64(e+8, entryAddr(i-1))
		}
		im.put64(e+16, at[i])
		im.put64(e+24, uint64(len(s)))
	}
	return im, Descriptor{Addr: descAddr, Object: "test", Order: binary.LittleEndian}
}

// testSection describes a section for buildELF.
type testSection struct {
	name  string
	typ   elf.SectionType
	flags elf.SectionFlag
	addr  uint64
	data  []byte
	size  uint64 // for SHT_NOBITS
}

// textAt returns an executable section holding a few bytes of code.
func textAt(name string, addr uint64) testSection {
	return testSection{name: name, typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, addr: addr,
		data: []byte{0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x5d, 0xc3}}
}

// buildELF returns a little-endian ELF64 file of type typ with the given
// sections, a .symtab holding an STT_FILE symbol named file (none if
// file is ""), .strtab and .shstrtab. With more than 0xff00 sections it
// uses extended section numbering, as LLVM does for large objects.
func buildELF(typ elf.Type, file string, secs ...testSection) []byte {
	le := binary.LittleEndian
	strtab := []byte{0}
	var symtab = make([]byte, symSize) // null symbol
	if file != "" {
		sym := make([]byte, symSize)
		le.PutUint32(sym, uint32(len(strtab)))
		sym[4] = byte(elf.STT_FILE)
		le.PutUint16(sym[6:], uint16(elf.SHN_ABS))
		symtab = append(symtab, sym...)
		strtab = append(strtab, file+"\x00"...)
	}
	n := len(secs)
	all := append(slices.Clone(secs),
		testSection{name: ".symtab", typ: elf.SHT_SYMTAB, data: symtab},
		testSection{name: ".strtab", typ: elf.SHT_STRTAB, data: strtab},
		testSection{name: ".shstrtab", typ: elf.SHT_STRTAB})
	symtabIdx, strtabIdx, shstrIdx := n+1, n+2, n+3
	shstr := []byte{0}
	nameOff := make([]uint32, len(all))
	for i, s := range all {
		nameOff[i] = uint32(len(shstr))
		shstr = append(shstr, s.name+"\x00"...)
	}
	all[len(all)-1].data = shstr

	out := make([]byte, ehdrSize)
	offs := make([]uint64, len(all))
	for i, s := range all {
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
	count := len(all) + 1
	sh0 := make([]byte, shdrSize)
	if count >= 0xff00 {
		le.PutUint64(sh0[32:], uint64(count))
	}
	if shstrIdx >= 0xff00 {
		le.PutUint32(sh0[40:], uint32(shstrIdx))
	}
	out = append(out, sh0...)
	for i, s := range all {
		h := make([]byte, shdrSize)
		le.PutUint32(h[0:], nameOff[i])
		le.PutUint32(h[4:], uint32(s.typ))
		le.PutUint64(h[8:], uint64(s.flags))
		le.PutUint64(h[16:], s.addr)
		le.PutUint64(h[24:], offs[i])
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.size
		}
		le.PutUint64(h[32:], size)
		switch i + 1 {
		case symtabIdx:
			le.PutUint32(h[40:], uint32(strtabIdx))
			le.PutUint32(h[44:], 1)
			le.PutUint64(h[56:], symSize)
		}
		le.PutUint64(h[48:], 1)
		out = append(out, h...)
	}

	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(typ))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(out[40:], shoff)
	le.PutUint16(out[52:], ehdrSize)
	le.PutUint16(out[58:], shdrSize)
	if count < 0xff00 {
		le.PutUint16(out[60:], uint16(count))
	}
	if shstrIdx < 0xff00 {
		le.PutUint16(out[62:], uint16(shstrIdx))
	} else {
		le.PutUint16(out[62:], shnXIndex)
	}
	return out
}

// testObject returns a small valid JIT debug object whose code is at
// addr.
func testObject(addr uint64) []byte {
	return buildELF(elf.ET_REL, "/src/work load.c",
		textAt(".text", addr),
		testSection{name: ".bss", typ: elf.SHT_NOBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, addr: addr + 0x1000, size: 64},
		testSection{name: ".debug_info", typ: elf.SHT_PROGBITS, data: []byte{1, 2, 3, 4}},
	)
}
