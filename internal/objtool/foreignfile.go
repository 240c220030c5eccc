package objtool

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/plt"
)

// foreignEntry is a foreign binary parsed once per Tool.
type foreignEntry struct {
	b   *foreignBin // nil if err
	err error

	indexOnce sync.Once
	index     *jitsym.Symbolizer
	indexErr  error

	symsOnce sync.Once
	syms     []symbol

	goOnce sync.Once
	gotab  *gopclntab.Table // see foreignLines

	pltOnce sync.Once
	plt     []plt.Entry // an ELF file's PLT stubs

	goListOnce sync.Once
	goList     *goListing // see foreignGoListingFor

	answers answers // what Prefetch found
}

// loadForeign returns the foreign binary at path, parsing it on first use.
func (t *Tool) loadForeign(path string, magic []byte) *foreignEntry {
	e, _ := t.foreign.Get(path, func() *foreignEntry {
		b, err := openForeign(path, magic, foreignOpts{dirs: t.opts.DebugDirs, fetch: t.fetchDebug, inflate: t.inflate})
		if b != nil {
			for _, n := range b.notes {
				t.sayOnce(n, n)
			}
		}
		return &foreignEntry{b: b, err: err}
	})
	return e
}

func (t *Tool) foreignIndex(e *foreignEntry) (*jitsym.Symbolizer, error) {
	e.indexOnce.Do(func() {
		var sup *jitsym.Sup
		if e.b.hasSup {
			var err error
			if sup, err = t.supFor(e.b.path, e.b.dwarfPath)(e.b.sup); err != nil && t.opts.Warn != nil {
				t.opts.Warn(err.Error())
			}
		}
		e.index, e.indexErr = e.b.index(sup)
		t.indexed(e.b.path, e.index, e.indexErr)
	})
	return e.index, e.indexErr
}

// foreignLines returns what answers e's source-line queries: its index,
// or, for a Go binary without DWARF, its Go table first (see linesOf).
func (t *Tool) foreignLines(e *foreignEntry) (lineSource, error) {
	idx, err := t.foreignIndex(e)
	return withGoTable(idx, err, func() *gopclntab.Table { return t.foreignGoTable(e) })
}

// foreignGoTable returns e's Go table, reading it on first use; nil if
// e is no Go ELF binary or its table cannot be read.
func (t *Tool) foreignGoTable(e *foreignEntry) *gopclntab.Table {
	e.goOnce.Do(func() {
		if e.b.goBin != nil {
			e.gotab = t.openGoTable(e.b.path, e.b.goBin)
		}
	})
	return e.gotab
}

// foreignSymbols groups e's symbols as nm -n lists them for pprof, or,
// without a symbol table, lists the functions of its Go table (as
// symbols does).
func (t *Tool) foreignSymbols(e *foreignEntry) []symbol {
	e.symsOnce.Do(func() {
		seq, n := e.b.symbols()
		if n == 0 || e.b.dynOnly {
			if e.syms = goSymbols(t.foreignGoTable(e)); e.syms != nil {
				return
			}
		}
		syms := slices.AppendSeq(make([]jitsym.Sym, 0, n), seq)
		slices.SortStableFunc(syms, func(x, y jitsym.Sym) int {
			if x.Addr != y.Addr {
				return cmpU64(x.Addr, y.Addr)
			}
			return strings.Compare(x.Name, y.Name)
		})
		for i, s := range syms {
			if i > 0 && s.Addr == syms[i-1].Addr {
				g := &e.syms[len(e.syms)-1]
				g.names = append(g.names, s.Name)
				g.size = max(g.size, s.Size)
				g.end = max(g.end, s.Addr+s.Size)
				continue
			}
			e.syms = append(e.syms, symbol{addr: s.Addr, end: s.Addr + s.Size, size: s.Size, names: []string{s.Name}})
		}
		for i := range e.syms {
			if i+1 < len(e.syms) && e.syms[i].end > e.syms[i+1].addr {
				e.syms[i].end = e.syms[i+1].addr
			}
			if e.syms[i].end < e.syms[i].addr {
				e.syms[i].end = ^uint64(0)
			}
		}
	})
	return e.syms
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// openForeignFile opens the mapping [start, limit) at offset of the
// foreign binary e, computing its base as upstream pprof does for the
// format (binutils' openMachO, openPE, and openELF through elfexec for
// ELF files).
func (t *Tool) openForeignFile(e *foreignEntry, start, limit, offset uint64) (gdriver.ObjFile, error) {
	b := e.b
	f := &foreignFile{t: t, e: e, m: mapping{start: start, limit: limit, offset: offset}}
	whole := start == 0 && offset == 0 && (limit == ^uint64(0) || limit == 0)
	switch b.format {
	case "Mach-O":
		// Upstream subtracts __TEXT's vmaddr (0x100000000 for an
		// executable, 0 for a library) from the mapping's start. A
		// mapping of the whole address space keeps the file's
		// addresses, as for ELF files (a Mach-O object file has no
		// __TEXT segment).
		switch {
		case whole:
		case !b.hasText:
			return nil, fmt.Errorf("could not identify base for %s: no __TEXT segment", b.path)
		case b.textAddr > start:
			return nil, fmt.Errorf("could not identify base for %s: __TEXT segment address (0x%x) > mapping start address (0x%x)",
				b.path, b.textAddr, start)
		default:
			f.base = start - b.textAddr
		}
		f.baseDone = true
	case "PE":
		// Upstream: the mapping's start less ImageBase, or 0 for a
		// mapping at 0.
		if start > 0 {
			f.base = start - b.imageBase
		}
		f.baseDone = true
	case "ELF":
		if _, err := getBase(b.elfType, b.textPH, nil, start, limit, offset); err != nil {
			return nil, fmt.Errorf("error reading ELF file %s: could not identify base for %s: %w", b.path, b.path, err)
		}
	}
	return f, nil
}

// foreignFile is one mapping of a foreign binary.
type foreignFile struct {
	t *Tool
	e *foreignEntry
	m mapping

	mu       sync.Mutex
	baseDone bool
	base     uint64
	baseErr  error
}

var _ gdriver.ObjFile = (*foreignFile)(nil)

// baseFor returns the base; for an ELF file it is computed from the
// segment of the first address asked about, as for 64-bit ELF files.
func (f *foreignFile) baseFor(addr uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.baseDone {
		return f.base, f.baseErr
	}
	if addr < f.m.start || addr >= f.m.limit {
		return 0, fmt.Errorf("specified address %x is outside the mapping range [%x, %x] for file %q", addr, f.m.start, f.m.limit, f.e.b.path)
	}
	f.baseDone = true
	ph, err := programHeaderOf(&f.m, f.e.b.progs, f.e.b.textPH, addr)
	if err != nil {
		f.baseErr = fmt.Errorf("failed to find program header for file %q, ELF mapping %#v, address %x: %w", f.e.b.path, upstreamMapping(f.m), addr, err)
		return 0, f.baseErr
	}
	f.base, f.baseErr = getBase(f.e.b.elfType, ph, nil, f.m.start, f.m.limit, f.m.offset)
	return f.base, f.baseErr
}

func (f *foreignFile) Name() string    { return f.e.b.path }
func (f *foreignFile) BuildID() string { return f.e.b.buildID }

// Close leaves the binary open in its Tool until the Tool is closed; it
// collects the garbage after many SourceLine answers (see answered).
func (f *foreignFile) Close() error {
	f.t.answered.closed()
	return nil
}

func (f *foreignFile) ObjAddr(addr uint64) (uint64, error) {
	base, err := f.baseFor(addr)
	if err != nil {
		return 0, err
	}
	return addr - base, nil
}

func (f *foreignFile) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	base, err := f.baseFor(addr)
	if err != nil {
		return nil, err
	}
	f.t.answered.add()
	if fr, ok := f.e.answers.take(addr - base); ok {
		return f.t.safeFrames(fr), nil
	}
	lines, err := f.t.foreignLines(f.e)
	if err != nil {
		return nil, err
	}
	if lines == nil {
		return toDriverFrames(nil), nil
	}
	frames, err := lines.SourceLine(addr - base)
	if err != nil {
		return nil, err
	}
	return f.t.safeFrames(toDriverFrames(frames)), nil
}

func (f *foreignFile) Symbols(r *regexp.Regexp, addr uint64) ([]*gdriver.Sym, error) {
	if l := f.t.foreignGoListingFor(f.e); l != nil {
		return l.symbols(r, addr), nil
	}
	return findSymbols(f.t.foreignSymbols(f.e), f.e.b.path, r, addr), nil
}

// disasmForeign disassembles [start, end] of the foreign binary e.
func (t *Tool) disasmForeign(e *foreignEntry, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	b := e.b
	if b.machine == elf.EM_NONE {
		return nil, fmt.Errorf("%s: cannot disassemble the code of this %s file's machine", b.path, b.format)
	}
	syn, err := t.textSyntax(b.isGo(), intelSyntax)
	if err != nil {
		return nil, err
	}
	if l := t.foreignGoListingFor(e); l != nil && syn == textGo {
		return l.disasm(start, end)
	}
	if end < start {
		return nil, fmt.Errorf("%s: empty range [%#x, %#x]", b.path, start, end)
	}
	syms := t.foreignSymbols(e)
	// An end on a symbol boundary is the End of a symbol from Symbols:
	// one past its last byte.
	if end > start {
		if s := lookupSymbol(syms, end-1); s != nil && s.end == end {
			end--
		}
	}
	e.pltOnce.Do(func() {
		if b.elf != nil {
			e.plt = pltStubs(plt.FromStd(b.elf))
		}
	})
	name := pltNamer(e.plt, symbolNamer(syms))
	idx, _ := t.foreignLines(e) // without an index, instructions have no lines
	if b.machine == elf.EM_ARM {
		if b.bo == binary.BigEndian {
			return nil, decodeErr(b.path, errBigEndianARM)
		}
		start &^= 1 // the Thumb bit of a symbol's value (an ifunc's)
	}
	var out []gdriver.Inst
	var total uint64
	for _, sec := range b.code {
		if sec.size == 0 || end < sec.addr || start > sec.addr+sec.size-1 {
			continue
		}
		lo, hi := max(start, sec.addr), min(end, sec.addr+sec.size-1)
		if total += hi - lo + 1; total > maxDisasmBytes {
			return nil, fmt.Errorf("%s: more than %d bytes of code in [%#x, %#x]", b.path, maxDisasmBytes, start, end)
		}
		// Only the bytes asked for are read: sections whose headers all
		// point at one range of the file must not each be read whole.
		code := make([]byte, hi-lo+1)
		if n, err := sec.readAt(code, int64(lo-sec.addr)); n < len(code) {
			if err == nil || err == io.EOF {
				return nil, fmt.Errorf("%s: section %s holds %d bytes, not the %d its header says", b.path, sec.name, lo-sec.addr+uint64(n), sec.size)
			}
			return nil, fmt.Errorf("%s: reading section %s: %w", b.path, sec.name, err)
		}
		var insts []disasm.Inst
		switch {
		case b.machine == elf.EM_ARM:
			insts = decodeARMRuns(b.arm[sec.addr], code, lo, hi, name)
		case b.machine == elf.EM_MIPS:
			insts = disasm.DecodeMIPS(code, lo, b.bo, mipsN64(b.class, b.flags), name)
		default:
			var err error
			if insts, err = decodeText(b.machine, b.class, b.bo, code, lo, syn, name); err != nil {
				return nil, decodeErr(b.path, err)
			}
		}
		out = appendWithLines(out, insts, idx)
	}
	if out == nil {
		return nil, fmt.Errorf("%s: no code section holds any of [%#x, %#x]", b.path, start, end)
	}
	return out, nil
}

// foreignFor returns the foreign binary file, if Open reads it so: a
// Mach-O or PE file, or an ELF file that package elfrel does not read
// and the standard library does.
func (t *Tool) foreignFor(file string) (*foreignEntry, bool) {
	magic, err := readMagic(file)
	if err != nil {
		return nil, false
	}
	if string(magic) == elf.ELFMAG {
		var unsupported *elfrel.UnsupportedError
		if b := t.load(file); b.err == nil || !errors.As(b.err, &unsupported) || unsupported.Section != "" {
			return nil, false
		}
	} else if formatOf(magic) == "" {
		return nil, false
	}
	e := t.loadForeign(file, magic)
	return e, e.err == nil
}
