package gopclntab

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// ErrNoTable is returned by OpenELF for a file without a .gopclntab
// section: not a Go binary.
var ErrNoTable = errors.New("gopclntab: no .gopclntab section")

// Words of the runtime's moduledata (runtime/symtab.go): the pcHeader
// pointer, six slices of three words, then one word each, the same in Go
// 1.19 and later up to the types range, which Go 1.20's covctrs and
// ecovctrs move two words on.
const (
	mdFuncnametab = 1
	mdText        = 22
	mdNoptrdata   = 24
)

// moduleLayout gives the words of the types range and of gofunc in a
// release's moduledata, and how many words are read.
type moduleLayout struct{ types, etypes, gofunc, words int }

var (
	module120 = moduleLayout{types: 37, etypes: 38, gofunc: 40, words: 41}
	module119 = moduleLayout{types: 35, etypes: 36, gofunc: 38, words: 39}
)

// A Binary is an ELF executable or shared library as Open reads it.
type Binary struct {
	Name      string // used in errors
	Machine   elf.Machine
	Class     elf.Class
	ByteOrder binary.ByteOrder
	Sections  []Section
}

// A Section is one section of a Binary.
type Section struct {
	Name       string
	Type       elf.SectionType
	Flags      elf.SectionFlag
	Addr, Size uint64
	Data       func() ([]byte, error) // its contents
}

// section returns the index of the first section called name, or -1.
func (b *Binary) section(name string) int {
	for k := range b.Sections {
		if b.Sections[k].Name == name {
			return k
		}
	}
	return -1
}

// ELFBinary returns the Binary of an ELF file read by package elfrel.
func ELFBinary(f *elfrel.File) *Binary {
	b := &Binary{Name: f.Name, Machine: f.Machine, Class: f.Class, ByteOrder: f.ByteOrder}
	for k, s := range f.Sections {
		b.Sections = append(b.Sections, Section{Name: s.Name, Type: s.Type, Flags: s.Flags, Addr: s.Addr, Size: s.Size,
			Data: func() ([]byte, error) { return f.SectionData(k) }})
	}
	return b
}

// StdBinary returns the Binary of an ELF file read by package debug/elf:
// 32-bit Go binaries, which package elfrel leaves to it.
func StdBinary(name string, f *elf.File) *Binary {
	b := &Binary{Name: name, Machine: f.Machine, Class: f.Class, ByteOrder: f.ByteOrder}
	for _, s := range f.Sections {
		b.Sections = append(b.Sections, Section{Name: s.Name, Type: s.Type, Flags: s.Flags, Addr: s.Addr, Size: s.Size, Data: s.Data})
	}
	return b
}

// OpenELF returns the table of the Go binary f, as Open does.
func OpenELF(f *elfrel.File) (*Table, error) {
	return Open(ELFBinary(f))
}

// Open returns the table of the Go binary b (an executable or shared
// library), with what it needs from the runtime's module data: the
// address the functions' entry offsets count from, and go:func.*, where
// the inlining trees are. A stripped binary has no symbol for either, so
// the module data is found as the runtime's own pointer to the table,
// in the file or, in a position-independent binary, in a relative
// dynamic relocation. If it is not found (or the binary is of Go 1.18,
// whose function data are pointers, not offsets from go:func.*), the
// table still gives functions, files and lines, without inline frames
// (see [Table.Inlining]).
func Open(f *Binary) (*Table, error) {
	i := f.section(".gopclntab")
	if i < 0 {
		return nil, ErrNoTable
	}
	sec := &f.Sections[i]
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(data)
	if err != nil {
		return nil, err
	}
	text := h.TextStart
	if text == 0 {
		if j := f.section(".text"); j >= 0 {
			text = f.Sections[j].Addr
		}
	}
	layout := module120
	if h.Version == 118 {
		// The same format for Go 1.18 and 1.19: the release is in the
		// build information.
		if minor, ok := goMinor(f); !ok || minor < 19 {
			return New(data, text, nil)
		}
		layout = module119
	}
	var gofunc []byte
	md, found := findModuledata(f, h, sec.Addr, layout)
	if found {
		if inCode(f, md[mdText]) {
			text = md[mdText]
		}
		if g := md[layout.gofunc]; g >= sec.Addr && g-sec.Addr <= uint64(len(data)) {
			gofunc = data[g-sec.Addr:]
		} else if gofunc, err = dataAt(f, g); err != nil {
			gofunc = nil
		}
	}
	return New(data, text, gofunc)
}

// inCode reports whether addr is in an executable section of f.
func inCode(f *Binary, addr uint64) bool {
	for k := range f.Sections {
		if s := &f.Sections[k]; s.Flags&elf.SHF_EXECINSTR != 0 && addr >= s.Addr && addr-s.Addr < s.Size {
			return true
		}
	}
	return false
}

// dataAt returns the contents of the loaded section of f holding addr,
// from addr on.
func dataAt(f *Binary, addr uint64) ([]byte, error) {
	for k := range f.Sections {
		s := &f.Sections[k]
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr || addr-s.Addr >= s.Size {
			continue
		}
		d, err := s.Data()
		if err != nil {
			return nil, err
		}
		if addr-s.Addr >= uint64(len(d)) {
			break
		}
		return d[addr-s.Addr:], nil
	}
	return nil, fmt.Errorf("%s: no section holds address %#x", f.Name, addr)
}

// findModuledata returns the words of the runtime's first moduledata,
// whose first word points to the table at pcln and whose second (its
// funcnametab slice) to the function names, and which holds the start of
// .noptrdata and a types range where layout puts them.
func findModuledata(f *Binary, h Header, pcln uint64, layout moduleLayout) ([]uint64, bool) {
	ps := uint64(h.PtrSize)
	want := pcln + h.FuncnameOffset
	noptr := f.section(".noptrdata")
	// Go 1.26 puts it in its own section, releases before in .noptrdata;
	// other data sections are looked through last.
	var order []int
	for _, name := range []string{".go.module", ".noptrdata"} {
		if k := f.section(name); k >= 0 {
			order = append(order, k)
		}
	}
	for k := range f.Sections {
		if k != noptr && f.Sections[k].Name != ".go.module" {
			order = append(order, k)
		}
	}
	relocs := relativeRelocs(f)
	for _, k := range order {
		s := &f.Sections[k]
		if s.Flags&(elf.SHF_ALLOC|elf.SHF_WRITE) != elf.SHF_ALLOC|elf.SHF_WRITE || s.Type != elf.SHT_PROGBITS {
			continue
		}
		data, err := s.Data()
		if err != nil || s.Addr+uint64(len(data)) < s.Addr {
			continue // unreadable, or wrapping around the address space
		}
		// The relocations of the section's words.
		lo := sort.Search(len(relocs), func(i int) bool { return relocs[i].off >= s.Addr })
		hi := sort.Search(len(relocs), func(i int) bool { return relocs[i].off >= s.Addr+uint64(len(data)) })
		rel := relocs[lo:hi]
		word := func(addr uint64) uint64 {
			if i := sort.Search(len(rel), func(i int) bool { return rel[i].off >= addr }); i < len(rel) && rel[i].off == addr {
				return rel[i].addend
			}
			o := addr - s.Addr
			if ps == 4 {
				return uint64(h.ByteOrder.Uint32(data[o:]))
			}
			return h.ByteOrder.Uint64(data[o:])
		}
		try := func(addr uint64) ([]uint64, bool) {
			if addr%ps != 0 || addr-s.Addr > uint64(len(data)) || uint64(len(data))-(addr-s.Addr) < uint64(layout.words)*ps {
				return nil, false
			}
			// A relocated word's value is its addend: position-independent
			// binaries leave the words themselves zero.
			if word(addr) != pcln || word(addr+mdFuncnametab*ps) != want {
				return nil, false
			}
			md := make([]uint64, layout.words)
			for i := range md {
				md[i] = word(addr + uint64(i)*ps)
			}
			if noptr >= 0 && md[mdNoptrdata] != f.Sections[noptr].Addr || md[layout.types] > md[layout.etypes] {
				return nil, false
			}
			return md, true
		}
		for o := uint64(0); o+ps <= uint64(len(data)); o += ps {
			if md, ok := try(s.Addr + o); ok {
				return md, true
			}
		}
	}
	return nil, false
}

// reloc is a relative dynamic relocation: the word at off holds the
// load base plus addend.
type reloc struct{ off, addend uint64 }

// relativeRelocs returns the relative dynamic relocations of f, in
// address order: where a position-independent binary keeps its pointers'
// values.
func relativeRelocs(f *Binary) []reloc {
	var typ uint32
	switch f.Machine {
	case elf.EM_X86_64:
		typ = uint32(elf.R_X86_64_RELATIVE)
	case elf.EM_AARCH64:
		typ = uint32(elf.R_AARCH64_RELATIVE)
	case elf.EM_PPC64:
		typ = uint32(elf.R_PPC64_RELATIVE)
	case elf.EM_S390:
		typ = uint32(elf.R_390_RELATIVE)
	case elf.EM_RISCV:
		typ = uint32(elf.R_RISCV_RELATIVE)
	case elf.EM_LOONGARCH:
		typ = uint32(elf.R_LARCH_RELATIVE)
	default:
		return nil
	}
	if f.Class != elf.ELFCLASS64 {
		return nil
	}
	var out []reloc
	for k := range f.Sections {
		s := &f.Sections[k]
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for p := 0; p+24 <= len(data); p += 24 {
			off := f.ByteOrder.Uint64(data[p:])
			if uint32(f.ByteOrder.Uint64(data[p+8:])) == typ {
				out = append(out, reloc{off, f.ByteOrder.Uint64(data[p+16:])})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].off < out[j].off })
	return out
}

// buildInfoMagic starts the .go.buildinfo section (debug/buildinfo).
const buildInfoMagic = "\xff Go buildinf:"

// goMinor returns the minor number of the Go release that built f, from
// the version string in its build information, as Go 1.18 and later
// write it there (a length-prefixed string at offset 32); a development
// version counts as the newest.
func goMinor(f *Binary) (int, bool) {
	i := f.section(".go.buildinfo")
	if i < 0 {
		return 0, false
	}
	data, err := f.Sections[i].Data()
	if err != nil || len(data) < 32 || string(data[:len(buildInfoMagic)]) != buildInfoMagic || data[15]&2 == 0 {
		return 0, false
	}
	n, k := binary.Uvarint(data[32:])
	if k <= 0 || n > uint64(len(data)-32-k) {
		return 0, false
	}
	v := string(data[32+k : 32+k+int(n)])
	if strings.HasPrefix(v, "devel") {
		return 1 << 30, true
	}
	rest, ok := strings.CutPrefix(v, "go1.")
	if !ok {
		return 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	minor, err := strconv.Atoi(rest[:end])
	return minor, err == nil
}
