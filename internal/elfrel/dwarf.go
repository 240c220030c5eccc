package elfrel

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Debug holds an object's DWARF sections with relocations applied.
type Debug struct {
	file     string
	sections map[string][]byte

	once sync.Once
	data *dwarf.Data
	err  error
}

// Data returns a *dwarf.Data reading the relocated sections, built with
// dwarf.New and AddSection on first use. Like any *dwarf.Data, its readers
// must not be used from several goroutines at once. (Go's reader allocates
// a new string for every string attribute of every entry it decodes;
// package jitsym decodes entries itself.)
func (d *Debug) Data() (*dwarf.Data, error) {
	d.once.Do(func() {
		sec := func(name string) []byte { return d.sections[name] }
		dd, err := dwarf.New(sec(".debug_abbrev"), nil, nil, sec(".debug_info"), sec(".debug_line"), nil, sec(".debug_ranges"), sec(".debug_str"))
		if err != nil {
			d.err = dwarfErr(d.file, err)
			return
		}
		for _, name := range []string{".debug_addr", ".debug_line_str", ".debug_str_offsets", ".debug_rnglists"} {
			if b := d.sections[name]; b != nil {
				if err := dd.AddSection(name, b); err != nil {
					d.err = dwarfErr(d.file, err)
					return
				}
			}
		}
		d.data = dd
	})
	return d.data, d.err
}

// Section returns the relocated contents of the named DWARF section
// (".debug_info", ".debug_line", ...), or nil if the object has none or
// it is not one [File.DWARF] loads. The caller must not modify it.
func (d *Debug) Section(name string) []byte { return d.sections[name] }

// loadedDebug reports whether DWARF loads the section called name: the
// ones a symbolizer needs. Location lists, frames, aranges, pubnames and
// type units are left out (LLVM's aranges are absent anyway, and
// relocating sections nobody reads costs time).
func loadedDebug(name string) bool {
	switch name {
	case ".debug_abbrev", ".debug_info", ".debug_line", ".debug_str",
		".debug_ranges", ".debug_addr", ".debug_line_str",
		".debug_str_offsets", ".debug_rnglists":
		return true
	}
	return false
}

// DWARF reads the object's DWARF sections, applies the SHT_RELA and
// SHT_REL sections that target them (see [File.SymbolAddr] for the value
// of a symbol) and returns them; [Debug.Data] gives a *dwarf.Data on them.
// It loads .debug_abbrev, .debug_info, .debug_line, .debug_str,
// .debug_ranges, .debug_addr, .debug_line_str, .debug_str_offsets and
// .debug_rnglists, and wraps [ErrNoDWARF] when there is no .debug_info. It
// reads only those sections, their relocations and the symbol table;
// relocations are streamed, not held in memory.
//
// Several sections with the same name (COMDAT groups) are concatenated
// in section header order, the way a linker would lay them out: a symbol
// in such a section, and a PC-relative relocation's place, are offset by
// where the section starts in the concatenation.
func (f *File) DWARF() (*Debug, error) {
	type member struct {
		name string
		base uint64 // offset of the section in its name's buffer
	}
	members := make(map[int]member) // by section index
	var order []int                 // indexes of members, ascending
	sizes := make(map[string]uint64)
	// Sections that overlap in the file could make us read and allocate
	// more than it holds; in a real object, the sections read here occupy
	// distinct bytes.
	budget := uint64(f.size)
	for i := 1; i < len(f.Sections); i++ {
		s := &f.Sections[i]
		if strings.HasPrefix(s.Name, ".zdebug_") {
			return nil, &UnsupportedError{File: f.Name, Section: s.Name, Msg: "compressed (.zdebug) debug section"}
		}
		if !loadedDebug(s.Name) {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			return nil, &UnsupportedError{File: f.Name, Section: s.Name, Msg: "compressed debug section (SHF_COMPRESSED)"}
		}
		if s.Type == elf.SHT_NOBITS {
			continue // stripped into a separate debug file: no contents
		}
		members[i] = member{name: s.Name, base: sizes[s.Name]}
		order = append(order, i)
		sizes[s.Name] += s.Size
		if err := f.spend(&budget, s); err != nil {
			return nil, err
		}
	}
	if _, ok := sizes[".debug_info"]; !ok {
		return nil, fmt.Errorf("%s: %w", f.Name, ErrNoDWARF)
	}

	sections := make(map[string][]byte, len(sizes))
	for name, size := range sizes {
		sections[name] = make([]byte, size)
	}
	for _, i := range order {
		m, s := members[i], &f.Sections[i]
		dst := sections[m.name][m.base : m.base+s.Size]
		if _, err := f.r.ReadAt(dst, int64(s.Offset)); err != nil {
			return nil, &FormatError{File: f.Name, Section: s.Name, Off: 0, Msg: fmt.Sprintf("cannot read %d bytes at file offset %#x", s.Size, s.Offset), Err: err}
		}
	}

	// S for every symbol of each symbol table a relocation section uses.
	symtabs := make(map[uint32][]uint64)
	buf := make([]byte, relocChunk*relaSize) // relocation entries, read a chunk at a time
	for i := 1; i < len(f.Sections); i++ {
		rs := &f.Sections[i]
		if rs.Type != elf.SHT_RELA && rs.Type != elf.SHT_REL {
			continue
		}
		m, ok := members[int(rs.Info)]
		if !ok {
			continue
		}
		if err := f.spend(&budget, rs); err != nil {
			return nil, err
		}
		symAddrs, ok := symtabs[rs.Link]
		if !ok {
			if err := f.spend(&budget, &f.Sections[rs.Link]); err != nil {
				return nil, err
			}
			syms, err := f.symbolsAt(int(rs.Link))
			if err != nil {
				return nil, err
			}
			symAddrs = make([]uint64, len(syms))
			for k := range syms {
				if m, ok := members[syms[k].Section]; ok {
					symAddrs[k] = m.base + syms[k].Value
				} else {
					symAddrs[k] = f.SymbolAddr(&syms[k])
				}
			}
			symtabs[rs.Link] = symAddrs
		}
		target := f.Sections[rs.Info]
		t := relocTarget{dst: sections[m.name][m.base : m.base+target.Size], base: m.base}
		if err := f.applyRelocSection(i, t, symAddrs, buf); err != nil {
			return nil, err
		}
	}

	return &Debug{file: f.Name, sections: sections}, nil
}

// spend charges the size of section s to budget, failing when the
// sections read add up to more than the file holds.
func (f *File) spend(budget *uint64, s *Section) error {
	if s.Size > *budget {
		return f.formatErr(s.Name, -1, "sections read for DWARF overlap: they add up to more than the %d-byte file", f.size)
	}
	*budget -= s.Size
	return nil
}

// relocChunk is how many relocation entries DWARF reads at a time: large
// relocation sections (GCC writes one per string and address) are
// streamed rather than held in memory.
const relocChunk = 4096

// applyRelocSection applies relocation section rs to t, reading it through
// buf. symAddrs holds S for each symbol of the symbol table rs links to.
func (f *File) applyRelocSection(rs int, t relocTarget, symAddrs []uint64, buf []byte) error {
	sec := &f.Sections[rs]
	entSize := uint64(relaSize)
	if sec.Type == elf.SHT_REL {
		entSize = relSize
	}
	if sec.Entsize != entSize || sec.Size%entSize != 0 {
		return f.formatErr(sec.Name, -1, "entry size %d and size %d, want entries of %d bytes", sec.Entsize, sec.Size, entSize)
	}
	chunk := uint64(len(buf)) / entSize * entSize
	for off := uint64(0); off < sec.Size; off += chunk {
		n := min(chunk, sec.Size-off)
		if _, err := f.r.ReadAt(buf[:n], int64(sec.Offset+off)); err != nil {
			return &FormatError{File: f.Name, Section: sec.Name, Off: int64(off), Msg: "cannot read relocations", Err: err}
		}
		if err := f.applyRelocs(rs, buf[:n], off, t, symAddrs); err != nil {
			return err
		}
	}
	return nil
}

// dwarfErr turns an error from debug/dwarf into a *FormatError naming the
// file and, for a dwarf.DecodeError, the section and offset.
func dwarfErr(file string, err error) error {
	var de dwarf.DecodeError
	if errors.As(err, &de) {
		return &FormatError{File: file, Section: ".debug_" + de.Name, Off: int64(de.Offset), Msg: de.Err}
	}
	return &FormatError{File: file, Off: -1, Msg: "cannot read DWARF", Err: err}
}
