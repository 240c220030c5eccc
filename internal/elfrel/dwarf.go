package elfrel

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/membudget"
	"github.com/klauspost/compress/zlib"
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
func loadedDebug(name string) (string, bool) {
	switch name {
	case ".debug_abbrev", ".debug_info", ".debug_line", ".debug_str",
		".debug_ranges", ".debug_addr", ".debug_line_str",
		".debug_str_offsets", ".debug_rnglists":
		return name, true
	}
	return "", false
}

// DWARF reads the object's DWARF sections, applies the SHT_RELA and
// SHT_REL sections that target them (see [File.SymbolAddr] for the value
// of a symbol) and returns them; [Debug.Data] gives a *dwarf.Data on them.
// It loads .debug_abbrev, .debug_info, .debug_line, .debug_str,
// .debug_ranges, .debug_addr, .debug_line_str, .debug_str_offsets and
// .debug_rnglists, and wraps [ErrNoDWARF] when there is no .debug_info. It
// reads only those sections, their relocations and the symbol table;
// relocations are streamed, not held in memory. To hold fewer of them at
// once, use [File.DebugLoader].
func (f *File) DWARF() (*Debug, error) {
	l, err := f.DebugLoader()
	if err != nil {
		return nil, err
	}
	sections := make(map[string][]byte, len(l.sections))
	for _, name := range l.names {
		if sections[name], err = l.Section(name); err != nil {
			return nil, err
		}
	}
	return &Debug{file: f.Name, sections: sections}, nil
}

// A DebugLoader reads the DWARF sections of an object one at a time, with
// their relocations applied, so that a reader can drop each section when
// done with it. It holds what it needs of the section headers and of the
// symbol table (the address of each symbol: 8 bytes per symbol), not the
// File: once it is made, the File's headers may be garbage collected, but
// the io.ReaderAt the File reads must stay open while sections are loaded.
// Its methods may be called concurrently if the ReaderAt allows it.
type DebugLoader struct {
	file      string
	r         io.ReaderAt
	std       stdELF // the file as debug/elf reads it, for Zstandard
	byteOrder byteOrder
	machine   elf.Machine
	lay       layout                   // the sizes of the file's class's structures
	names     []string                 // of the sections present, in header order
	sections  map[string]*debugSection // by name
	budget    *membudget.Budget        // see File.SetInflateBudget
	// stdNames is the bytes of section names debug/elf copies when it
	// opens the file of fileSize bytes (see unzstd).
	stdNames, fileSize uint64
}

// debugSection is every section header of one name that DebugLoader
// reads: concatenated, they make up the section's contents.
type debugSection struct {
	size    uint64
	members []debugMember
}

// debugMember is one section header of a debugSection.
type debugMember struct {
	name               string
	offset, size, base uint64 // base: its offset in the concatenation
	relocs             []relocSection
	// zoff and zsize locate the zlib (or, if zstd, Zstandard) stream of
	// a compressed section in the file (zoff is 0 if it is not
	// compressed); size is then its
	// size once decompressed.
	zoff, zsize uint64
	zstd        bool
}

// relocSection is an SHT_RELA or SHT_REL section applied to a debugMember.
type relocSection struct {
	name         string
	rel          bool // SHT_REL: implicit addends
	offset, size uint64
	symAddrs     []uint64 // S for each symbol of the symbol table it links to
}

// DebugLoader prepares to read the object's DWARF sections (those
// [File.DWARF] loads) one at a time with [DebugLoader.Section]. It checks
// them, their relocation sections and the symbol table those use, and
// computes each symbol's address; it wraps [ErrNoDWARF] when there is no
// .debug_info.
//
// Several sections with the same name (COMDAT groups) are concatenated
// in section header order, the way a linker would lay them out: a symbol
// in such a section, and a PC-relative relocation's place, are offset by
// where the section starts in the concatenation.
func (f *File) DebugLoader() (*DebugLoader, error) {
	return f.debugLoader(loadedDebug, ".debug_info")
}

// FrameLoader returns a loader of the file's .debug_frame (call frame
// information, which Go's linker writes compressed instead of
// .eh_frame), if it has one: Section(".debug_frame") then returns it
// decompressed and relocated, or nil.
func (f *File) FrameLoader() (*DebugLoader, error) {
	return f.debugLoader(func(name string) (string, bool) { return name, name == ".debug_frame" }, "")
}

// EHFrameLoader returns a loader of the .eh_frame of a relocatable
// object (a JIT object: its code's call frame information), if it has
// one: Section(".eh_frame") then returns it with its relocations applied
// (an FDE's PC-relative start becomes the code's load address less the
// field's offset in the section, as if the section were at address 0),
// or nil.
func (f *File) EHFrameLoader() (*DebugLoader, error) {
	return f.debugLoader(func(name string) (string, bool) { return name, name == ".eh_frame" }, "")
}

// DWOLoader is [File.DebugLoader] for a split DWARF file (a .dwo, as
// GCC's and clang's -gsplit-dwarf write it): it loads the sections a
// symbolizer needs of those a skeleton unit's DIEs are split into,
// .debug_info.dwo, .debug_abbrev.dwo, .debug_str.dwo,
// .debug_str_offsets.dwo and .debug_rnglists.dwo, under the names without
// ".dwo" (".debug_info", ...), and a DWARF package's (.dwp) index of
// them, .debug_cu_index. It wraps [ErrNoDWARF] when there is no
// .debug_info.dwo.
func (f *File) DWOLoader() (*DebugLoader, error) {
	return f.debugLoader(loadedDWO, ".debug_info")
}

// loadedDWO reports whether DWOLoader loads the section called name,
// and under which name.
func loadedDWO(name string) (string, bool) {
	switch name {
	case ".debug_info.dwo", ".debug_abbrev.dwo", ".debug_str.dwo", ".debug_str_offsets.dwo", ".debug_rnglists.dwo":
		return strings.TrimSuffix(name, ".dwo"), true
	case ".debug_cu_index": // a DWARF package's (.dwp)
		return name, true
	}
	return "", false
}

// debugLoader is DebugLoader for the sections load names: it gives
// the name each is loaded under, and false for the others.
func (f *File) debugLoader(load func(name string) (string, bool), require string) (*DebugLoader, error) {
	l := &DebugLoader{file: f.Name, r: f.r, byteOrder: f.ByteOrder, machine: f.Machine, lay: f.lay, sections: make(map[string]*debugSection), budget: f.inflate, fileSize: uint64(f.size)}
	for i := range f.Sections {
		l.stdNames += uint64(len(f.Sections[i].Name))
	}
	type memberAt struct {
		sec  *debugSection
		k    int    // index in sec.members
		base uint64 // offset of the section in its name's concatenation
	}
	members := make(map[int]memberAt) // by section index
	// Sections that overlap in the file could make us read and allocate
	// more than it holds; in a real object, the sections read here occupy
	// distinct bytes.
	budget := uint64(f.size)
	for i := 1; i < len(f.Sections); i++ {
		s := &f.Sections[i]
		name := s.Name
		if rest, ok := strings.CutPrefix(name, ".zdebug_"); ok {
			name = ".debug_" + rest // GNU's older compressed sections
		}
		name, ok := load(name)
		if !ok {
			continue
		}
		if s.Type == elf.SHT_NOBITS {
			continue // stripped into a separate debug file: no contents
		}
		size, zoff, zstd, err := f.contentSize(s)
		if err != nil {
			return nil, err
		}
		ds := l.sections[name]
		if ds == nil {
			ds = &debugSection{}
			l.sections[name] = ds
			l.names = append(l.names, name)
		}
		members[i] = memberAt{sec: ds, k: len(ds.members), base: ds.size}
		dm := debugMember{name: s.Name, offset: s.Offset, size: size, base: ds.size}
		if zoff != 0 {
			dm.zoff, dm.zsize, dm.zstd = s.Offset+zoff, s.Size-zoff, zstd
		}
		ds.members = append(ds.members, dm)
		ds.size += size
		if ds.size < size {
			return nil, f.formatErr(s.Name, -1, "sections of this name add up to more than 2^64 bytes")
		}
		if err := f.spend(&budget, s); err != nil {
			return nil, err
		}
	}
	if _, ok := l.sections[require]; !ok && require != "" {
		return nil, fmt.Errorf("%s: %w", f.Name, ErrNoDWARF)
	}

	symtabs := make(map[uint32][]uint64) // S for every symbol, by symbol table
	for i := 1; i < len(f.Sections); i++ {
		rs := &f.Sections[i]
		if rs.Type != elf.SHT_RELA && rs.Type != elf.SHT_REL {
			continue
		}
		m, ok := members[int(rs.Info)]
		if !ok {
			// A .rela.debug_* section must apply to a debug section: one
			// that applies to itself or to code would otherwise be
			// dropped without a word, and the DWARF read wrong.
			if target := &f.Sections[rs.Info]; isDebugRelocName(rs.Name) && (int(rs.Info) == i || !isDebugName(target.Name)) {
				return nil, f.formatErr(rs.Name, -1, "relocation section applies to section %d (%q), not to a debug section", rs.Info, target.Name)
			}
			continue
		}
		if err := f.spend(&budget, rs); err != nil {
			return nil, err
		}
		entSize := f.lay.rela
		if rs.Type == elf.SHT_REL {
			entSize = f.lay.rel
		}
		if rs.Entsize != entSize || rs.Size%entSize != 0 {
			return nil, f.formatErr(rs.Name, -1, "entry size %d and size %d, want entries of %d bytes", rs.Entsize, rs.Size, entSize)
		}
		symAddrs, ok := symtabs[rs.Link]
		if !ok {
			if err := f.spend(&budget, &f.Sections[rs.Link]); err != nil {
				return nil, err
			}
			var err error
			symAddrs, err = f.symbolAddrs(int(rs.Link), func(sec int) (uint64, bool) {
				m, ok := members[sec]
				return m.base, ok
			})
			if err != nil {
				return nil, err
			}
			symtabs[rs.Link] = symAddrs
		}
		dm := &m.sec.members[m.k]
		dm.relocs = append(dm.relocs, relocSection{name: rs.Name, rel: rs.Type == elf.SHT_REL, offset: rs.Offset, size: rs.Size, symAddrs: symAddrs})
	}
	return l, nil
}

// symbolAddrs returns S for each symbol of the symbol table in section i:
// for a symbol in a debug section that DebugLoader reads, its offset in
// the concatenation of that section's name (base gives where the section
// starts there), else [File.SymbolAddr].
func (f *File) symbolAddrs(i int, base func(sec int) (uint64, bool)) ([]uint64, error) {
	addrs := make([]uint64, 0, f.Sections[i].Size/f.lay.sym)
	err := f.scanSymbols(i, false, func(k int, s *Symbol) error {
		if b, ok := base(s.Section); ok {
			addrs = append(addrs, b+s.Value)
		} else {
			addrs = append(addrs, f.SymbolAddr(s))
		}
		return nil
	})
	return addrs, err
}

// Has reports whether the object has a section called name that the
// loader reads (a DWARF section with contents).
func (l *DebugLoader) Has(name string) bool { return l.sections[name] != nil }

// Size returns the size of the named section, as Section would return it,
// without reading it; 0 if the object has none.
func (l *DebugLoader) Size(name string) uint64 {
	if ds := l.sections[name]; ds != nil {
		return ds.size
	}
	return 0
}

// Compressed reports whether the named section is compressed in the
// file (SHF_COMPRESSED or .zdebug_): [DebugLoader.SectionRange] then
// decompresses all of it for any range.
func (l *DebugLoader) Compressed(name string) bool {
	if ds := l.sections[name]; ds != nil {
		for _, m := range ds.members {
			if m.zoff != 0 {
				return true
			}
		}
	}
	return false
}

// SectionRange reads size bytes at offset off of the named section, as
// Section would return them, reading only those bytes of a section that
// is not compressed: a DWARF package's units are slices of sections much
// larger than one unit's. It fails if the range is not within the
// section, or if the section has relocations. It may be called from
// several goroutines at once.
func (l *DebugLoader) SectionRange(name string, off, size uint64) ([]byte, error) {
	ds := l.sections[name]
	if ds == nil || off > ds.size || size > ds.size-off {
		return nil, &FormatError{File: l.file, Section: name, Off: int64(min(off, math.MaxInt64)),
			Msg: fmt.Sprintf("%d bytes at %#x are not within the section", size, off)}
	}
	data := make([]byte, size)
	for k := range ds.members {
		m := &ds.members[k]
		if len(m.relocs) > 0 {
			return nil, &FormatError{File: l.file, Section: m.name, Off: -1, Msg: "a section with relocations cannot be read in part"}
		}
		lo, hi := max(off, m.base), min(off+size, m.base+m.size)
		if lo >= hi {
			continue
		}
		dst := data[lo-off : hi-off]
		if m.zoff != 0 {
			if err := l.take(m.name, m.size); err != nil {
				return nil, err
			}
			whole := make([]byte, m.size)
			if err := l.inflate(m, whole); err != nil {
				return nil, err
			}
			copy(dst, whole[lo-m.base:])
			continue
		}
		if _, err := l.r.ReadAt(dst, int64(m.offset+lo-m.base)); err != nil {
			return nil, &FormatError{File: l.file, Section: m.name, Off: int64(lo - m.base), Msg: fmt.Sprintf("cannot read %d bytes at file offset %#x", hi-lo, m.offset+lo-m.base), Err: err}
		}
	}
	return data, nil
}

// Section reads the named DWARF section (".debug_info", ".debug_line",
// ...) into a new slice, the caller's to keep or modify, and applies its
// relocations. It returns nil, and no error, if the object has no such
// section or it is not one that [File.DWARF] loads.
func (l *DebugLoader) Section(name string) ([]byte, error) {
	ds := l.sections[name]
	if ds == nil {
		return nil, nil
	}
	var inflated uint64
	for k := range ds.members {
		if ds.members[k].zoff != 0 {
			inflated += ds.members[k].size
		}
	}
	if err := l.take(name, inflated); err != nil {
		return nil, err
	}
	data := make([]byte, ds.size)
	for k := range ds.members {
		m := &ds.members[k]
		dst := data[m.base : m.base+m.size]
		if m.zoff != 0 {
			if err := l.inflate(m, dst); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := l.r.ReadAt(dst, int64(m.offset)); err != nil {
			return nil, &FormatError{File: l.file, Section: m.name, Off: 0, Msg: fmt.Sprintf("cannot read %d bytes at file offset %#x", m.size, m.offset), Err: err}
		}
	}
	// Relocation entries are read a chunk at a time, in a buffer no larger
	// than the largest relocation section (small objects are common).
	bufSize := l.lay.rela
	for k := range ds.members {
		for _, rs := range ds.members[k].relocs {
			bufSize = max(bufSize, min(rs.size, relocChunk*l.lay.rela))
		}
	}
	var buf []byte
	for k := range ds.members {
		m := &ds.members[k]
		for _, rs := range m.relocs {
			if buf == nil {
				buf = make([]byte, bufSize)
			}
			t := relocTarget{name: m.name, dst: data[m.base : m.base+m.size], base: m.base}
			if err := l.applyRelocSection(&rs, t, buf); err != nil {
				return nil, err
			}
		}
	}
	return data, nil
}

// take takes n bytes from the loader's budget of decompressed sections
// (see File.SetInflateBudget) for the section called name.
func (l *DebugLoader) take(name string, n uint64) error {
	if n == 0 {
		return nil
	}
	if err := l.budget.Take(n); err != nil {
		return &FormatError{File: l.file, Section: name, Off: -1, Msg: "not decompressed", Err: err}
	}
	return nil
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
// buf.
func (l *DebugLoader) applyRelocSection(rs *relocSection, t relocTarget, buf []byte) error {
	entSize := l.lay.rela
	if rs.rel {
		entSize = l.lay.rel
	}
	chunk := uint64(len(buf)) / entSize * entSize
	for off := uint64(0); off < rs.size; off += chunk {
		n := min(chunk, rs.size-off)
		if _, err := l.r.ReadAt(buf[:n], int64(rs.offset+off)); err != nil {
			return &FormatError{File: l.file, Section: rs.name, Off: int64(off), Msg: "cannot read relocations", Err: err}
		}
		if err := l.applyRelocs(rs, buf[:n], off, t); err != nil {
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

// maxInflate bounds how much larger than its compressed bytes a section
// may claim to be: zlib's deflate cannot compress by more than about
// 1032 to 1, so a claim beyond that is a lie about the content, not a
// large section. Zstandard can compress more (runs of one byte), but
// debug sections come nowhere near it, and the same bound keeps what a
// hostile file makes us allocate to about a thousand times its size.
const maxInflate = 1032

// contentSize returns the size of section s's contents as DWARF readers
// see them: sh_size, or for a compressed section (SHF_COMPRESSED with an
// Elf64_Chdr or Elf32_Chdr, or a GNU .zdebug_ section with a "ZLIB" header) the
// decompressed size its header claims, with zoff the size of that header.
// zstd reports Zstandard compression (COMPRESS_ZSTD) rather than zlib.
// The claim is checked against what the compressed bytes could hold.
func (f *File) contentSize(s *Section) (size, zoff uint64, zstd bool, err error) {
	var hdr [chdrSize]byte
	read := func(n int) error {
		if s.Size < uint64(n) {
			return f.formatErr(s.Name, -1, "compressed section of %d bytes is too short for its %d-byte header", s.Size, n)
		}
		if _, err := f.r.ReadAt(hdr[:n], int64(s.Offset)); err != nil {
			return &FormatError{File: f.Name, Section: s.Name, Msg: "cannot read the compression header", Err: err}
		}
		return nil
	}
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		if err := read(int(f.lay.chdr)); err != nil {
			return 0, 0, false, err
		}
		switch t := elf.CompressionType(f.ByteOrder.Uint32(hdr[:])); t {
		case elf.COMPRESS_ZLIB:
		case elf.COMPRESS_ZSTD:
			zstd = true
		default:
			return 0, 0, false, &UnsupportedError{File: f.Name, Section: s.Name, Msg: fmt.Sprintf("SHF_COMPRESSED section with compression type %v (COMPRESS_ZLIB and COMPRESS_ZSTD are read)", t)}
		}
		// Elf64_Chdr: ch_type, ch_reserved, ch_size; Elf32_Chdr:
		// ch_type, ch_size.
		if f.lay.word == 4 {
			size, zoff = uint64(f.ByteOrder.Uint32(hdr[4:])), f.lay.chdr
		} else {
			size, zoff = f.ByteOrder.Uint64(hdr[8:]), chdrSize
		}
	case strings.HasPrefix(s.Name, ".zdebug_"):
		if err := read(12); err != nil {
			return 0, 0, false, err
		}
		if string(hdr[:4]) != "ZLIB" {
			return 0, 0, false, f.formatErr(s.Name, 0, "compressed section header is %q, want \"ZLIB\"", hdr[:4])
		}
		size, zoff = binary.BigEndian.Uint64(hdr[4:12]), 12
	default:
		return s.Size, 0, false, nil
	}
	if z := s.Size - zoff; size/maxInflate > z {
		return 0, 0, false, f.formatErr(s.Name, -1, "claims %d bytes once decompressed, more than %d compressed bytes can hold", size, z)
	}
	return size, zoff, zstd, nil
}

// inflate decompresses member m into dst, which must come out exactly
// full.
func (l *DebugLoader) inflate(m *debugMember, dst []byte) error {
	var err error
	switch {
	case m.zstd:
		var zr io.Reader
		if zr, err = l.unzstd(m); err == nil {
			err = readExactly(zr, dst)
		}
	case m.zsize <= maxWholeZ:
		var f *inflater
		if f, err = l.inflater(m, dst); err == nil {
			_, err = f.inflate(len(dst))
		}
	default:
		var zr io.Reader
		if zr, err = l.zlibStream(m); err == nil {
			err = readExactly(zr, dst)
		}
	}
	if err != nil {
		return &FormatError{File: l.file, Section: m.name, Off: 0, Msg: "cannot decompress the section", Err: err}
	}
	return nil
}

// readExactly reads dst full from the decompressed stream zr, which must
// end there.
func readExactly(zr io.Reader, dst []byte) error {
	n, err := io.ReadFull(zr, dst)
	if err != nil {
		return fmt.Errorf("%d bytes of the %d its header claims: %w", n, len(dst), err)
	}
	var one [1]byte
	if k, _ := zr.Read(one[:]); k != 0 {
		return fmt.Errorf("more than the %d bytes its header claims", len(dst))
	}
	return nil
}

// inflater returns an inflater of member m's zlib stream into dst, its
// compressed bytes read whole (no more than maxWholeZ).
func (l *DebugLoader) inflater(m *debugMember, dst []byte) (*inflater, error) {
	z := make([]byte, m.zsize)
	if n, err := l.r.ReadAt(z, int64(m.zoff)); n < len(z) {
		return nil, err
	}
	return newZlibInflater(z, dst)
}

// zlibStream returns a reader of member m's zlib stream, read from the
// file as it is decoded, by klauspost/compress's decoder: for streams
// of more than maxWholeZ.
func (l *DebugLoader) zlibStream(m *debugMember) (io.Reader, error) {
	return zlib.NewReader(bufio.NewReaderSize(io.NewSectionReader(l.r, int64(m.zoff), int64(m.zsize)), 256<<10))
}

// maxWholeZ bounds the compressed bytes of a section read whole, to be
// decoded by an inflater; larger ones are streamed through
// klauspost/compress's decoder.
const maxWholeZ = 64 << 20

// isDebugName reports whether name is a DWARF section's.
func isDebugName(name string) bool {
	return strings.HasPrefix(name, ".debug_") || strings.HasPrefix(name, ".zdebug_")
}

// isDebugRelocName reports whether name is a relocation section's for a
// DWARF section (.rela.debug_info, .rel.debug_line, ...).
func isDebugRelocName(name string) bool {
	rest, ok := strings.CutPrefix(name, ".rela")
	if !ok {
		rest, ok = strings.CutPrefix(name, ".rel")
	}
	return ok && isDebugName(rest)
}

// stdELF is a file opened with debug/elf, once.
type stdELF struct {
	once sync.Once
	f    *elf.File
	err  error
}

// unzstd returns the decompressed contents of member m, compressed with
// Zstandard. The standard library has no Zstandard decoder of its own to
// import, but debug/elf decompresses such sections: the file is opened
// with it the first time one is read.
func (l *DebugLoader) unzstd(m *debugMember) (io.Reader, error) {
	l.std.once.Do(func() {
		// debug/elf copies every section's name: names that all point at
		// one long string would take it thousands of times.
		if limit := 4*l.fileSize + 1<<20; l.stdNames > limit {
			l.std.err = fmt.Errorf("its section names add up to %d bytes, more than 4 times the file: they overlap", l.stdNames)
			return
		}
		l.std.f, l.std.err = elf.NewFile(l.r)
	})
	if l.std.err != nil {
		return nil, l.std.err
	}
	for _, s := range l.std.f.Sections {
		if s.Offset == m.offset && s.Flags&elf.SHF_COMPRESSED != 0 && s.Name == m.name {
			return s.Open(), nil
		}
	}
	return nil, errors.New("debug/elf finds no such compressed section")
}
