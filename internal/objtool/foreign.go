package objtool

import (
	"cmp"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
)

// foreignBin is a binary whose container package elfrel does not read:
// Mach-O (thin or fat), PE, or a 32-bit ELF executable or shared
// library, read with the standard library's debug/macho, debug/pe and debug/elf.
// Its DWARF is indexed by the same decoder as an ELF file's
// (jitsym.NewFromSections).
type foreignBin struct {
	path    string
	format  string // "Mach-O", "PE", "ELF"
	closer  io.Closer
	bo      binary.ByteOrder
	machine elf.Machine // for the disassembler; EM_NONE if unknown
	class   elf.Class   // ELF: 32- or 64-bit (RV32 and RV64 code differ)
	flags   uint32      // ELF: e_flags (a MIPS file's ABI)
	elf     *elf.File   // ELF: the file, open until close (for its PLT)
	// arm is, for 32-bit ARM, what its symbols say of each code
	// section, by the section's address (see armSection).
	arm     map[uint64]*armSection
	buildID string // hex: Mach-O LC_UUID or ELF GNU build ID; "" otherwise

	dwarf map[string]rawSection // by ELF name: ".debug_info", ...
	code  []rawSection          // executable sections, by address
	syms  []jitsym.Sym

	// ELF: the supplementary file the DWARF names, if hasSup, and the
	// file that holds the DWARF (see Tool.supFor).
	sup       elfrel.SupLink
	hasSup    bool
	dwarfPath string

	// Base computation (see foreignFile.base).
	textAddr  uint64 // Mach-O: __TEXT's vmaddr, if hasText
	hasText   bool
	imageBase uint64 // PE: the optional header's ImageBase
	elfType   elf.Type
	progs     []elf.ProgHeader // ELF: every program header
	textPH    *elf.ProgHeader  // ELF: the segment holding .text, or nil

	goBin   *gopclntab.Binary // ELF: its sections, for a Go table
	dynOnly bool              // ELF: syms are the dynamic symbols: it has no symbol table
}

// rawSection is one section of a foreign binary.
type rawSection struct {
	name       string
	addr, size uint64
	data       func() ([]byte, error)
}

// foreignSections serves a foreignBin's DWARF sections to jitsym.
type foreignSections struct {
	file string
	m    map[string]rawSection
}

func (s foreignSections) Size(name string) uint64 { return s.m[name].size }

func (s foreignSections) Section(name string) ([]byte, error) {
	sec, ok := s.m[name]
	if !ok {
		return nil, nil
	}
	b, err := sec.data()
	if err != nil {
		return nil, fmt.Errorf("reading section %s of %s: %w", sec.name, s.file, err)
	}
	return b[:min(uint64(len(b)), sec.size)], nil
}

// index builds b's jitsym index, with its DWARF's supplementary file sup
// (nil if none).
func (b *foreignBin) index(sup *jitsym.Sup) (*jitsym.Symbolizer, error) {
	return jitsym.NewFromSectionsWithSup(b.path, b.bo, foreignSections{file: b.path, m: b.dwarf}, b.syms, sup)
}

func (b *foreignBin) close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// errNotForeign says that a file is in none of the formats foreignBin reads.
var errNotForeign = errors.New("not a Mach-O, PE or ELF file")

// openForeign reads the binary at path, whose first bytes are magic.
func openForeign(path string, magic []byte, ds debugSearch) (*foreignBin, error) {
	le, be := binary.LittleEndian.Uint32(magic), binary.BigEndian.Uint32(magic)
	switch {
	case string(magic) == elf.ELFMAG:
		return openELF(path, ds)
	case le == macho.MagicFat || be == macho.MagicFat:
		return openFatMachO(path)
	case le == macho.Magic32 || le == macho.Magic64 || be == macho.Magic32 || be == macho.Magic64:
		f, err := macho.Open(path)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: %v", path, err)
		}
		b, err := fromMachO(path, f, f)
		if err == nil && b.dwarf[".debug_info"].size == 0 {
			b.addDSYM()
		}
		return b, err
	case string(magic[:2]) == "MZ":
		return openPE(path)
	}
	return nil, errNotForeign
}

// machoCPU is the Mach-O CPU type of the host, which picks the member of
// a fat file as upstream pprof picks it (binutils' openFatMachO).
func machoCPU() (macho.Cpu, bool) {
	switch runtime.GOARCH {
	case "386":
		return macho.Cpu386, true
	case "amd64", "amd64p32":
		return macho.CpuAmd64, true
	case "arm", "armbe", "arm64", "arm64be":
		return macho.CpuArm, true
	case "ppc":
		return macho.CpuPpc, true
	case "ppc64", "ppc64le":
		return macho.CpuPpc64, true
	}
	return 0, false
}

func openFatMachO(path string) (*foreignBin, error) {
	ff, err := macho.OpenFat(path)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %v", path, err)
	}
	if len(ff.Arches) == 0 {
		ff.Close()
		return nil, fmt.Errorf("empty fat Mach-O file: %s", path)
	}
	cpu, ok := machoCPU()
	if !ok {
		ff.Close()
		return nil, fmt.Errorf("unsupported host architecture for %s: %s", path, runtime.GOARCH)
	}
	// Upstream asks for macho.CpuArm on arm64 hosts, which no arm64
	// member matches; the 64-bit variant of the host's CPU is taken too.
	for _, a := range ff.Arches {
		if a.Cpu == cpu || a.Cpu == cpu|0x01000000 {
			b, err := fromMachO(path, a.File, ff)
			if err == nil && b.dwarf[".debug_info"].size == 0 {
				b.addDSYM()
			}
			return b, err
		}
	}
	ff.Close()
	return nil, fmt.Errorf("architecture not found in %s: %s", path, runtime.GOARCH)
}

// machoDWARFName returns the ELF name of the Mach-O section sect of
// segment seg if it is a DWARF section ("__debug_info" in "__DWARF" is
// ".debug_info"), or "". Section names are cut at 16 bytes.
func machoDWARFName(seg, sect string) string {
	if seg != "__DWARF" || !strings.HasPrefix(sect, "__debug_") {
		return ""
	}
	if sect == "__debug_str_offs" {
		return ".debug_str_offsets"
	}
	return "." + sect[2:]
}

func fromMachO(path string, f *macho.File, closer io.Closer) (*foreignBin, error) {
	b := &foreignBin{path: path, format: "Mach-O", closer: closer, bo: f.ByteOrder, dwarf: map[string]rawSection{}}
	switch f.Cpu {
	case macho.CpuAmd64:
		b.machine = elf.EM_X86_64
	case macho.Cpu386:
		b.machine = elf.EM_386
	case macho.CpuArm64:
		b.machine = elf.EM_AARCH64
	}
	if seg := f.Segment("__TEXT"); seg != nil {
		b.textAddr, b.hasText = seg.Addr, true
	}
	for _, l := range f.Loads {
		// LC_UUID (0x1b): 8 bytes of command header, 16 of UUID.
		if raw := l.Raw(); len(raw) == 24 && f.ByteOrder.Uint32(raw) == 0x1b {
			b.buildID = fmt.Sprintf("%x", raw[8:24])
		}
	}
	for _, s := range f.Sections {
		rs := rawSection{name: s.Seg + "," + s.Name, addr: s.Addr, size: s.Size, data: s.Data}
		if name := machoDWARFName(s.Seg, s.Name); name != "" {
			if _, dup := b.dwarf[name]; !dup {
				b.dwarf[name] = rs
			}
			continue
		}
		// S_ZEROFILL (1) and the like hold no bytes in the file.
		const attrPureInstructions, attrSomeInstructions = 0x80000000, 0x400
		if s.Flags&(attrPureInstructions|attrSomeInstructions) != 0 && s.Flags&0xff != 1 {
			b.code = append(b.code, rs)
		}
	}
	if f.Symtab != nil {
		for _, s := range f.Symtab.Syms {
			// Defined in a section (N_SECT) and not a debugging entry
			// (N_STAB).
			const nStab, nType, nSect = 0xe0, 0x0e, 0x0e
			if s.Type&nStab != 0 || s.Type&nType != nSect || s.Sect == 0 || int(s.Sect) > len(f.Sections) {
				continue
			}
			// llvm-symbolizer drops the leading underscore of C names.
			b.syms = append(b.syms, jitsym.Sym{Name: strings.TrimPrefix(s.Name, "_"), Addr: s.Value})
		}
		var bounds []uint64
		for _, s := range b.syms {
			bounds = append(bounds, s.Addr)
		}
		for _, s := range f.Sections {
			bounds = append(bounds, s.Addr+s.Size)
		}
		sizeSymbols(b.syms, bounds)
	}
	b.sortCode()
	return b, nil
}

// sizeSymbols gives each symbol of size 0 the size up to the first
// bound above its address, as LLVM's computeSymbolSizes does for formats
// without symbol sizes: its bounds are the addresses of every symbol,
// kept or not, and the ends of the sections.
func sizeSymbols(syms []jitsym.Sym, bounds []uint64) {
	slices.Sort(bounds)
	for i := range syms {
		if syms[i].Size != 0 {
			continue
		}
		k, found := slices.BinarySearch(bounds, syms[i].Addr)
		if found {
			for k < len(bounds) && bounds[k] == syms[i].Addr {
				k++
			}
		}
		if k < len(bounds) {
			syms[i].Size = bounds[k] - syms[i].Addr
		}
	}
}

func openPE(path string) (*foreignBin, error) {
	f, err := pe.Open(path)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %v", path, err)
	}
	b := &foreignBin{path: path, format: "PE", closer: f, bo: binary.LittleEndian, dwarf: map[string]rawSection{}}
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		b.imageBase = uint64(h.ImageBase)
	case *pe.OptionalHeader64:
		b.imageBase = h.ImageBase
	default:
		f.Close()
		return nil, fmt.Errorf("unknown OptionalHeader %T in %s", f.OptionalHeader, path)
	}
	switch f.Machine {
	case pe.IMAGE_FILE_MACHINE_AMD64:
		b.machine = elf.EM_X86_64
	case pe.IMAGE_FILE_MACHINE_I386:
		b.machine = elf.EM_386
	case pe.IMAGE_FILE_MACHINE_ARM64:
		b.machine = elf.EM_AARCH64
	}
	for _, s := range f.Sections {
		// The raw size is rounded up to the file alignment; what is
		// loaded is VirtualSize bytes (debug/pe's DWARF trims so too).
		size := uint64(s.Size)
		if s.VirtualSize > 0 && s.VirtualSize < s.Size {
			size = uint64(s.VirtualSize)
		}
		rs := rawSection{name: s.Name, addr: b.imageBase + uint64(s.VirtualAddress), size: size, data: s.Data}
		if strings.HasPrefix(s.Name, ".debug_") {
			if _, dup := b.dwarf[s.Name]; !dup {
				b.dwarf[s.Name] = rs
			}
			continue
		}
		if s.Characteristics&pe.IMAGE_SCN_CNT_CODE != 0 {
			b.code = append(b.code, rs)
		}
	}
	var bounds []uint64 // for sizeSymbols
	for i := 0; i < len(f.COFFSymbols); i++ {
		s := &f.COFFSymbols[i]
		i += int(s.NumberOfAuxSymbols)
		if s.SectionNumber <= 0 || int(s.SectionNumber) > len(f.Sections) {
			continue
		}
		// Section definitions (a static symbol with an auxiliary record
		// and no type) and file records are not symbols of code or data.
		sec := f.Sections[s.SectionNumber-1]
		addr := b.imageBase + uint64(sec.VirtualAddress) + uint64(s.Value)
		bounds = append(bounds, addr)
		const classStatic, classFile = 3, 103
		if s.StorageClass == classFile || (s.StorageClass == classStatic && s.NumberOfAuxSymbols > 0 && s.Type == 0) {
			continue
		}
		name, err := s.FullName(f.StringTable)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("error parsing %s: symbol %d: %v", path, i, err)
		}
		b.syms = append(b.syms, jitsym.Sym{Name: name, Addr: addr})
	}
	for _, s := range f.Sections {
		// LLVM's COFF section size: the smaller of the two.
		bounds = append(bounds, b.imageBase+uint64(s.VirtualAddress)+uint64(min(s.VirtualSize, s.Size)))
	}
	sizeSymbols(b.syms, bounds)
	b.sortCode()
	return b, nil
}

func openELF(path string, ds debugSearch) (*foreignBin, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %v", path, err)
	}
	if f.Type == elf.ET_REL {
		// Its DWARF would need relocating, which only elfrel does, for
		// the objects of the machines elfrel.Relocatable accepts.
		f.Close()
		return nil, errNotForeign
	}
	b := &foreignBin{path: path, format: "ELF", closer: f, elf: f, bo: f.ByteOrder, machine: f.Machine, class: f.Class,
		dwarf: map[string]rawSection{}, elfType: f.Type, progs: make([]elf.ProgHeader, len(f.Progs))}
	for i, p := range f.Progs {
		b.progs[i] = p.ProgHeader
	}
	var text *elf.Section
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 {
			b.code = append(b.code, rawSection{name: s.Name, addr: s.Addr, size: s.Size, data: s.Data})
		}
		if s.Name == ".text" && text == nil {
			text = s
		}
	}
	if b.dwarf, err = elfDWARF(path, f); err != nil {
		f.Close()
		return nil, err
	}
	if text != nil {
		b.textPH = textSegment(b.progs, text.Addr)
	}
	if id, err := elfrel.StdBuildID(f); err == nil && id != nil {
		b.buildID = fmt.Sprintf("%x", id)
	}
	b.goBin = gopclntab.StdBinary(path, f)
	if b.dwarf[".debug_info"].size == 0 {
		b.addELFDebugFile(f, ds)
	} else {
		b.sup, b.hasSup = elfrel.StdSupLink(f)
		b.dwarfPath = path
	}
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
		b.dynOnly = true
	}
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		f.Close()
		return nil, fmt.Errorf("error reading ELF file %s: %v", path, err)
	}
	if f.Machine == elf.EM_ARM {
		b.arm = armSectionsOf(f, syms)
	}
	if f.Machine == elf.EM_MIPS {
		b.flags = elfFlags(path, f)
	}
	file := "" // the last STT_FILE symbol's name
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FILE {
			file = s.Name
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_NOTYPE, elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
		default:
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(f.Sections) ||
			f.Sections[s.Section].Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if elfrel.MarkerSymbol(f.Machine, s.Name) {
			continue
		}
		sym := jitsym.Sym{Name: s.Name, Addr: elfrel.StartAddr(f.Machine, elf.ST_TYPE(s.Info), s.Value), Size: s.Size}
		if elf.ST_BIND(s.Info) == elf.STB_LOCAL {
			sym.File = file
		}
		b.syms = append(b.syms, sym)
	}
	b.sortCode()
	return b, nil
}

// elfFlags returns the e_flags of the ELF file f at path, which package
// debug/elf does not give; 0 if it cannot be read.
func elfFlags(path string, f *elf.File) uint32 {
	off := int64(36) // after e_entry, e_phoff and e_shoff
	if f.Class == elf.ELFCLASS64 {
		off = 48
	}
	r, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer r.Close()
	var b [4]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return 0
	}
	return f.ByteOrder.Uint32(b[:])
}

// armSectionsOf returns what the symbols syms of the 32-bit ARM file f
// say of its sections (armMarks), by section address.
func armSectionsOf(f *elf.File, syms []elf.Symbol) map[uint64]*armSection {
	var m armMarks
	for _, s := range syms {
		if s.Section > elf.SHN_UNDEF && int(s.Section) < len(f.Sections) && s.Section < elf.SHN_LORESERVE {
			m.add(int(s.Section), s.Name, elf.ST_TYPE(s.Info), s.Value)
		}
	}
	out := map[uint64]*armSection{}
	for i, as := range m.sections() {
		out[f.Sections[i].Addr] = as
	}
	return out
}

// elfDWARF returns the DWARF sections of the ELF file f at path, by
// name; compressed ones (SHF_COMPRESSED or .zdebug_, which debug/elf
// decompresses) are read whole to learn their size.
func elfDWARF(path string, f *elf.File) (map[string]rawSection, error) {
	dwarf := map[string]rawSection{}
	for _, s := range f.Sections {
		name := s.Name
		switch {
		case strings.HasPrefix(name, ".debug_"):
		case strings.HasPrefix(name, ".zdebug_"):
			name = "." + name[2:]
		default:
			continue
		}
		if _, dup := dwarf[name]; dup {
			continue
		}
		rs := rawSection{name: s.Name, addr: s.Addr, size: s.Size, data: s.Data}
		if s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug_") {
			data, err := s.Data()
			if err != nil {
				return nil, fmt.Errorf("error reading ELF file %s: section %s: %v", path, s.Name, err)
			}
			rs.size = uint64(len(data))
			rs.data = func() ([]byte, error) { return data, nil }
		}
		dwarf[name] = rs
	}
	return dwarf, nil
}

// addELFDebugFile takes b's DWARF from the separate debug file of the ELF
// file f, found where llvm-symbolizer finds it (see debugCandidates, then
// ds.fetch), with the same class and machine and with DWARF.
func (b *foreignBin) addELFDebugFile(f *elf.File, ds debugSearch) {
	id, _ := hex.DecodeString(b.buildID)
	for _, c := range debugCandidates(b.path, id, elfDebugLink(f), ds.dirs) {
		if c.matches() && b.useELFDebugFile(f, c.path) {
			return
		}
	}
	if ds.fetch != nil && len(id) > 0 {
		if p := ds.fetch(b.path, id); p != "" {
			b.useELFDebugFile(f, p)
		}
	}
}

// useELFDebugFile takes b's DWARF from the file at path, if it is an
// ELF file of f's class and machine with DWARF, and reports whether it
// did.
func (b *foreignBin) useELFDebugFile(f *elf.File, path string) bool {
	d, err := elf.Open(path)
	if err != nil {
		return false
	}
	if d.Class == f.Class && d.Machine == f.Machine {
		if dwarf, err := elfDWARF(path, d); err == nil && dwarf[".debug_info"].size > 0 {
			b.dwarf = dwarf
			b.closer = multiCloser{b.closer, d}
			b.sup, b.hasSup = elfrel.StdSupLink(d)
			b.dwarfPath = path
			return true
		}
	}
	d.Close()
	return false
}

// elfDebugLink reads the .gnu_debuglink section of f: a file name, zero
// padding to 4 bytes, and the file's CRC-32.
func elfDebugLink(f *elf.File) debugLink {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Size > 4096 {
		return debugLink{}
	}
	data, err := s.Data()
	if err != nil {
		return debugLink{}
	}
	name, crc, ok := elfrel.ParseDebugLink(data, f.ByteOrder)
	return debugLink{name, crc, ok}
}

// textSegment returns a copy of the executable PT_LOAD segment holding
// the address textAddr, or nil.
func textSegment(progs []elf.ProgHeader, textAddr uint64) *elf.ProgHeader {
	for i := range progs {
		p := &progs[i]
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && textAddr >= p.Vaddr && textAddr < p.Vaddr+p.Memsz {
			ph := *p
			return &ph
		}
	}
	return nil
}

func (b *foreignBin) sortCode() {
	slices.SortFunc(b.code, func(x, y rawSection) int { return cmp.Compare(x.addr, y.addr) })
}

// addDSYM takes b's DWARF from its dSYM bundle, where llvm-symbolizer
// looks for it: PATH.dSYM/Contents/Resources/DWARF/BASENAME, if that is
// a Mach-O file with the same UUID (or either has none). Linkers leave
// the DWARF of a Mach-O executable in its object files; dsymutil
// collects it there. The dSYM of a fat executable is fat too: its member
// with b's UUID (without one, for b's CPU) is taken, as llvm-symbolizer
// takes it.
func (b *foreignBin) addDSYM() {
	dsym := filepath.Join(b.path+".dSYM", "Contents", "Resources", "DWARF", filepath.Base(b.path))
	d, err := b.openDSYM(dsym)
	if err != nil {
		return
	}
	if d.buildID != b.buildID && d.buildID != "" && b.buildID != "" || d.dwarf[".debug_info"].size == 0 {
		d.close()
		return
	}
	b.dwarf, b.bo = d.dwarf, d.bo
	b.closer = multiCloser{b.closer, d.closer}
}

// openDSYM reads the dSYM file at path for b: a thin Mach-O file, or the
// member of a fat one with b's UUID, else the first for b's CPU.
func (b *foreignBin) openDSYM(path string) (*foreignBin, error) {
	if f, err := macho.Open(path); err == nil {
		d, err := fromMachO(path, f, f)
		if err != nil {
			f.Close()
		}
		return d, err
	}
	ff, err := macho.OpenFat(path)
	if err != nil {
		return nil, err
	}
	var byCPU *foreignBin
	for _, a := range ff.Arches {
		d, err := fromMachO(path, a.File, nil)
		if err != nil {
			continue
		}
		if b.buildID != "" && d.buildID == b.buildID {
			d.closer = ff
			return d, nil
		}
		if byCPU == nil && d.machine == b.machine && (b.buildID == "" || d.buildID == "") {
			byCPU = d
		}
	}
	if byCPU == nil {
		ff.Close()
		return nil, fmt.Errorf("%s: no member for %s", path, b.path)
	}
	byCPU.closer = ff
	return byCPU, nil
}

// multiCloser closes each of its closers, returning the first error.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var first error
	for _, c := range m {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
