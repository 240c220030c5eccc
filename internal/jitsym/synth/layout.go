package synth

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// A Placement records the address Scatter gave one section.
type Placement struct {
	Index int    // section header index
	Name  string // section name
	Addr  uint64 // new sh_addr
	Size  uint64 // sh_size
	Exec  bool   // SHF_EXECINSTR
}

// ScatterOptions says where Scatter puts sections.
type ScatterOptions struct {
	Base uint64 // lowest address; rounded up to a page
	Span uint64 // the sections and the holes between them fill about this many bytes
	Seed uint64 // seeds the section order and hole sizes; equal seeds give equal layouts
}

// Scatter rewrites, in place, the sh_addr of every non-empty SHF_ALLOC
// section of the ET_REL object obj, the way a JIT host's dump records
// where RuntimeDyld loaded each section: sections land in a shuffled
// order, each aligned to its sh_addralign (at least 16), with holes
// between them that other mappings could fill. Other sections keep their
// sh_addr. It returns the placements in address order.
func Scatter(obj []byte, opt ScatterOptions) ([]Placement, error) {
	f, err := elfrel.NewFile(bytes.NewReader(obj), int64(len(obj)), "object")
	if err != nil {
		return nil, err
	}
	var ps []Placement
	var total uint64
	for i, s := range f.Sections {
		if i == 0 || s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 {
			continue
		}
		ps = append(ps, Placement{Index: i, Name: s.Name, Size: s.Size, Exec: s.Flags&elf.SHF_EXECINSTR != 0})
		total += s.Size
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	const page = 4096
	var meanHole uint64
	if n := uint64(len(ps)); n > 0 && opt.Span > total {
		meanHole = (opt.Span - total) / n
	}
	addr := alignUp(opt.Base, page)
	for k := range ps {
		p := &ps[k]
		align := max(f.Sections[p.Index].Addralign, 16)
		if align&(align-1) != 0 {
			return nil, fmt.Errorf("section %s: alignment %d is not a power of two", p.Name, align)
		}
		p.Addr = alignUp(addr, align)
		if f.Class == elf.ELFCLASS32 && p.Addr+p.Size > 1<<32 {
			return nil, fmt.Errorf("section %s at %#x does not fit a 32-bit address space", p.Name, p.Addr)
		}
		if err := setAddr(obj, f, p.Index, p.Addr); err != nil {
			return nil, err
		}
		addr = p.Addr + p.Size
		if meanHole > 0 {
			addr += rng.Uint64N(2 * meanHole)
		}
	}
	return ps, nil
}

// SetAddr sets the sh_addr of every section that pick selects to the
// address it returns. Tests use it to give debug sections a non-zero
// address.
func SetAddr(obj []byte, pick func(s elfrel.Section) (uint64, bool)) error {
	f, err := elfrel.NewFile(bytes.NewReader(obj), int64(len(obj)), "object")
	if err != nil {
		return err
	}
	for i, s := range f.Sections {
		if a, ok := pick(s); ok && i > 0 {
			if err := setAddr(obj, f, i, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// setAddr writes addr into the sh_addr of section i of obj, read as f;
// a 32-bit object cannot hold an address of 4 GiB or more.
func setAddr(obj []byte, f *elfrel.File, i int, addr uint64) error {
	off, size := f.AddrField()
	at := f.SectionHeaderOffset(i) + off
	if size == 4 {
		if addr > math.MaxUint32 {
			return fmt.Errorf("section %d: address %#x does not fit a 32-bit object", i, addr)
		}
		f.ByteOrder.PutUint32(obj[at:], uint32(addr))
		return nil
	}
	f.ByteOrder.PutUint64(obj[at:], addr)
	return nil
}

// HideSection renames, in place, every section called name (and the
// relocation sections whose names end in it, which share its bytes in the
// section name table) by replacing the character after its leading '.'
// with 'X' (".debug_aranges" becomes ".Xebug_aranges"), so that no DWARF
// reader finds it. (A leading '_' would not do: LLVM skips any leading
// '.', '_' and 'z' when matching DWARF section names.) Generate uses it to drop .debug_aranges, which
// LLVM does not emit and which llvm-symbolizer reads unrelocated. It
// reports whether a section was renamed.
func HideSection(obj []byte, name string) (bool, error) {
	f, err := elfrel.NewFile(bytes.NewReader(obj), int64(len(obj)), "object")
	if err != nil {
		return false, err
	}
	strndx := f.NameTable()
	if strndx == 0 {
		return false, nil
	}
	tab := f.Sections[strndx]
	found := false
	for i, s := range f.Sections {
		if i == 0 || s.Name != name || len(name) < 2 || !strings.HasPrefix(name, ".") {
			continue
		}
		off := tab.Offset + uint64(f.ByteOrder.Uint32(obj[f.SectionHeaderOffset(i):]))
		obj[off+1] = 'X'
		found = true
	}
	return found, nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }
