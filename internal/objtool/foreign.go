package objtool

import (
	"cmp"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"runtime"
	"slices"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/membudget"
	"github.com/jitpprof/pprof/internal/regfile"
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
	// syms are the symbols, or, if symSeq is not nil, symSeq yields
	// them, nsyms of them (see symbols).
	syms   []jitsym.Sym
	symSeq iter.Seq[jitsym.Sym]
	nsyms  int

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

	notes []string // what of it could not be read, each naming it, to be said once
}

// rawSection is one section of a foreign binary.
type rawSection struct {
	name       string
	addr, size uint64 // size: what data returns
	// fileSize is how many bytes of the file (or fat file's member) it
	// takes, for checkOverlap.
	fileSize uint64
	data     func() ([]byte, error)                 // all of its contents
	readAt   func(p []byte, off int64) (int, error) // part of them (code sections)
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
	var fe *elfrel.FormatError
	if err != nil && !errors.As(err, &fe) {
		err = &elfrel.FormatError{File: s.file, Section: sec.name, Off: -1, Msg: "cannot be read", Err: err}
	}
	if err != nil {
		return nil, err
	}
	return b[:min(uint64(len(b)), sec.size)], nil
}

// index builds b's jitsym index, with its DWARF's supplementary file sup
// (nil if none).
func (b *foreignBin) index(sup *jitsym.Sup) (*jitsym.Symbolizer, error) {
	seq, n := b.symbols()
	return jitsym.NewFromSeq(b.path, b.bo, foreignSections{file: b.path, m: b.dwarf}, seq, n, sup)
}

// symbols returns b's symbols and how many there are. An ELF file's are
// read from its symbol table again on each pass, the names parts of one
// copy of its string table: a file of 5,000,000 symbols took 990 MB when
// they were held as well as indexed, 756 MB since.
func (b *foreignBin) symbols() (iter.Seq[jitsym.Sym], int) {
	if b.symSeq != nil {
		return b.symSeq, b.nsyms
	}
	return slices.Values(b.syms), len(b.syms)
}

func (b *foreignBin) close() error {
	if b.closer != nil {
		return b.closer.Close()
	}
	return nil
}

// errNotForeign says that a file is in none of the formats foreignBin reads.
var errNotForeign = errors.New("not a Mach-O, PE or ELF file")

// foreignOpts says how a foreign binary is read: where its separate debug
// file is looked for, under dirs (see debugCandidates), then, if fetch is
// not nil, where fetch puts it (see Tool.fetchDebug); and the budget its
// compressed debug sections are decompressed within.
type foreignOpts struct {
	dirs    []string
	fetch   func(path string, id []byte) string
	inflate *membudget.Budget
}

// openForeign reads the binary at path, whose first bytes are magic. It
// opens only a regular file (see package regfile), and checks the tables
// the standard library's readers copy before handing it to them (see
// stdcheck.go).
func openForeign(path string, magic []byte, o foreignOpts) (*foreignBin, error) {
	fd, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	var b *foreignBin
	le, be := binary.LittleEndian.Uint32(magic), binary.BigEndian.Uint32(magic)
	switch {
	case string(magic) == elf.ELFMAG:
		b, err = openELF(path, fd, size, o)
	case le == macho.MagicFat || be == macho.MagicFat:
		b, err = openFatMachO(path, fd, size)
	case le == macho.Magic32 || le == macho.Magic64 || be == macho.Magic32 || be == macho.Magic64:
		b, err = openMachO(path, fd, size)
	case string(magic[:2]) == "MZ":
		b, err = openPE(path, fd, size)
	default:
		err = errNotForeign
	}
	if err != nil {
		fd.Close()
		return nil, err
	}
	return b, nil
}

// openRegular opens the regular file at path, with its size.
func openRegular(path string) (*os.File, uint64, error) {
	fd, err := regfile.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("error opening %s: %v", path, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, 0, fmt.Errorf("error opening %s: %w", path, err)
	}
	return fd, uint64(st.Size()), nil
}

// checkOverlap refuses DWARF sections whose bytes add up to more than
// the file's size bytes: the index reads each whole, so sections that
// overlap in the file would be copied as often as they are named. Each
// opener checks the file's own sections, before a dSYM or separate debug
// file (checked on its own) may replace them.
func checkOverlap(path string, dwarf map[string]rawSection, size uint64) error {
	var total uint64
	for _, s := range dwarf {
		if total += s.fileSize; total > size || total < s.fileSize {
			return fmt.Errorf("error parsing %s: its DWARF sections add up to more than the %d-byte file: they overlap", path, size)
		}
	}
	return nil
}

// stdSection returns the rawSection of a section the standard library
// read: its contents are read through r, which holds size bytes.
func stdSection(name string, addr, size uint64, r io.ReaderAt) rawSection {
	return rawSection{name: name, addr: addr, size: size, fileSize: size,
		data: func() ([]byte, error) {
			b := make([]byte, size)
			n, err := r.ReadAt(b, 0)
			if uint64(n) == size {
				err = nil
			}
			return b, err
		},
		readAt: r.ReadAt,
	}
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
