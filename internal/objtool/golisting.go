package objtool

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/gopclntab"
)

// goListing is a Go binary as go tool pprof reads it for its code views
// when it shows them in Go syntax: Go's cmd/pprof answers Symbols and
// Disasm with cmd/internal/objfile and cmd/internal/disasm, and this
// follows their logic so that -disasm and -weblist print the same bytes
// as go tool pprof does:
//
//   - a function runs from its symbol's address for its symbol's size,
//     which stops at its last instruction (the padding to the next
//     function is not listed), and pprof's Sym.End is its last byte;
//   - Disasm decodes [start, end), end excluded, as cmd/pprof does with
//     pprof's inclusive end: the last byte of a function is not decoded,
//     and an instruction it cuts short is GoBadText, one per byte on x86
//     (go tool pprof lists "?" where a function ends in a jump);
//   - only the .text section is decoded;
//   - instructions carry the file and line of the Go table, the innermost
//     position (an inlined call's), and no function: pprof names an
//     instruction after its samples;
//   - the Go printers name a symbol of the symbol table, every one of them
//     (data too) but the markers of the text's bounds, in which a target
//     lies within its size.
//
// A Go binary without a symbol table (stripped, or -ldflags=-s), which
// go tool pprof cannot disassemble, gets the Go table's functions as its
// symbols, and code of cgo's C functions, which the Go table does not
// cover, gets the lines of the binary's DWARF.
type goListing struct {
	path    string
	machine elf.Machine
	class   elf.Class
	bo      binary.ByteOrder

	textAddr, textSize uint64
	text               io.ReaderAt // the .text section's contents, by offset in it

	// syms is every symbol of the symbol table, by address, as
	// cmd/internal/objfile sorts them.
	syms []goSym

	table *gopclntab.Table  // the Go table; nil if it cannot be read
	funcs []gopclntab.Func  // its functions, by address, each up to the next
	other func() lineSource // lines of the code the table does not cover; may return nil
}

// goSym is one symbol of a goListing.
type goSym struct {
	name       string
	addr, size uint64
}

// textBounds are the symbols Go's disassembler leaves out of its lookup:
// they mark where the text starts and ends, and would name the first
// function's code.
var textBounds = map[string]bool{"runtime.text": true, "text": true, "_text": true, "runtime.etext": true, "etext": true, "_etext": true}

// newGoListing returns the listing of a Go binary of machine m, class c
// and byte order bo whose .text section is at textAddr, textSize bytes
// read from text, and whose symbol table is syms, in table order (nil if
// it has none: the Go table's functions are used). It fails if the
// binary has neither symbols nor a Go table.
func newGoListing(path string, m elf.Machine, c elf.Class, bo binary.ByteOrder, textAddr, textSize uint64, text io.ReaderAt, syms []goSym, table *gopclntab.Table, other func() lineSource) (*goListing, error) {
	var funcs []gopclntab.Func
	if table != nil {
		funcs = table.Funcs()
		slices.SortStableFunc(funcs, func(a, b gopclntab.Func) int { return cmp.Compare(a.Entry, b.Entry) })
	}
	if syms == nil {
		if table == nil {
			return nil, errors.New("neither a symbol table nor a Go table")
		}
		for _, f := range funcs {
			syms = append(syms, goSym{name: f.Name, addr: f.Entry, size: f.End - f.Entry})
		}
	}
	// objfile sorts with slices.SortFunc, by address alone: the same sort
	// of the same sequence puts symbols at one address in the same order,
	// and the lookup takes the last of them.
	slices.SortFunc(syms, func(a, b goSym) int { return cmp.Compare(a.addr, b.addr) })
	return &goListing{path: path, machine: m, class: c, bo: bo, textAddr: textAddr, textSize: textSize, text: text,
		syms: syms, table: table, funcs: funcs, other: other}, nil
}

// name is the GoSymLookup of the listing: the symbol holding addr, the
// last one at or below it but the markers of the text's bounds, which Go's
// disassembler leaves out of its list, if addr is within its size.
func (l *goListing) name(addr uint64) (string, uint64) {
	i := sort.Search(len(l.syms), func(i int) bool { return addr < l.syms[i].addr }) - 1
	for i >= 0 && textBounds[l.syms[i].name] {
		i--
	}
	if i >= 0 {
		if s := &l.syms[i]; s.addr != 0 && addr-s.addr < s.size {
			return s.name, s.addr
		}
	}
	return "", 0
}

// inTable reports whether a function of the Go table holds addr, up to
// the next function.
func (l *goListing) inTable(addr uint64) bool {
	i := sort.Search(len(l.funcs), func(i int) bool { return addr < l.funcs[i].Entry }) - 1
	return i >= 0 && addr < l.funcs[i].End
}

// symbols returns the symbols named by a match of r (every symbol if r
// is nil), as cmd/pprof lists them, or that hold addr (not 0), as
// upstream pprof's lister adds them, in address order. Symbols at
// address 0 of size 0 (file symbols) are left out; End is the last byte.
func (l *goListing) symbols(r *regexp.Regexp, addr uint64) []*gdriver.Sym {
	var out []*gdriver.Sym
	for _, s := range l.syms {
		if s.addr == 0 && s.size == 0 {
			continue
		}
		holds := addr != 0 && addr >= s.addr && addr-s.addr < s.size
		if holds || r == nil || r.MatchString(s.name) {
			out = append(out, &gdriver.Sym{Name: []string{s.name}, File: l.path, Start: s.addr, End: s.addr + s.size - 1})
		}
	}
	return out
}

// disasm decodes the text in [start, end), end excluded (see goListing).
func (l *goListing) disasm(start, end uint64) ([]gdriver.Inst, error) {
	lo, hi := max(start, l.textAddr), min(end, l.textAddr+l.textSize)
	if lo >= hi {
		return nil, nil
	}
	if hi-lo > maxDisasmBytes {
		return nil, fmt.Errorf("%s: %d bytes of code in [%#x, %#x), more than the %d a function can have here", l.path, hi-lo, start, end, maxDisasmBytes)
	}
	code := make([]byte, hi-lo)
	if _, err := l.text.ReadAt(code, int64(lo-l.textAddr)); err != nil {
		return nil, fmt.Errorf("%s: reading .text: %w", l.path, err)
	}
	insts, err := disasm.DecodeGo(l.machine, l.class, l.bo, code, lo, l.name)
	if err != nil {
		return nil, decodeErr(l.path, err)
	}
	out := make([]gdriver.Inst, len(insts))
	var other lineSource
	otherDone := false
	var frames []gopclntab.Frame
	for i, in := range insts {
		out[i] = gdriver.Inst{Addr: in.Addr, Text: in.Text}
		if l.table != nil {
			if frames = l.table.AppendFrames(frames[:0], in.Addr); len(frames) > 0 && (frames[0].File != "" || frames[0].Line != 0) {
				out[i].File, out[i].Line = frames[0].File, frames[0].Line
				continue
			}
			if l.inTable(in.Addr) {
				// A function of the table without lines there (a
				// marker, C code, the padding after its code): Go's
				// debug/gosym answers no file and line -1.
				out[i].Line = -1
				continue
			}
		}
		if !otherDone {
			other, otherDone = l.other(), true
		}
		if other != nil {
			if fr, _ := other.SourceLine(in.Addr); len(fr) > 0 {
				out[i].File, out[i].Line = fr[0].File, fr[0].Line
			}
		}
	}
	return out, nil
}

// elfGoSymbols returns the symbols of f's symbol table in table order,
// as debug/elf lists them (the null symbol left out), or nil if f has
// none. Their names share the memory of the string table.
func elfGoSymbols(f *elfrel.File) ([]goSym, error) {
	if !f.HasSymbols() {
		return nil, nil
	}
	var out []goSym
	err := f.EachSymbol(true, func(k int, s *elfrel.Symbol) error {
		if k > 0 {
			out = append(out, goSym{name: s.Name, addr: s.Value, size: s.Size})
		}
		return nil
	})
	if out == nil && err == nil {
		out = []goSym{}
	}
	return out, err
}

// isGo reports whether b is a Go executable or shared library.
func (b *binFile) isGo() bool {
	return b.f.Type != elf.ET_REL && isGoBinary(func(s string) bool { return b.f.Section(s) >= 0 })
}

// goListingFor returns the listing of b if b is a Go binary whose code
// the Tool's syntax lists in Go syntax (see goListing), building it on
// first use; nil if not, or if it cannot be built (no .text section, no
// symbols), which is said once.
func (t *Tool) goListingFor(b *binFile) *goListing {
	if t.opts.Syntax != SyntaxAuto && t.opts.Syntax != SyntaxGo || !disasm.HasGoSyntax(b.f.Machine, b.f.Class) || !b.isGo() {
		return nil
	}
	b.goListOnce.Do(func() {
		i := b.f.Section(".text")
		if i < 0 || b.f.Sections[i].Type != elf.SHT_PROGBITS {
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: Go binary without a .text section; its code is listed in objdump's syntax", b.path))
			return
		}
		text := &b.f.Sections[i]
		syms, err := elfGoSymbols(b.f)
		if err != nil {
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: reading its symbols: %v; its code is listed in objdump's syntax", b.path, err))
			return
		}
		other := func() lineSource {
			idx, _ := t.linesOf(b)
			return idx
		}
		l, err := newGoListing(b.path, b.f.Machine, b.f.Class, b.f.ByteOrder, text.Addr, text.Size,
			sectionReader{b.f, text.Offset}, syms, t.goTable(b), other)
		if err != nil {
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: Go binary with %v; its code is listed in objdump's syntax", b.path, err))
			return
		}
		b.goList = l
	})
	return b.goList
}

// sectionReader reads a section of an elfrel file by offset in it.
type sectionReader struct {
	f   *elfrel.File
	off uint64
}

func (r sectionReader) ReadAt(p []byte, off int64) (int, error) {
	if err := r.f.ReadAt(p, r.off+uint64(off)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// foreignGoListingFor is goListingFor for a foreign binary: a 32-bit
// Go ELF binary (386, ARM), read with debug/elf. Go binaries in other
// formats (Mach-O, PE) keep objdump's syntax.
func (t *Tool) foreignGoListingFor(e *foreignEntry) *goListing {
	b := e.b
	if t.opts.Syntax != SyntaxAuto && t.opts.Syntax != SyntaxGo || b.elf == nil || !disasm.HasGoSyntax(b.machine, b.class) || !b.isGo() {
		return nil
	}
	e.goListOnce.Do(func() {
		text := b.elf.Section(".text")
		if text == nil || text.Type != elf.SHT_PROGBITS || text.ReaderAt == nil {
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: Go binary without a readable .text section; its code is listed in objdump's syntax", b.path))
			return
		}
		var syms []goSym
		all, err := b.elf.Symbols()
		switch {
		case errors.Is(err, elf.ErrNoSymbols):
		case err != nil:
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: reading its symbols: %v; its code is listed in objdump's syntax", b.path, err))
			return
		default:
			syms = make([]goSym, len(all))
			for i, s := range all {
				syms[i] = goSym{name: s.Name, addr: s.Value, size: s.Size}
			}
		}
		other := func() lineSource {
			idx, _ := t.foreignLines(e)
			return idx
		}
		l, err := newGoListing(b.path, b.machine, b.class, b.bo, text.Addr, text.Size, text.ReaderAt, syms, t.foreignGoTable(e), other)
		if err != nil {
			t.sayOnce("golisting "+b.path, fmt.Sprintf("%s: Go binary with %v; its code is listed in objdump's syntax", b.path, err))
			return
		}
		e.goList = l
	})
	return e.goList
}

// isGo reports whether b is a Go ELF executable or shared library.
func (b *foreignBin) isGo() bool {
	return b.elf != nil && isGoBinary(func(s string) bool { return b.elf.Section(s) != nil })
}
