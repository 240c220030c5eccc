package jitsnap

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// Names of LLVM's GDB JIT interface symbols (llvm/lib/ExecutionEngine/
// GDBRegistrationListener.cpp), the same in every LLVM release since 3.x.
const (
	descriptorSymbol   = "__jit_debug_descriptor"
	registerCodeSymbol = "__jit_debug_register_code"
)

// Layout of the interface on a 64-bit target.
const (
	descriptorSize = 24 // {uint32 version, action_flag; *relevant_entry, *first_entry}
	entrySize      = 32 // {*next, *prev; symfile_addr; uint64 symfile_size}
)

// A Descriptor is one GDB JIT interface in the target: an instance of
// __jit_debug_descriptor, where the list of JIT objects starts.
type Descriptor struct {
	// Addr is the run-time address of __jit_debug_descriptor.
	Addr uint64
	// RegisterCode is the run-time address of __jit_debug_register_code,
	// the function the JIT calls after each change (where a debugger
	// sets its breakpoint), or 0 if the defining object has none.
	RegisterCode uint64
	// Object is the path of the ELF file that defines the symbols.
	Object string
	// Order is the target's byte order.
	Order binary.ByteOrder
}

// A segment is the part of a PT_LOAD program header that placing an
// object needs.
type segment struct {
	Vaddr, Memsz  uint64 // p_vaddr, p_memsz
	Off, Filesz   uint64 // p_offset, p_filesz
	Exec, Writing bool   // PF_X, PF_W
}

// loadSegments returns the PT_LOAD segments of f.
func loadSegments(f *elfrel.File) []segment {
	var segs []segment
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		segs = append(segs, segment{
			Vaddr: p.Vaddr, Memsz: p.Memsz, Off: p.Off, Filesz: p.Filesz,
			Exec: p.Flags&elf.PF_X != 0, Writing: p.Flags&elf.PF_W != 0,
		})
	}
	return segs
}

// loadBiases returns the load biases (run-time address minus link-time
// virtual address) at which the object with PT_LOAD segments segs is
// mapped by maps, the mappings of its file in the target. There is
// usually one; a file loaded twice (dlmopen) has two.
//
// A mapping m maps file offset m.Offset at address m.Start. If it maps
// part of segment s, the file offset s.Off is linked at s.Vaddr, so
//
//	bias = m.Start - m.Offset - (s.Vaddr - s.Off)
//
// The term in parentheses differs between segments: for Debian's
// libLLVM-14.so.1 the text segment has p_vaddr = p_offset = 0 and the data
// segment p_offset 0x61620a0, p_vaddr 0x61630a0, so the data segment's
// rw-p mapping starts one page further from the bias than its file offset
// says, and "rw-p mapping start - offset" is off by that page. The same
// file page can also appear in two mappings (the last page of one
// segment is the first of the next, mapped again), with the same
// permissions when RELRO made the second one read-only. So every
// mapping proposes a bias for each segment it could belong to, and a
// bias is kept only if every segment's file-backed pages are then
// covered by mappings of the file that agree with it.
func loadBiases(segs []segment, maps []Mapping, pageSize uint64) ([]uint64, error) {
	if len(segs) == 0 {
		return nil, errors.New("no PT_LOAD program headers")
	}
	pm := pageSize - 1
	var candidates []uint64
	for _, s := range segs {
		if (s.Vaddr-s.Off)&pm != 0 {
			return nil, fmt.Errorf("PT_LOAD segment at vaddr %#x has file offset %#x not congruent modulo the page size %#x", s.Vaddr, s.Off, pageSize)
		}
		if s.Filesz == 0 {
			continue
		}
		for _, m := range maps {
			if m.Executable() != s.Exec || (m.Writable() && !s.Writing) {
				continue
			}
			mEnd := m.Offset + (m.Limit - m.Start)
			if m.Offset >= s.Off+s.Filesz || mEnd <= s.Off&^pm {
				continue
			}
			candidates = append(candidates, m.Start-m.Offset-(s.Vaddr-s.Off))
		}
	}
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	var biases []uint64
	for _, b := range candidates {
		if biasFits(segs, maps, b, pm) {
			biases = append(biases, b)
		}
	}
	if len(biases) == 0 {
		return nil, fmt.Errorf("its %d mappings fit none of the %d load addresses its program headers allow", len(maps), len(candidates))
	}
	return biases, nil
}

// biasFits reports whether, with load bias b, the file-backed pages of
// every segment are covered by mappings of the file at offsets that agree
// with the segment's p_vaddr - p_offset.
func biasFits(segs []segment, maps []Mapping, b, pm uint64) bool {
	for _, s := range segs {
		if s.Filesz == 0 {
			continue
		}
		lo := b + s.Vaddr&^pm
		hi := b + s.Vaddr + s.Filesz
		if hi < lo {
			return false
		}
		delta := b + s.Vaddr - s.Off // m.Start - m.Offset for a mapping of s
		for _, m := range maps {
			if lo >= hi {
				break
			}
			if m.Start <= lo && lo < m.Limit && m.Start-m.Offset == delta {
				lo = m.Limit
			}
		}
		if lo < hi {
			return false
		}
	}
	return true
}

// A symbol is a defined symbol's link-time value and size.
type symbol struct {
	Value, Size uint64
}

// maxSymbolNames bounds the string table findSymbols reads: LLVM linked
// statically into a host with its .symtab has some 100 MiB of names.
const maxSymbolNames = 512 << 20

// findSymbols looks up names among the defined symbols of f's .dynsym
// and .symtab (either may be missing; a stripped shared library has only
// .dynsym, a static executable only .symtab if any). It reads .symtab,
// which can be large, only if .dynsym lacks a name, and a table's
// string table only if it is at most limit bytes; entries are read a
// chunk at a time and only the matches kept.
func findSymbols(f *elfrel.File, limit uint64, names ...string) (map[string]symbol, error) {
	found := map[string]symbol{}
	for _, typ := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_SYMTAB} {
		if len(found) == len(names) {
			break
		}
		i := slices.IndexFunc(f.Sections, func(s elfrel.Section) bool { return s.Type == typ })
		if i < 0 {
			continue
		}
		strtab := &f.Sections[f.Sections[i].Link] // Link validated by elfrel
		if strtab.Size > limit {
			return nil, &elfrel.FormatError{File: f.Name, Section: f.Sections[i].Name, Off: -1,
				Msg: fmt.Sprintf("its string table %s claims %d bytes, more than the %d the file can hold (sparse, or not a real symbol table)", strtab.Name, strtab.Size, limit)}
		}
		each := f.EachSymbol
		if typ == elf.SHT_DYNSYM {
			each = f.EachDynamicSymbol
		}
		err := each(true, func(_ int, s *elfrel.Symbol) error {
			if s.Shndx == elf.SHN_UNDEF || s.Value == 0 {
				return nil
			}
			if _, dup := found[s.Name]; !dup && slices.Contains(names, s.Name) {
				found[s.Name] = symbol{Value: s.Value, Size: s.Size}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// byteOrder returns the binary.ByteOrder of an ELF data encoding.
func byteOrder(d elf.Data) (binary.ByteOrder, bool) {
	switch d {
	case elf.ELFDATA2LSB:
		return binary.LittleEndian, true
	case elf.ELFDATA2MSB:
		return binary.BigEndian, true
	}
	return nil, false
}
