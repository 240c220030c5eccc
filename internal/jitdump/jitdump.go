// Package jitdump reads jitdump files (jit-PID.dump), the format of
// Linux perf's JIT interface (tools/perf/Documentation/
// jitdump-specification.txt) that V8 (--perf-prof), the JVM agents, .NET,
// LLVM's PerfJITEventListener and ORC's PerfSupportPlugin, wasmtime and
// others write: a header, then records, each with its size.
//
// [Read] streams the file once and keeps the final state: the code that
// is loaded at the end (CODE_LOAD, with CODE_MOVE applied; a later load
// over the same addresses replaces an earlier one), the name of each
// piece, and where its code bytes and its line table (CODE_DEBUG_INFO)
// are in the file: [Dump.Lines] reads a line table when it is needed, so
// that only the code a profile's samples hit costs its lines; likewise
// where the .eh_frame of its CODE_UNWINDING_INFO is, which [Dump.EHFrame]
// reads. An unwinding record goes with the next CODE_LOAD (V8 writes one
// before each), or, when its .eh_frame_hdr gives the .eh_frame's address
// (LLVM's ORC writes one record for all the code of an object, before its
// loads), with every CODE_LOAD up to the next unwinding record: its
// entries are then placed by that address. Record types it does not know
// are skipped by their size; CODE_CLOSE ends the file. Every record
// is checked against its size before anything is read from it; a
// malformed record ends the reading with a warning, keeping what came
// before.
//
// Line entries: perf turns each piece of code into an ELF file whose code
// starts 0x40 bytes in (after the ELF header), and the runtimes write line
// addresses for that layout: V8 and LLVM add 0x40 to each code address in
// CODE_DEBUG_INFO. Read subtracts it back (see [ELFHeaderSkew]), so that
// a line applies to the instruction it was written for; perf and samply
// take the addresses as they are and attribute lines 64 bytes too early.
package jitdump

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// Magic is the header's first word, "JiTD" read in the writer's byte
// order.
const Magic = 0x4A695444

// ELFHeaderSkew is what V8 and LLVM add to every line entry's address:
// the size of the ELF header perf puts before the code.
const ELFHeaderSkew = 0x40

// Record types.
const (
	recCodeLoad      = 0
	recCodeMove      = 1
	recCodeDebugInfo = 2
	recCodeClose     = 3
	recUnwindingInfo = 4
)

const (
	fileHeaderSize   = 40
	recordHeaderSize = 16
	maxName          = 64 << 10 // a longer function or file name is garbage
	maxOutside       = 1 << 16  // line entries outside their code checked for garbage
)

// A Dump is the final state of one jitdump file.
type Dump struct {
	ByteOrder binary.ByteOrder
	Machine   uint32 // ELF e_machine of the code
	PID       uint32
	// Code is the code loaded at the end, sorted by address, disjoint.
	Code []*Code
	// Warnings says what was skipped, each once.
	Warnings []string

	loads codes // every piece of code loaded, in file order: the timeline

	timelineOnce sync.Once
	places       []place // by lo; built by the first At
	maxPlace     uint64  // the largest place's size
}

// Code is one piece of JIT-compiled code.
type Code struct {
	Addr, Size uint64
	Name       string
	// CodeOffset is where the code bytes are in the file.
	CodeOffset int64
	// HasLines reports a line table, which [Dump.Lines] reads.
	HasLines bool
	// Loaded is the timestamp of the CODE_LOAD record, and Moves the
	// moves since, in order: the timeline, for recordings (perf.data)
	// whose samples carry times of the same clock.
	Loaded uint64
	Moves  []Move
	index  uint64 // code_index, which CODE_MOVE refers to
	// The CODE_DEBUG_INFO record of the code, [debugOff, debugEnd) in the
	// file, and how far the code moved since it was loaded.
	debugOff, debugEnd int64
	moved              uint64
	// The .eh_frame of the CODE_UNWINDING_INFO record that goes with the
	// code's CODE_LOAD.
	eh ehFrame
	// placed is the position in the file, among the loads and moves, of
	// the record that put the code where it is: its load or last move;
	// loadSeq is its load's, Moves[i].seq Moves[i]'s.
	placed, loadSeq int
}

// codes holds every piece of code loaded, in file order, in blocks that
// never move: a dump of millions of loads is not copied as it grows,
// and pointers to its code stay valid.
type codes struct {
	blocks [][]Code
	n      int
}

const codeBlock = 4096

// add appends c and returns a pointer to the copy kept.
func (cs *codes) add(c Code) *Code {
	if cs.n%codeBlock == 0 {
		cs.blocks = append(cs.blocks, make([]Code, 0, codeBlock))
	}
	b := &cs.blocks[len(cs.blocks)-1]
	*b = append(*b, c)
	cs.n++
	return &(*b)[len(*b)-1]
}

// all yields the code, in file order.
func (cs *codes) all(yield func(*Code) bool) {
	for _, b := range cs.blocks {
		for i := range b {
			if !yield(&b[i]) {
				return
			}
		}
	}
}

// An ehFrame is the .eh_frame of a CODE_UNWINDING_INFO record: [off,
// off+size) in the file (size 0 if none), and where it was in memory if
// the record's .eh_frame_hdr says (0 if not).
type ehFrame struct {
	off, size int64
	addr      uint64
}

// A Move is a CODE_MOVE of a piece of code.
type Move struct {
	Time     uint64
	From, To uint64
	seq      int // the move's position among the loads and moves
}

// A Line says that code from Addr on comes from File:Line.
type Line struct {
	Addr uint64
	File string
	Line int
}

// Read reads the jitdump file in r, of the given size; name is used in
// errors. It fails with a *FormatError when the header is not a jitdump
// header; a bad record later on ends the reading with a warning in
// Dump.Warnings.
func Read(r io.ReaderAt, size int64, name string) (*Dump, error) {
	var hdr [fileHeaderSize]byte
	if size < fileHeaderSize {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("%d bytes: too short for a jitdump header", size)}
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, &FormatError{File: name, Msg: "reading the header", Err: err}
	}
	d := &Dump{}
	switch {
	case binary.LittleEndian.Uint32(hdr[:]) == Magic:
		d.ByteOrder = binary.LittleEndian
	case binary.BigEndian.Uint32(hdr[:]) == Magic:
		d.ByteOrder = binary.BigEndian
	default:
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("bad magic %q: not a jitdump file", hdr[:4])}
	}
	bo := d.ByteOrder
	if v := bo.Uint32(hdr[4:]); v != 1 {
		d.warn("header version %d (only 1 is known); reading it as version 1", v)
	}
	hsize := int64(bo.Uint32(hdr[8:]))
	if hsize < fileHeaderSize || hsize > size {
		return nil, &FormatError{File: name, Msg: fmt.Sprintf("header size %d is outside [%d, %d]", hsize, fileHeaderSize, size)}
	}
	d.Machine = bo.Uint32(hdr[12:])
	d.PID = bo.Uint32(hdr[20:])
	// hdr[32:40] are flags: LLVM 19's ORC writes garbage there, and
	// nothing here depends on them.

	rd := &reader{r: r, size: size, bo: bo}
	// The code by code_index, which moves refer to: made at the first
	// move (most dumps have none), from the loads before it.
	var live map[uint64]*Code
	var loads codes // in file order
	type debugRec struct {
		off, end int64
		lines    []Line
	}
	var pending map[uint64]debugRec // debug info waiting for its CODE_LOAD, by code address
	var eh ehFrame                  // the .eh_frame of unwinding info waiting for the next CODE_LOAD
	off := hsize
	events := 0 // loads and moves so far
	badNames := 0
	var outside []uint64 // line entries outside their code
	for off < size {
		id, total, ts, err := rd.recordHeader(off)
		if err != nil {
			d.warn("%s at offset %#x; records from there on are ignored", err, off)
			break
		}
		body := off + recordHeaderSize
		end := off + total
		switch id {
		case recCodeLoad:
			loaded, err := rd.codeLoad(body, end)
			if err != nil {
				d.warn("CODE_LOAD at offset %#x: %v; records from there on are ignored", off, err)
				off = size
				continue
			}
			c := loads.add(*loaded)
			c.Loaded = ts
			c.eh = eh
			if eh.addr == 0 {
				eh = ehFrame{}
			}
			c.placed, c.loadSeq = events, events
			events++
			if rec, ok := pending[c.Addr]; ok {
				lines := rec.lines
				// An entry outside its code is dropped: LLVM 14 lists the
				// rows of the whole section from the function on (the
				// next functions' records have them too), and Node 20
				// writes some entries with garbage addresses (and lines).
				for _, l := range lines {
					if l.Addr >= c.Addr && l.Addr-c.Addr < c.Size {
						c.HasLines = true
					} else if len(outside) < maxOutside {
						outside = append(outside, l.Addr)
					}
				}
				c.debugOff, c.debugEnd = rec.off, rec.end
				delete(pending, c.Addr)
			}
			if live != nil {
				live[c.index] = c
			}
		case recCodeMove:
			idx, oldAddr, newAddr, err := rd.codeMove(body, end)
			if err != nil {
				d.warn("CODE_MOVE at offset %#x: %v; records from there on are ignored", off, err)
				off = size
				continue
			}
			if live == nil {
				live = map[uint64]*Code{}
				loads.all(func(c *Code) bool { live[c.index] = c; return true })
			}
			if c := live[idx]; c != nil && c.Addr == oldAddr {
				c.moved += newAddr - oldAddr
				c.Addr = newAddr
				c.Moves = append(c.Moves, Move{Time: ts, From: oldAddr, To: newAddr, seq: events})
				c.placed = events
				events++
			}
		case recCodeDebugInfo:
			addr, lines, bad, err := rd.debugInfo(body, end)
			if err != nil {
				d.warn("CODE_DEBUG_INFO at offset %#x: %v; records from there on are ignored", off, err)
				off = size
				continue
			}
			if bad {
				badNames++
				break
			}
			if pending == nil {
				pending = map[uint64]debugRec{}
			}
			pending[addr] = debugRec{off: body, end: end, lines: lines}
		case recUnwindingInfo:
			eh = rd.unwindingInfo(body, end)
		case recCodeClose:
			off = size
			continue
		default: // unknown records: skipped by size
		}
		off = end
	}
	d.Code = finalState(&loads)
	d.loads = loads
	garbage := 0
	for _, a := range outside {
		if d.Lookup(a) == nil && d.Lookup(a-1) == nil { // a row at a code's end closes it
			garbage++
		}
	}
	// Real writers do both (Node.js 20 writes a few line tables with
	// bytes of something else for file names, V8 and LLVM line entries
	// for code since freed or past its end): one note, saying it is
	// harmless.
	var dropped []string
	if badNames > 0 {
		dropped = append(dropped, fmt.Sprintf("%d line tables whose file names are not text", badNames))
	}
	if garbage > 0 {
		dropped = append(dropped, fmt.Sprintf("%d line entries at addresses of no code", garbage))
	}
	if len(dropped) > 0 {
		d.warn("%s were left out (JIT writers leave such records; harmless: the code keeps its names and its other lines)", strings.Join(dropped, " and "))
	}
	return d, nil
}

// finalState keeps, of the code loaded, what code placed later (loaded,
// or moved there) does not overlap, sorted by address: code that
// overwrote part of an earlier piece counts even if it was overwritten
// in turn, since the earlier piece was gone by then.
func finalState(loads *codes) []*Code {
	ls := make([]*Code, 0, loads.n)
	loads.all(func(c *Code) bool {
		if c.Size != 0 && c.Addr+c.Size > c.Addr {
			ls = append(ls, c)
		}
		return true
	})
	slices.SortStableFunc(ls, func(a, b *Code) int { return cmp.Compare(a.Addr, b.Addr) })
	dead := overwritten(ls)
	kept := ls[:0] // in place: each is kept or dropped
	for i, c := range ls {
		if !dead[i] {
			kept = append(kept, c)
		}
	}
	return slices.Clip(kept)
}

// overwritten reports which of ls, sorted by address, some piece placed
// later overlaps. One sweep by address, O(n log n) however the pieces of
// a hostile dump overlap: the pieces still spanning the current address
// are kept in two heaps by placement, the latest first (does one placed
// after the new piece overlap it?) and the earliest first (which placed
// before it does it overwrite?).
func overwritten(ls []*Code) []bool {
	dead := make([]bool, len(ls))
	end := func(i int) uint64 { return ls[i].Addr + ls[i].Size }
	latest := &placedHeap{codes: ls, latest: true}
	earliest := &placedHeap{codes: ls}
	for k, c := range ls {
		for latest.Len() > 0 && end(latest.top()) <= c.Addr {
			heap.Pop(latest)
		}
		if latest.Len() > 0 && ls[latest.top()].placed > c.placed {
			dead[k] = true
		}
		for earliest.Len() > 0 && (end(earliest.top()) <= c.Addr || ls[earliest.top()].placed < c.placed) {
			if i := heap.Pop(earliest).(int); end(i) > c.Addr {
				dead[i] = true
			}
		}
		heap.Push(latest, k)
		heap.Push(earliest, k)
	}
	return dead
}

// placedHeap is a heap of indices into codes, by the position of the
// record that placed each piece: the latest or the earliest on top.
type placedHeap struct {
	codes  []*Code
	idx    []int
	latest bool
}

func (h *placedHeap) Len() int { return len(h.idx) }
func (h *placedHeap) Less(i, j int) bool {
	a, b := h.codes[h.idx[i]].placed, h.codes[h.idx[j]].placed
	if h.latest {
		return a > b
	}
	return a < b
}
func (h *placedHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *placedHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *placedHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
func (h *placedHeap) top() int { return h.idx[0] }

func (d *Dump) warn(format string, args ...any) {
	d.Warnings = append(d.Warnings, fmt.Sprintf(format, args...))
}

// reader reads records, bounded by the file's size, through a window of
// the file: records are read in order, and most are small, so that a
// window read at once serves thousands of them.
type reader struct {
	r    io.ReaderAt
	size int64
	bo   binary.ByteOrder
	win  []byte // the file's bytes from winOff on
	// winOff is where win starts in the file.
	winOff int64
	big    []byte // for reads larger than the window
}

// window is the size of the reader's window.
const window = 1 << 20

// read returns n bytes at off, which must lie before end, valid until
// the next read.
func (rd *reader) read(off, end int64, n int64) ([]byte, error) {
	if n < 0 || off+n > end || off+n > rd.size {
		return nil, errors.New("record shorter than its fields")
	}
	if off >= rd.winOff && off+n <= rd.winOff+int64(len(rd.win)) {
		return rd.win[off-rd.winOff : off-rd.winOff+n], nil
	}
	if n > window {
		if int64(cap(rd.big)) < n {
			rd.big = make([]byte, n)
		}
		b := rd.big[:n]
		if _, err := rd.r.ReadAt(b, off); err != nil {
			return nil, err
		}
		return b, nil
	}
	if rd.win == nil {
		rd.win = make([]byte, window)
	}
	k, err := rd.r.ReadAt(rd.win[:cap(rd.win)][:min(window, rd.size-off)], off)
	rd.win, rd.winOff = rd.win[:k], off
	if int64(k) < n {
		rd.win = rd.win[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return rd.win[:n], nil
}

func (rd *reader) recordHeader(off int64) (id uint32, total int64, ts uint64, err error) {
	b, err := rd.read(off, rd.size, recordHeaderSize)
	if err != nil {
		return 0, 0, 0, errors.New("truncated record header")
	}
	id = rd.bo.Uint32(b)
	total = int64(rd.bo.Uint32(b[4:]))
	ts = rd.bo.Uint64(b[8:])
	if total < recordHeaderSize || off+total > rd.size {
		return 0, 0, 0, fmt.Errorf("record of type %d claims %d bytes, outside [%d, %d]", id, total, recordHeaderSize, rd.size-off)
	}
	return id, total, ts, nil
}

// unwindingInfo locates the .eh_frame in the CODE_UNWINDING_INFO record
// whose body is [off, end): unwinding_size, eh_frame_hdr_size and
// mapped_size, then the .eh_frame and its .eh_frame_hdr, in the order
// the writer chose (V8 and perf's reader put the header last, LLVM's ORC
// and the specification first: the .eh_frame is the part that starts
// with a CIE). mapped_size is not looked at: LLVM's ORC writes 0 with a
// full table, as perf's reader allows. A record with nothing but the
// header (V8's empty table for code it has none for) or that makes no
// sense gives size 0.
func (rd *reader) unwindingInfo(off, end int64) ehFrame {
	b, err := rd.read(off, end, 24)
	if err != nil {
		return ehFrame{}
	}
	size, hdr := rd.bo.Uint64(b), rd.bo.Uint64(b[8:])
	data := off + 24
	if hdr >= size || size > uint64(end-data) {
		return ehFrame{}
	}
	ehSize := int64(size - hdr)
	for _, at := range []int64{data, data + int64(hdr)} {
		// A CIE: a non-zero length, then CIE id 0.
		if c, err := rd.read(at, end, 8); err == nil && rd.bo.Uint32(c) != 0 && rd.bo.Uint32(c[4:]) == 0 {
			hdrAt := data // the header is the other part
			if at == data {
				hdrAt = data + ehSize
			}
			return ehFrame{off: at, size: ehSize, addr: rd.ehFramePtr(hdrAt, hdrAt+int64(hdr))}
		}
	}
	return ehFrame{}
}

// ehFramePtr returns the .eh_frame's address that the .eh_frame_hdr at
// [off, end) gives, if it gives it absolutely (LLVM's ORC: DW_EH_PE_sdata8
// | DW_EH_PE_absptr, the address where the .eh_frame was loaded); 0 if it
// gives it relative to where the header itself was (V8: DW_EH_PE_pcrel),
// which the dump does not say, or cannot be read.
func (rd *reader) ehFramePtr(off, end int64) uint64 {
	b, err := rd.read(off, end, 4)
	if err != nil || b[0] != 1 { // version 1
		return 0
	}
	enc := b[1]
	if enc&0x70 != 0 { // not DW_EH_PE_absptr: relative to something
		return 0
	}
	switch enc & 0x0f {
	case 0x03, 0x0b: // DW_EH_PE_udata4, DW_EH_PE_sdata4
		if p, err := rd.read(off+4, end, 4); err == nil {
			return uint64(rd.bo.Uint32(p))
		}
	case 0x04, 0x0c: // DW_EH_PE_udata8, DW_EH_PE_sdata8
		if p, err := rd.read(off+4, end, 8); err == nil {
			return rd.bo.Uint64(p)
		}
	}
	// DW_EH_PE_absptr's size is the address size, which the dump does
	// not give; no writer known uses it here.
	return 0
}

// cstring reads a NUL-terminated string at off, before end.
func (rd *reader) cstring(off, end int64) (string, int64, error) {
	n := min(end-off, maxName+1)
	b, err := rd.read(off, end, n)
	if err != nil {
		return "", 0, err
	}
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", 0, errors.New("unterminated or overlong name")
	}
	return string(b[:i]), off + int64(i) + 1, nil
}

func (rd *reader) codeLoad(off, end int64) (*Code, error) {
	b, err := rd.read(off, end, 40)
	if err != nil {
		return nil, err
	}
	c := &Code{Addr: rd.bo.Uint64(b[16:]), Size: rd.bo.Uint64(b[24:]), index: rd.bo.Uint64(b[32:])}
	name, codeOff, err := rd.cstring(off+40, end)
	if err != nil {
		return nil, err
	}
	if c.Size > uint64(end-codeOff) {
		return nil, fmt.Errorf("code of %d bytes, but %d left in the record", c.Size, end-codeOff)
	}
	c.Name, c.CodeOffset = name, codeOff
	return c, nil
}

func (rd *reader) codeMove(off, end int64) (index, oldAddr, newAddr uint64, err error) {
	b, err := rd.read(off, end, 48)
	if err != nil {
		return 0, 0, 0, err
	}
	return rd.bo.Uint64(b[40:]), rd.bo.Uint64(b[16:]), rd.bo.Uint64(b[24:]), nil
}

// maxDebugRecord bounds a CODE_DEBUG_INFO record, which is read whole: a
// function with a million line entries takes about 30 MB.
const maxDebugRecord = 256 << 20

// debugInfo reads a CODE_DEBUG_INFO record; bad reports file names that
// are not text (Node 20 writes some), for which the record is dropped.
func (rd *reader) debugInfo(off, end int64) (addr uint64, lines []Line, bad bool, err error) {
	if end-off > maxDebugRecord {
		return 0, nil, false, fmt.Errorf("line table of %d bytes, more than %d", end-off, maxDebugRecord)
	}
	b, err := rd.read(off, end, end-off)
	if err != nil {
		return 0, nil, false, err
	}
	if len(b) < 16 {
		return 0, nil, false, errors.New("record shorter than its fields")
	}
	addr, n := rd.bo.Uint64(b), rd.bo.Uint64(b[8:])
	b = b[16:]
	if n > uint64(len(b))/17 { // each entry takes at least 8+4+4+1 bytes
		return 0, nil, false, fmt.Errorf("%d line entries cannot fit in %d bytes", n, len(b))
	}
	lines = make([]Line, 0, n)
	prevFile := ""
	files := map[string]string{} // one string per file name
	for range n {
		if len(b) < 17 {
			return 0, nil, false, errors.New("record shorter than its fields")
		}
		l := Line{Addr: rd.bo.Uint64(b) - ELFHeaderSkew, Line: int(rd.bo.Uint32(b[8:]))}
		b = b[16:]
		i := bytes.IndexByte(b[:min(len(b), maxName+1)], 0)
		if i < 0 {
			return 0, nil, false, errors.New("unterminated or overlong name")
		}
		raw := b[:i]
		b = b[i+1:]
		var name string
		switch {
		case len(raw) == 1 && raw[0] == 0xff:
			name = prevFile // "same file as before"
		default:
			var ok bool
			if name, ok = files[string(raw)]; !ok {
				name = string(raw)
				files[name] = name
				if !isText(name) {
					bad = true
				}
			}
		}
		l.File, prevFile = name, name
		lines = append(lines, l)
	}
	slices.SortStableFunc(lines, func(a, b Line) int { return cmp.Compare(a.Addr, b.Addr) })
	return addr, lines, bad, nil
}

// isText reports whether s is printable UTF-8 without control characters.
func isText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}

// Lookup returns the code piece holding addr, or nil.
func (d *Dump) Lookup(addr uint64) *Code {
	i, found := slices.BinarySearchFunc(d.Code, addr, func(c *Code, a uint64) int { return cmp.Compare(c.Addr, a) })
	if !found {
		i--
	}
	if i < 0 || addr-d.Code[i].Addr >= d.Code[i].Size {
		return nil
	}
	return d.Code[i]
}

// Lines reads the line table of c from r, the file Read read: the
// entries that lie in c, at their final addresses, sorted.
func (d *Dump) Lines(r io.ReaderAt, c *Code) ([]Line, error) {
	if !c.HasLines {
		return nil, nil
	}
	rd := &reader{r: r, size: c.debugEnd, bo: d.ByteOrder}
	_, lines, _, err := rd.debugInfo(c.debugOff, c.debugEnd)
	if err != nil {
		return nil, err
	}
	out := lines[:0]
	for _, l := range lines {
		l.Addr += c.moved
		if l.Addr >= c.Addr && l.Addr-c.Addr < c.Size {
			out = append(out, l)
		}
	}
	return out, nil
}

// HasEHFrame reports whether the JIT wrote an .eh_frame for c, which
// [Dump.EHFrame] reads.
func (c *Code) HasEHFrame() bool { return c.eh.size > 0 }

// EHFrameAddr returns where the .eh_frame the JIT wrote for c was in
// memory, if its unwinding record says (LLVM's ORC: one .eh_frame for all
// the code of an object, each entry at its code's address); 0 if not
// (V8): then its first entry covers c from its start.
func (c *Code) EHFrameAddr() uint64 { return c.eh.addr }

// EHFrame returns the .eh_frame the JIT wrote for code c
// (CODE_UNWINDING_INFO), read from r, the dump's file; nil if there is
// none. Its addresses are relative to where the writer put it:
// [Code.EHFrameAddr] if the record says, else a reader relates its first
// entry to the code's address (V8 puts it right after the code).
func (d *Dump) EHFrame(r io.ReaderAt, c *Code) ([]byte, error) {
	if c.eh.size == 0 {
		return nil, nil
	}
	b := make([]byte, c.eh.size)
	if _, err := r.ReadAt(b, c.eh.off); err != nil {
		return nil, err
	}
	return b, nil
}

// LineAt returns the entry of lines (sorted by Addr) that covers addr:
// the last one at or before it.
func LineAt(lines []Line, addr uint64) (Line, bool) {
	i, found := slices.BinarySearchFunc(lines, addr, func(l Line, a uint64) int { return cmp.Compare(l.Addr, a) })
	if found {
		for i+1 < len(lines) && lines[i+1].Addr == addr {
			i++
		}
	} else {
		i--
	}
	if i < 0 {
		return Line{}, false
	}
	return lines[i], true
}

// A place is where a piece of code was from one time until another: the
// address it was loaded at, or each one it was moved to.
type place struct {
	lo, hi      uint64 // [lo, hi)
	from, until uint64 // times: [from, until), or from on if until is forever
	seq         int    // position in the file of the record that put the code there
	code        *Code
}

// forever ends the last place of a piece of code.
const forever = ^uint64(0)

// maxPlaceScan bounds the places At examines for one address: code
// loaded again and again over one address (a hostile dump) costs that
// much, and At then answers from the final state.
const maxPlaceScan = 1 << 12

// At returns the code that held addr at time t (a timestamp of the
// dump's clock) and the address that byte of code has in the final state,
// where Lines puts its line table: of the pieces loaded at or before t
// and not moved away by t, the one whose load or move record comes last
// in the file. Code loaded later over the same addresses, or moved there
// later, does not count. Long after the last record, At agrees with the
// final state. It returns nil if no code held addr at t, and also after
// examining maxPlaceScan places.
func (d *Dump) At(addr, t uint64) (*Code, uint64) {
	d.timelineOnce.Do(d.buildPlaces)
	i, _ := slices.BinarySearchFunc(d.places, addr+1, func(p place, a uint64) int { return cmp.Compare(p.lo, a) })
	var best *place
	for j := i - 1; j >= 0 && i-j <= maxPlaceScan; j-- {
		p := &d.places[j]
		if addr-p.lo >= d.maxPlace {
			break
		}
		if addr < p.hi && p.from <= t && (t < p.until || p.until == forever) && (best == nil || p.seq > best.seq) {
			best = p
		}
	}
	if best == nil {
		return nil, 0
	}
	return best.code, best.code.Addr + (addr - best.lo)
}

// buildPlaces lays out the timeline of every piece of code as places.
func (d *Dump) buildPlaces() {
	d.loads.all(func(c *Code) bool {
		if c.Size == 0 || c.Addr+c.Size < c.Addr {
			return true
		}
		at, from := c.Addr, c.Loaded
		seq := c.loadSeq
		if len(c.Moves) > 0 {
			at = c.Moves[0].From
		}
		for i, m := range c.Moves {
			if at+c.Size > at {
				d.places = append(d.places, place{lo: at, hi: at + c.Size, from: from, until: m.Time, seq: seq, code: c})
			}
			at, from, seq = m.To, m.Time, c.Moves[i].seq
		}
		d.places = append(d.places, place{lo: at, hi: at + c.Size, from: from, until: forever, seq: c.placed, code: c})
		d.maxPlace = max(d.maxPlace, c.Size)
		return true
	})
	slices.SortStableFunc(d.places, func(a, b place) int { return cmp.Compare(a.lo, b.lo) })
}

// Final reports whether c, which At gave for addr, is the code the final
// state has at addr (Lookup), not code since moved away or replaced.
func (d *Dump) Final(c *Code, addr uint64) bool {
	f := d.Lookup(addr)
	return f != nil && f.index == c.index && f.Loaded == c.Loaded && f.Addr == c.Addr
}

// Replaced reports whether some code of the dump was moved, or loaded
// over code loaded before it: only then does the time of a sample
// matter to what it hit.
func (d *Dump) Replaced() bool {
	if d.loads.n > len(d.Code) {
		return true
	}
	moved := false
	d.loads.all(func(c *Code) bool { moved = len(c.Moves) > 0; return !moved })
	return moved
}
