package cfi

import (
	"debug/elf"
	"fmt"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
)

// A File is the call frame information of an ELF executable or shared
// library, and where its segments load.
type File struct {
	*Table
	BuildID []byte // its GNU build ID, nil if none
	loads   []elf.ProgHeader
	rel     bool // a relocatable object, its tables relocated to load addresses
}

// ArchOf returns the unwinding description of machine m, nil if Unwind
// does not know it.
func ArchOf(m elf.Machine) *Arch {
	switch m {
	case elf.EM_X86_64:
		return X86_64
	case elf.EM_AARCH64:
		return ARM64
	}
	return nil
}

// OpenELF reads the call frame information of f: its .eh_frame and, for
// code that one does not cover, its .debug_frame. Those of a relocatable
// object with load addresses in its section headers (a JIT object) are
// relocated: their tables give load addresses ([File.Bias] is then 0 for
// any pc). A file of a machine Unwind does not know gets an
// *elfrel.UnsupportedError; a damaged table a *FormatError, with the
// File of what could be read.
func OpenELF(f *elfrel.File) (*File, error) {
	arch := ArchOf(f.Machine)
	if arch == nil || f.Class != elf.ELFCLASS64 {
		return nil, &elfrel.UnsupportedError{File: f.Name, Msg: fmt.Sprintf("unwinding %v code", f.Machine)}
	}
	out := &File{rel: f.Type == elf.ET_REL}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			out.loads = append(out.loads, p)
		}
	}
	out.BuildID, _ = f.BuildID()
	var sections []Section
	if i := f.Section(".eh_frame"); i >= 0 && f.Sections[i].Type != elf.SHT_NOBITS && out.rel {
		// Relocated as if at address 0, which the PC-relative fields
		// then make no difference to.
		l, err := f.EHFrameLoader()
		if err != nil {
			return nil, err
		}
		data, err := l.Section(".eh_frame")
		if err != nil {
			return nil, err
		}
		sections = append(sections, Section{Name: ".eh_frame", Data: data})
	} else if i >= 0 && f.Sections[i].Type != elf.SHT_NOBITS {
		data, err := f.SectionData(i)
		if err != nil {
			return nil, err
		}
		sections = append(sections, Section{Name: ".eh_frame", Data: data, Addr: f.Sections[i].Addr})
	}
	// .debug_frame, which Go's linker writes instead (compressed, as
	// the rest of its DWARF), is read as DWARF is: decompressed.
	if f.Section(".debug_frame") >= 0 || f.Section(".zdebug_frame") >= 0 {
		l, err := f.FrameLoader()
		if err != nil {
			return nil, err
		}
		data, err := l.Section(".debug_frame")
		if err != nil {
			return nil, err
		}
		if len(data) > 0 {
			sections = append(sections, Section{Name: ".debug_frame", Data: data})
		}
	}
	t, err := New(f.Name, arch, f.ByteOrder, 8, sections...)
	out.Table = t
	// Go code: the runtime's own SP-delta table, for a binary whose
	// .debug_frame went with its DWARF (-ldflags=-w, strip), on amd64
	// and arm64 (see Table.goStep).
	if (arch == X86_64 || arch == ARM64) && f.Section(".gopclntab") >= 0 {
		if gt, gerr := gopclntab.OpenELF(f); gerr == nil {
			t.goSP = func(addr uint64) (int64, int, bool) {
				d, steps, ok := gt.SPDelta(addr)
				return int64(d), steps, ok
			}
		}
	}
	return out, err
}

// Bias returns the difference between runtime and file addresses of the
// code at runtime address pc, in a mapping of the file at start with file
// offset offset (as /proc/PID/maps and perf's MMAP records give them);
// ok is false if no loadable segment holds pc.
func (f *File) Bias(start, offset, pc uint64) (bias uint64, ok bool) {
	if f.rel {
		return 0, true
	}
	return LoadBias(f.loads, start, offset, pc)
}

// LoadBias is [File.Bias] for a file whose program headers are progs.
func LoadBias(progs []elf.ProgHeader, start, offset, pc uint64) (bias uint64, ok bool) {
	if pc < start {
		return 0, false
	}
	off := pc - start + offset
	for _, p := range progs {
		if p.Type == elf.PT_LOAD && off >= p.Off && off-p.Off < p.Filesz {
			vaddr := off - p.Off + p.Vaddr
			return pc - vaddr, true
		}
	}
	return 0, false
}
