package objtool

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"slices"

	"github.com/jitpprof/pprof/internal/gopclntab"
	"github.com/jitpprof/pprof/internal/jitsym"
	"github.com/jitpprof/pprof/internal/safename"
)

// lineSource answers the source-line queries of one binary.
type lineSource interface {
	SourceLine(addr uint64) ([]jitsym.Frame, error)
}

// linesOf returns what answers b's source-line queries: its index, or,
// for a Go binary without DWARF (built with -ldflags=-s -w, or
// stripped), the Go runtime's own table first, which gives the Go
// functions their files, lines and inline frames as the runtime prints
// them (upstream pprof, through binutils, has only the symbol table's
// names there, if any). The index answers the rest: C code linked in
// with cgo.
func (t *Tool) linesOf(b *binFile) (lineSource, error) {
	idx, err := t.indexOf(b)
	return withGoTable(idx, err, func() *gopclntab.Table { return t.goTable(b) })
}

// withGoTable returns idx, or, if it has no DWARF and goTable gives a Go
// table, the two together (see linesOf); nil if idx is.
func withGoTable(idx *jitsym.Symbolizer, err error, goTable func() *gopclntab.Table) (lineSource, error) {
	if err != nil || idx == nil {
		return nil, err // not a nil *jitsym.Symbolizer in an interface
	}
	if idx.HasDWARF() {
		return idx, nil
	}
	if g := goTable(); g != nil {
		return goLines{g, idx}, nil
	}
	return idx, nil
}

// goTable returns b's Go table, reading it on first use; nil if b is no
// Go binary or its table cannot be read.
func (t *Tool) goTable(b *binFile) *gopclntab.Table {
	b.goOnce.Do(func() {
		if b.f.Type != elf.ET_REL {
			b.gotab = t.openGoTable(b.path, gopclntab.ELFBinary(b.f))
		}
	})
	return b.gotab
}

// openGoTable reads the Go table of bin, the file at path: nil if it is
// no Go binary or its table cannot be read, which is said once, as is a
// table without inline frames.
func (t *Tool) openGoTable(path string, bin *gopclntab.Binary) *gopclntab.Table {
	g, err := gopclntab.Open(bin)
	switch {
	case errors.Is(err, gopclntab.ErrNoTable):
		return nil
	case err != nil:
		t.sayOnce("gopclntab "+path, fmt.Sprintf("%s: Go binary without DWARF: its function table cannot be read: %v", safename.String(path), err))
		return nil
	case !g.Inlining():
		t.sayOnce("gopclntab "+path, fmt.Sprintf("%s: Go binary without DWARF: its inlining trees cannot be read (a Go 1.18 binary, or the runtime's module data not found), so inlined code gets the function it is inlined in, without a line", safename.String(path)))
	}
	return g
}

// goLines answers from a Go table, then from the index.
type goLines struct {
	g   *gopclntab.Table
	idx *jitsym.Symbolizer
}

func (l goLines) SourceLine(addr uint64) ([]jitsym.Frame, error) {
	frames := l.g.Frames(addr)
	if len(frames) == 0 {
		return l.idx.SourceLine(addr)
	}
	out := make([]jitsym.Frame, len(frames))
	for i, f := range frames {
		out[i] = jitsym.Frame{Func: f.Func, File: f.File, Line: f.Line, StartLine: f.StartLine}
	}
	return out, nil
}

// goSymbols returns the functions of the Go table g as symbol groups,
// for a binary without a symbol table; nil if g is.
func goSymbols(g *gopclntab.Table) []symbol {
	if g == nil {
		return nil
	}
	funcs := g.Funcs()
	// A well-formed table is in address order; lookups need it to be.
	slices.SortStableFunc(funcs, func(a, b gopclntab.Func) int { return cmp.Compare(a.Entry, b.Entry) })
	var out []symbol
	for _, f := range funcs {
		if n := len(out); n > 0 && out[n-1].addr == f.Entry {
			continue
		}
		out = append(out, symbol{addr: f.Entry, end: f.End, size: f.End - f.Entry, names: []string{f.Name}})
	}
	return out
}
