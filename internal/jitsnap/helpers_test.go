package jitsnap

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// imageBytes reads the whole image of obj, from its Data or the target.
func imageBytes(t testing.TB, obj Object) []byte {
	t.Helper()
	r, size := obj.image()
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil && size > 0 {
		t.Fatalf("reading the image of %s: %v", obj.Name, err)
	}
	return b
}

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

// elftest.Section describes a section for buildELF.
// textAt returns an executable section holding a few bytes of code.
func textAt(name string, addr uint64) elftest.Section {
	return elftest.Section{Name: name, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: addr,
		Data: []byte{0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x5d, 0xc3}}
}

// buildELF returns a little-endian ELF64 file of type typ with the given
// sections, a .symtab holding an STT_FILE symbol named file (none if
// file is ""), .strtab and .shstrtab. With more than 0xff00 sections it
// uses extended section numbering, as LLVM does for large objects.
func buildELF(typ elf.Type, file string, secs ...elftest.Section) []byte {
	var syms []elftest.Symbol
	if file != "" {
		syms = append(syms, elftest.Symbol{Name: file, Info: byte(elf.STT_FILE), Shndx: uint16(elf.SHN_ABS)})
	}
	symtab, strtab := elftest.Symtab(binary.LittleEndian, syms)
	n := len(secs)
	all := append(slices.Clone(secs),
		elftest.Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: symtab, Link: uint32(n + 2), Info: 1, Entsize: elftest.SymSize},
		elftest.Section{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab})
	return elftest.File{Type: typ, Sections: all}.Bytes()
}

// testObject returns a small valid JIT debug object whose code is at
// addr.
func testObject(addr uint64) []byte {
	return buildELF(elf.ET_REL, "/src/work load.c",
		textAt(".text", addr),
		elftest.Section{Name: ".bss", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: addr + 0x1000, Size: 64},
		elftest.Section{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: []byte{1, 2, 3, 4}},
	)
}
