package objtool

import (
	"debug/elf"
	"errors"
	"fmt"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// This file computes the base of a mapping: what to subtract from a
// run-time address to get the address the ELF file's symbols and DWARF
// use. Every function here follows upstream pprof's logic
// (internal/elfexec and internal/binutils at the version go.mod pins)
// step for step, error texts included, so that each mapping kind (PIE and
// non-PIE executables, shared libraries mapped with an offset, kernel
// images, JIT objects under a [0, ^0) mapping) gets the base upstream
// would compute and every report stays byte-identical.

// mapping is the run-time mapping an ObjFile was opened for.
type mapping struct {
	start, limit, offset uint64
	// kernelOffset is the address of the kernel relocation symbol
	// (_stext or _text) in a kernel image, nil otherwise.
	kernelOffset *uint64
}

// pageSize is the page size pprof assumes for every architecture.
const pageSize = 4096

// textProgHeader returns the executable PT_LOAD segment that holds the
// .text section, or nil (elfexec.FindTextProgHeader).
func textProgHeader(f *elfrel.File) *elf.ProgHeader {
	for _, s := range f.Sections {
		if s.Name != ".text" {
			continue
		}
		if ph := textSegment(f.Progs, s.Addr); ph != nil {
			return ph
		}
	}
	return nil
}

// programHeader returns the segment of f that the mapping m and the
// address addr fall in (binutils' elfMapping.findProgramHeader).
func (m *mapping) programHeader(f *elfrel.File, addr uint64) (*elf.ProgHeader, error) {
	return programHeaderOf(m, f.Progs, textProgHeader(f), addr)
}

// programHeaderOf is programHeader for the program headers progs of a
// file whose .text is in the segment text (nil if none).
func programHeaderOf(m *mapping, progs []elf.ProgHeader, text *elf.ProgHeader, addr uint64) (*elf.ProgHeader, error) {
	if m.kernelOffset != nil || m.start >= m.limit || m.limit >= 1<<63 {
		return text, nil
	}
	var phdrs []elf.ProgHeader
	for _, p := range progs {
		if p.Type == elf.PT_LOAD {
			phdrs = append(phdrs, p)
		}
	}
	if len(phdrs) == 0 {
		return nil, nil
	}
	headers := headersForMapping(phdrs, m.offset, m.limit-m.start)
	if len(headers) == 0 {
		return nil, errors.New("no program header matches mapping info")
	}
	if len(headers) == 1 {
		return headers[0], nil
	}
	return headerForFileOffset(headers, addr-m.start+m.offset)
}

// headersForMapping returns the PT_LOAD segments that overlap the mapping
// of mapSz bytes at file offset mapOff (elfexec.ProgramHeadersForMapping).
func headersForMapping(phdrs []elf.ProgHeader, mapOff, mapSz uint64) []*elf.ProgHeader {
	mapLimit := mapOff + mapSz
	var headers []*elf.ProgHeader
	for i := range phdrs {
		p := &phdrs[i]
		if p.Filesz == 0 {
			continue // such a segment's file offset can be anything
		}
		segLimit := p.Off + p.Memsz
		if p.Type == elf.PT_LOAD && mapOff < segLimit && p.Off < mapLimit {
			alignedSegOffset := uint64(0)
			if p.Off > (p.Vaddr & (p.Align - 1)) {
				alignedSegOffset = p.Off - (p.Vaddr & (p.Align - 1))
			}
			if mapOff < alignedSegOffset {
				continue // the mapping comes from an earlier segment
			}
			if mapOff > p.Off && (segLimit < mapOff+pageSize) && (mapLimit >= segLimit+pageSize) {
				continue // it comes from a later segment
			}
			headers = append(headers, p)
		}
	}
	return headers
}

// headerForFileOffset returns the one header that holds fileOffset
// (elfexec.HeaderForFileOffset).
func headerForFileOffset(headers []*elf.ProgHeader, fileOffset uint64) (*elf.ProgHeader, error) {
	var ph *elf.ProgHeader
	for _, h := range headers {
		if fileOffset >= h.Off && fileOffset < h.Off+h.Memsz {
			if ph != nil {
				return nil, fmt.Errorf("found second program header (%#v) that matches file offset %x, first program header is %#v. Is this a stripped binary, or does the first program segment contain uninitialized data?", *h, fileOffset, *ph)
			}
			ph = h
		}
	}
	if ph == nil {
		return nil, fmt.Errorf("no program header matches file offset %x", fileOffset)
	}
	return ph, nil
}

// kernelBase is the base of a kernel mapping, if one of the kernel
// layouts pprof knows matches (elfexec.kernelBase).
func kernelBase(loadSegment *elf.ProgHeader, stextOffset *uint64, start, limit, offset uint64) (uint64, bool) {
	const pageOffsetPpc64 = 0xc000000000000000
	if loadSegment.Vaddr == start-offset {
		return offset, true
	}
	if start == 0 && limit != 0 && stextOffset != nil {
		return start - *stextOffset, true
	}
	if start >= 0x8000000000000000 && limit > start && (offset == 0 || offset == pageOffsetPpc64 || offset == start) {
		if stextOffset != nil && (start%pageSize) == (*stextOffset%pageSize) {
			return start - *stextOffset, true
		}
		return start - loadSegment.Vaddr, true
	}
	if start%pageSize != 0 && stextOffset != nil && *stextOffset%pageSize == start%pageSize {
		return start - *stextOffset, true
	}
	return 0, false
}

// getBase returns what to subtract from a run-time address in the
// mapping [start, limit) at file offset offset of a file of type typ
// whose segment loadSegment holds the address (elfexec.GetBase).
func getBase(typ elf.Type, loadSegment *elf.ProgHeader, stextOffset *uint64, start, limit, offset uint64) (uint64, error) {
	if start == 0 && offset == 0 && (limit == ^uint64(0) || limit == 0) {
		// A mapping spanning the whole address space: the addresses
		// are the file's own already (a JIT object's, say).
		return 0, nil
	}
	switch typ {
	case elf.ET_EXEC:
		if loadSegment == nil {
			return 0, nil
		}
		if stextOffset == nil && start > 0 && start < 0x8000000000000000 {
			return start - offset + loadSegment.Off - loadSegment.Vaddr, nil
		}
		if base, match := kernelBase(loadSegment, stextOffset, start, limit, offset); match {
			return base, nil
		}
		if start == 0 && limit != 0 && stextOffset == nil {
			return start - loadSegment.Vaddr, nil
		}
		return 0, fmt.Errorf("don't know how to handle EXEC segment: %v start=0x%x limit=0x%x offset=0x%x", *loadSegment, start, limit, offset)
	case elf.ET_REL:
		if offset != 0 {
			return 0, fmt.Errorf("don't know how to handle mapping.Offset")
		}
		return start, nil
	case elf.ET_DYN:
		if loadSegment == nil {
			return start - offset, nil
		}
		if base, match := kernelBase(loadSegment, stextOffset, start, limit, offset); match {
			return base, nil
		}
		return start - offset + loadSegment.Off - loadSegment.Vaddr, nil
	}
	return 0, fmt.Errorf("don't know how to handle FileHeader.Type %v", typ)
}
