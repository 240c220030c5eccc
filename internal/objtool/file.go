package objtool

import (
	"fmt"
	"regexp"
	"sync"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/jitsym"
)

// objFile is one mapping of a binary: the binary's shared index with the
// mapping's base.
type objFile struct {
	t *Tool
	b *binFile
	m mapping

	mu       sync.Mutex
	baseDone bool
	base     uint64
	baseErr  error
}

// baseFor returns the base, computing it on the first address of the
// mapping asked about, from the segment that holds that address, as
// upstream pprof does (binutils' file.computeBase). Unlike upstream, an
// address outside the mapping is an error for that call only: upstream
// keeps the error for good, so that when -disasm and -list first ask
// about another mapping's address (the graph's nodes come in map order)
// every later address fails too and a function is found in some runs
// only ("no matches found" in 11 runs out of 12 on the bundled example).
func (f *objFile) baseFor(addr uint64) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.baseDone {
		return f.base, f.baseErr
	}
	if addr < f.m.start || addr >= f.m.limit {
		return 0, fmt.Errorf("specified address %x is outside the mapping range [%x, %x] for file %q", addr, f.m.start, f.m.limit, f.b.path)
	}
	f.baseDone = true
	ph, err := f.m.programHeader(f.b.f, addr)
	if err != nil {
		f.baseErr = fmt.Errorf("failed to find program header for file %q, ELF mapping %#v, address %x: %w", f.b.path, upstreamMapping(f.m), addr, err)
		return 0, f.baseErr
	}
	// Upstream also notes whether the segment is data, to ask
	// llvm-symbolizer for a DATA symbol, but a shadowed field keeps that
	// from ever happening (binutils' fileAddr2Line.isData is never set):
	// every address is symbolized as code there, and so here.
	f.base, f.baseErr = getBase(f.b.f.Type, ph, f.m.kernelOffset, f.m.start, f.m.limit, f.m.offset)
	return f.base, f.baseErr
}

// elfMapping prints as upstream's mapping type does in its errors.
type elfMapping struct {
	start, limit, offset uint64
	kernelOffset         *uint64
}

func upstreamMapping(m mapping) elfMapping {
	return elfMapping(m)
}

// Name returns the file's path.
func (f *objFile) Name() string { return f.b.path }

// BuildID returns the file's GNU build ID in hex, or "".
func (f *objFile) BuildID() string { return f.b.buildID }

// ObjAddr returns the file's own address for the run-time address addr.
func (f *objFile) ObjAddr(addr uint64) (uint64, error) {
	base, err := f.baseFor(addr)
	if err != nil {
		return 0, err
	}
	return addr - base, nil
}

// SourceLine returns the frames of the run-time address addr, leaf first,
// as llvm-symbolizer --inlining --no-demangle prints them: an address in
// no known function gets one empty frame, as there.
func (f *objFile) SourceLine(addr uint64) ([]gdriver.Frame, error) {
	base, err := f.baseFor(addr)
	if err != nil {
		return nil, err
	}
	x := addr - base
	f.t.answered.add()
	if fr, ok := f.b.answers.take(x); ok {
		return f.t.safeFrames(fr), nil
	}
	lines, err := f.t.linesOf(f.b)
	if err != nil {
		return nil, err
	}
	frames, err := lines.SourceLine(x)
	if err != nil {
		return nil, err
	}
	return f.t.safeFrames(toDriverFrames(frames)), nil
}

// toDriverFrames converts frames for pprof; no frames at all become one
// empty frame, as llvm-symbolizer answers for an unknown address.
func toDriverFrames(frames []jitsym.Frame) []gdriver.Frame {
	if len(frames) == 0 {
		return []gdriver.Frame{{}}
	}
	out := make([]gdriver.Frame, len(frames))
	for i, fr := range frames {
		out[i] = gdriver.Frame(fr)
	}
	return out
}

// Symbols returns the symbols whose names (or demangled names) match r,
// or that hold addr, as upstream's nm-based lister does; those of a Go
// binary listed in Go syntax as go tool pprof lists them (see
// goListing).
func (f *objFile) Symbols(r *regexp.Regexp, addr uint64) ([]*gdriver.Sym, error) {
	if l := f.t.goListingFor(f.b); l != nil {
		return l.symbols(r, addr), nil
	}
	syms, err := f.t.symbols(f.b)
	if err != nil {
		return nil, err
	}
	return findSymbols(syms, f.b.path, r, addr), nil
}

// Close leaves the binary open in its Tool until the Tool is closed; it
// collects the garbage after many SourceLine answers (see answered).
func (f *objFile) Close() error {
	f.t.answered.closed()
	return nil
}
