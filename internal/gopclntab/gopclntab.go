// Package gopclntab reads the table of functions and source lines that
// the Go linker writes into every Go binary, the .gopclntab section, and
// the inlining tree of each function that the runtime's tracebacks use.
// The table stays when a binary is built with -ldflags=-s -w or put
// through strip, which take its symbol table and DWARF away: with it,
// such a binary's addresses still get their functions, files, lines and
// inline frames, as the Go runtime itself prints them in a panic.
//
// The formats are those of Go 1.18 and later (magics 0xfffffff0 and
// 0xfffffff1), as the runtime reads them (runtime/symtab.go,
// runtime/symtabinl.go). Package debug/gosym reads the same table but
// not the inlining tree, so for an inlined call it names the caller with
// the callee's line; this package gives the inline frames instead.
//
// Every offset read from the file is checked against the data it
// indexes: a damaged or hostile table gives errors or fewer frames,
// never a panic or unbounded work.
package gopclntab

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Magics that start the tables of Go 1.20 and later, and of Go 1.18 and
// 1.19 (abi.Go120PCLnTabMagic, abi.Go118PCLnTabMagic).
const (
	magic120 = 0xfffffff1
	magic118 = 0xfffffff0
)

// A layout says where a format keeps what is read of its records.
type layout struct {
	funcSize  int // runtime._func up to its pcdata offsets
	nfuncdata int // offset of _func.nfuncdata
	startLine int // offset of _func.startLine; -1: none

	callSize     int // one runtime.inlinedCall
	callName     int // offset of its name's offset
	callParentPc int // offset of its parentPc
	callStart    int // offset of its startLine; -1: none
}

var (
	layout120 = layout{funcSize: 44, nfuncdata: 43, startLine: 36, callSize: 16, callName: 4, callParentPc: 8, callStart: 12}
	// Go 1.18 and 1.19 have no start lines; an inlinedCall is
	// {parent int16, funcID, _ byte, file, line, func_, parentPc int32}.
	layout118 = layout{funcSize: 40, nfuncdata: 39, startLine: -1, callSize: 20, callName: 12, callParentPc: 16, callStart: -1}
)

// Indexes of the per-function tables the inlining tree needs
// (internal/abi: PCDATA_InlTreeIndex, FUNCDATA_InlTree).
const (
	pcdataInlTreeIndex = 2
	funcdataInlTree    = 3
)

const (
	// maxInlineDepth bounds the walk up an inlining tree: the compiler
	// inlines a few levels deep, a hostile tree could loop.
	maxInlineDepth = 1000
	// maxSteps bounds the steps of a pc-value table read for a lookup:
	// a function of a million instructions or more gets no line past it.
	maxSteps = 1 << 20
	// maxName bounds a function or file name.
	maxName = 1 << 20
)

// A Frame is one source-level frame of an address: a function, and the
// file and line in it that the address belongs to.
type Frame struct {
	Func      string // the function's name as the Go linker spells it
	File      string // source file path; "" if unknown
	Line      int    // line in File; 0 if unknown
	StartLine int    // line of the function's func keyword; 0 if unknown
}

// A Func is one function of the table.
type Func struct {
	Name       string
	Entry, End uint64 // [Entry, End): its code
}

// A FormatError reports a table that cannot be read.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return "gopclntab: " + e.Msg }

// ErrVersion is returned for a table of a Go release before 1.18, whose
// format this package does not read.
var ErrVersion = errors.New("gopclntab: table of a Go release before 1.18")

// A Table answers queries on one binary's table. It is immutable and may
// be used from any number of goroutines.
type Table struct {
	l       *layout
	bo      binary.ByteOrder
	quantum uint64 // instruction size unit of the pc deltas
	text    uint64 // run-time address of the functions' entry offsets
	nfunc   int

	funcnames []byte // runtime.funcnametab
	cutab     []byte // runtime.cutab: uint32 file offsets per unit
	filetab   []byte // runtime.filetab: NUL-terminated names
	pctab     []byte // runtime.pctab: pc-value tables
	functab   []byte // runtime.functab: nfunc+1 {entryoff, funcoff}, then the _func records
	gofunc    []byte // go:func.*, where FUNCDATA offsets point; nil if unknown
}

// Header is what the table's header gives before the table is read: what
// locating its other parts in a binary needs.
type Header struct {
	// Version is the first Go release of the table's format: 118 for
	// Go 1.18 and 1.19, 120 for Go 1.20 and later.
	Version   int
	ByteOrder binary.ByteOrder
	PtrSize   int
	// TextStart is the run-time address of the code the entry offsets
	// count from, as the header holds it; 0 from Go 1.26 on, which leave
	// it to the runtime's module data.
	TextStart uint64
	// FuncnameOffset is where the function names start in the table.
	FuncnameOffset uint64
}

// ParseHeader reads the header of the table data.
func ParseHeader(data []byte) (Header, error) {
	if len(data) < 8 {
		return Header{}, &FormatError{fmt.Sprintf("%d bytes, too short for a header", len(data))}
	}
	var h Header
	le, be := binary.LittleEndian.Uint32(data), binary.BigEndian.Uint32(data)
	switch {
	case le == magic120 || le == magic118:
		h.ByteOrder = binary.LittleEndian
	case be == magic120 || be == magic118:
		h.ByteOrder = binary.BigEndian
	default:
		for _, m := range []uint32{0xfffffffb, 0xfffffffa} {
			if binary.LittleEndian.Uint32(data) == m || binary.BigEndian.Uint32(data) == m {
				return Header{}, ErrVersion
			}
		}
		return Header{}, &FormatError{fmt.Sprintf("unknown magic %#x", data[:4])}
	}
	h.Version = 120
	if h.ByteOrder.Uint32(data) == magic118 {
		h.Version = 118
	}
	if data[4] != 0 || data[5] != 0 {
		return Header{}, &FormatError{"header padding is not zero"}
	}
	switch data[6] {
	case 1, 2, 4:
	default:
		return Header{}, &FormatError{fmt.Sprintf("instruction size quantum %d", data[6])}
	}
	h.PtrSize = int(data[7])
	if h.PtrSize != 4 && h.PtrSize != 8 {
		return Header{}, &FormatError{fmt.Sprintf("pointer size %d", data[7])}
	}
	if len(data) < 8+8*h.PtrSize {
		return Header{}, &FormatError{fmt.Sprintf("%d bytes, too short for a header", len(data))}
	}
	h.TextStart = h.word(data, 2)
	h.FuncnameOffset = h.word(data, 3)
	return h, nil
}

// word returns header word i (after the first 8 bytes).
func (h Header) word(data []byte, i int) uint64 {
	p := data[8+i*h.PtrSize:]
	if h.PtrSize == 4 {
		return uint64(h.ByteOrder.Uint32(p))
	}
	return h.ByteOrder.Uint64(p)
}

// New returns the table of data, the whole .gopclntab section, whose
// entry offsets count from text. gofunc is the binary's go:func.* data
// from its start (the runtime's moduledata.gofunc) to the end of what
// holds it, or nil if unknown: without it there are no inline frames,
// and an address in inlined code gets its function without a line.
func New(data []byte, text uint64, gofunc []byte) (*Table, error) {
	h, err := ParseHeader(data)
	if err != nil {
		return nil, err
	}
	l := &layout120
	if h.Version == 118 {
		l = &layout118
	}
	t := &Table{l: l, bo: h.ByteOrder, quantum: uint64(data[6]), text: text, gofunc: gofunc}
	part := func(i int, what string) ([]byte, error) {
		off := h.word(data, i)
		if off > uint64(len(data)) {
			return nil, &FormatError{fmt.Sprintf("%s at offset %#x, past the table's %#x bytes", what, off, len(data))}
		}
		return data[off:], nil
	}
	n := h.word(data, 0)
	if t.funcnames, err = part(3, "function names"); err != nil {
		return nil, err
	}
	if t.cutab, err = part(4, "unit table"); err != nil {
		return nil, err
	}
	if t.filetab, err = part(5, "file table"); err != nil {
		return nil, err
	}
	if t.pctab, err = part(6, "pc tables"); err != nil {
		return nil, err
	}
	if t.functab, err = part(7, "function table"); err != nil {
		return nil, err
	}
	if n >= uint64(len(t.functab))/8 {
		return nil, &FormatError{fmt.Sprintf("%d functions, more than the function table's %d bytes hold", n, len(t.functab))}
	}
	t.nfunc = int(n)
	return t, nil
}

// u32 returns the uint32 at off in b, and whether b holds it.
func (t *Table) u32(b []byte, off uint64) (uint32, bool) {
	if off > uint64(len(b)) || uint64(len(b))-off < 4 {
		return 0, false
	}
	return t.bo.Uint32(b[off:]), true
}

// entryOff returns the entry offset of function i; i == nfunc gives the
// end of the last function.
func (t *Table) entryOff(i int) uint32 {
	return t.bo.Uint32(t.functab[8*i:])
}

// fn is one _func record.
type fn struct {
	rec   []byte // from the record to the end of the function table
	entry uint64 // offset from text
	end   uint64
}

// lookup returns the record of the function holding pc.
func (t *Table) lookup(pc uint64) (fn, bool) {
	if pc < t.text || pc-t.text >= 1<<32 {
		return fn{}, false
	}
	off := pc - t.text
	i := sort.Search(t.nfunc, func(i int) bool { return uint64(t.entryOff(i)) > off }) - 1
	if i < 0 || off >= uint64(t.entryOff(i+1)) {
		return fn{}, false
	}
	return t.record(i)
}

// record returns function i's record, checked to be whole.
func (t *Table) record(i int) (fn, bool) {
	funcoff := uint64(t.bo.Uint32(t.functab[8*i+4:]))
	fsize := uint64(t.l.funcSize)
	if funcoff > uint64(len(t.functab)) || uint64(len(t.functab))-funcoff < fsize {
		return fn{}, false
	}
	f := fn{rec: t.functab[funcoff:], entry: uint64(t.entryOff(i)), end: uint64(t.entryOff(i + 1))}
	if uint64(t.bo.Uint32(f.rec)) != f.entry {
		return fn{}, false
	}
	npcdata := uint64(t.bo.Uint32(f.rec[28:]))
	nfuncdata := uint64(f.rec[t.l.nfuncdata])
	if need := fsize + 4*(npcdata+nfuncdata); npcdata > 1<<20 || uint64(len(f.rec)) < need {
		return fn{}, false
	}
	return f, true
}

// Fields of a _func record, by byte offset, the same in every format
// read (see layout for the others).
const (
	offNameOff  = 4
	offPcsp     = 16
	offPcfile   = 20
	offPcln     = 24
	offNpcdata  = 28
	offCuOffset = 32
)

func (t *Table) recU32(f fn, off int) uint32 { return t.bo.Uint32(f.rec[off:]) }

// name returns the NUL-terminated function name at off.
func (t *Table) name(off uint32) string {
	return cstring(t.funcnames, uint64(off))
}

// cstring returns the NUL-terminated string at off in b, "" if there is
// none.
func cstring(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return ""
	}
	b = b[off:min(uint64(len(b)), off+maxName)]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return ""
}

// pcvalue returns the value that the pc-value table at off in pctab gives
// pc (an offset from text) in f, as the runtime's pcvalue does, and
// whether it holds one. The linker writes a step only where the pc moves
// on: a step that does not is taken for a damaged table, so that the
// work of a lookup is bounded by the function's size, and by maxSteps.
func (t *Table) pcvalue(f fn, off uint32, pc uint64) (int32, bool) {
	v, _, ok := t.pcvalueSteps(f, off, pc)
	return v, ok
}

// pcvalueSteps is pcvalue, also returning how many steps it took.
func (t *Table) pcvalueSteps(f fn, off uint32, pc uint64) (val int32, steps int, ok bool) {
	if off == 0 || uint64(off) >= uint64(len(t.pctab)) {
		return -1, 0, false
	}
	p := t.pctab[off:]
	cur := f.entry
	val = -1
	for steps = 1; steps <= maxSteps; steps++ {
		// As the runtime's step: a zero value delta ends the table,
		// except at the function's entry.
		uv, n := binary.Uvarint(p)
		if n <= 0 || uv > 1<<32-1 || (uv == 0 && cur != f.entry) {
			return -1, steps, false
		}
		p = p[n:]
		d := uint32(uv)
		val += int32(-(d & 1) ^ (d >> 1))
		pcd, n := binary.Uvarint(p)
		if n <= 0 || pcd == 0 || pcd > 1<<32-1 {
			return -1, steps, false
		}
		p = p[n:]
		cur += pcd * t.quantum
		if pc < cur {
			return val, steps, true
		}
	}
	return -1, maxSteps, false
}

// fileLine returns the file and line of pc in f, as the runtime's
// funcline1 does.
func (t *Table) fileLine(f fn, pc uint64) (string, int) {
	fileno, ok1 := t.pcvalue(f, t.recU32(f, offPcfile), pc)
	line, ok2 := t.pcvalue(f, t.recU32(f, offPcln), pc)
	if !ok1 || !ok2 || fileno < 0 || line < 0 {
		return "", 0
	}
	cu := uint64(t.recU32(f, offCuOffset))
	fileoff, ok := t.u32(t.cutab, 4*(cu+uint64(fileno)))
	if !ok || fileoff == ^uint32(0) {
		return "", 0
	}
	return cstring(t.filetab, uint64(fileoff)), int(line)
}

// inlIndex returns the inlining tree index of pc in f: -1 outside
// inlined code.
func (t *Table) inlIndex(f fn, pc uint64) int32 {
	npcdata := t.recU32(f, offNpcdata)
	if pcdataInlTreeIndex >= npcdata {
		return -1
	}
	ix, ok := t.pcvalue(f, t.recU32(f, t.l.funcSize+4*pcdataInlTreeIndex), pc)
	if !ok {
		return -1
	}
	return ix
}

// inlTree returns f's inlining tree, nil if it has none or it is
// unknown, and whether f has one.
func (t *Table) inlTree(f fn) ([]byte, bool) {
	if uint32(f.rec[t.l.nfuncdata]) <= funcdataInlTree {
		return nil, false
	}
	off := t.recU32(f, t.l.funcSize+4*int(t.recU32(f, offNpcdata))+4*funcdataInlTree)
	if off == ^uint32(0) {
		return nil, false
	}
	if uint64(off) > uint64(len(t.gofunc)) {
		return nil, true
	}
	return t.gofunc[off:], true
}

// Inlining reports whether the table has what inline frames need:
// without the binary's go:func.* data, an address in inlined code gets
// the function it is inlined in, without a line.
func (t *Table) Inlining() bool { return t.gofunc != nil }

// SPDelta returns how far the stack pointer is below its value at the
// entry of the function holding pc (the pc-value table the runtime
// unwinds Go stacks with: on amd64 the return address is that far above
// the stack pointer), and false if no function of the table holds pc or
// its table has no value there. steps is the work the lookup took, for
// a caller that bounds what damaged tables may cost it.
func (t *Table) SPDelta(pc uint64) (delta int32, steps int, ok bool) {
	f, ok := t.lookup(pc)
	if !ok {
		return 0, 0, false
	}
	v, steps, ok := t.pcvalueSteps(f, t.recU32(f, offPcsp), pc-t.text)
	if !ok || v < 0 {
		return 0, steps, false
	}
	return v, steps, true
}

// Frames returns the frames of the address pc, leaf first: the inlined
// calls holding it, then the function that holds them. It returns nil
// if no function of the table holds pc.
func (t *Table) Frames(pc uint64) []Frame {
	return t.AppendFrames(nil, pc)
}

// AppendFrames appends the frames of pc to dst, as Frames returns them.
func (t *Table) AppendFrames(dst []Frame, pc uint64) []Frame {
	f, ok := t.lookup(pc)
	if !ok {
		return dst
	}
	off := pc - t.text
	outer := Frame{Func: t.name(t.recU32(f, offNameOff))}
	pcln := t.recU32(f, offPcln)
	if pcln == 0 {
		// A function the table names without lines: C code that cgo
		// linked in.
		return append(dst, outer)
	}
	if _, ok := t.pcvalue(f, pcln, off); !ok {
		// Past the function's line table: the padding before the next
		// function, which has no code of its own.
		return dst
	}
	if t.l.startLine >= 0 {
		outer.StartLine = int(int32(t.recU32(f, t.l.startLine)))
	}
	ix := t.inlIndex(f, off)
	if ix < 0 {
		outer.File, outer.Line = t.fileLine(f, off)
		return append(dst, outer)
	}
	tree, has := t.inlTree(f)
	if tree == nil || !has {
		// Inlined code of a function whose tree cannot be read: its
		// line is the callee's, so give the function alone.
		return append(dst, outer)
	}
	start := len(dst)
	for depth := 0; ix >= 0; depth++ {
		size := uint64(t.l.callSize)
		e := uint64(ix) * size
		if depth == maxInlineDepth || e > uint64(len(tree)) || uint64(len(tree))-e < size {
			return append(dst[:start], outer)
		}
		call := tree[e:]
		fr := Frame{Func: t.name(t.bo.Uint32(call[t.l.callName:]))}
		if t.l.callStart >= 0 {
			fr.StartLine = int(int32(t.bo.Uint32(call[t.l.callStart:])))
		}
		fr.File, fr.Line = t.fileLine(f, off)
		dst = append(dst, fr)
		parent := int64(int32(t.bo.Uint32(call[t.l.callParentPc:])))
		if parent < 0 || uint64(parent) >= f.end-f.entry {
			return append(dst[:start], outer)
		}
		off = f.entry + uint64(parent)
		ix = t.inlIndex(f, off)
	}
	outer.File, outer.Line = t.fileLine(f, off)
	return append(dst, outer)
}

// Funcs returns the functions of the table in address order.
func (t *Table) Funcs() []Func {
	out := make([]Func, 0, t.nfunc)
	for i := range t.nfunc {
		f, ok := t.record(i)
		if !ok || f.end <= f.entry {
			continue
		}
		out = append(out, Func{Name: t.name(t.recU32(f, offNameOff)), Entry: t.text + f.entry, End: t.text + f.end})
	}
	return out
}
