// Package jitdump reads jitdump files (jit-PID.dump), the format of
// Linux perf's JIT interface (tools/perf/Documentation/
// jitdump-specification.txt) that V8 (--perf-prof), the JVM agents, .NET,
// LLVM's PerfJITEventListener and ORC's PerfSupportPlugin, wasmtime and
// others write: a header, then records, each with its size.
//
// [Read] streams the file once and keeps the final state: the code that
// is loaded at the end (CODE_LOAD, with CODE_MOVE applied; a later load
// over the same addresses replaces an earlier one), the name of each
// piece, the file offset of its code bytes, and its line table
// (CODE_DEBUG_INFO). CODE_UNWINDING_INFO and record types it does not
// know are skipped by their size; CODE_CLOSE ends the file. Every record
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
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
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
	Code []Code
	// Warnings says what was skipped, each once.
	Warnings []string
}

// Code is one piece of JIT-compiled code.
type Code struct {
	Addr, Size uint64
	Name       string
	// CodeOffset is where the code bytes are in the file.
	CodeOffset int64
	// Lines are the line entries, sorted by Addr (already corrected by
	// ELFHeaderSkew), or nil.
	Lines []Line
	index uint64 // code_index, which CODE_MOVE refers to
}

// A Line says that code from Addr on comes from File:Line.
type Line struct {
	Addr uint64
	File string
	Line int
}

// Read reads the jitdump file in r, of the given size; name is used in
// errors. It fails when the header is not a jitdump header; a bad record
// later on ends the reading with a warning in Dump.Warnings.
func Read(r io.ReaderAt, size int64, name string) (*Dump, error) {
	var hdr [fileHeaderSize]byte
	if size < fileHeaderSize {
		return nil, fmt.Errorf("%s: %d bytes: too short for a jitdump header", name, size)
	}
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", name, err)
	}
	d := &Dump{}
	switch {
	case binary.LittleEndian.Uint32(hdr[:]) == Magic:
		d.ByteOrder = binary.LittleEndian
	case binary.BigEndian.Uint32(hdr[:]) == Magic:
		d.ByteOrder = binary.BigEndian
	default:
		return nil, fmt.Errorf("%s: bad magic %q: not a jitdump file", name, hdr[:4])
	}
	bo := d.ByteOrder
	if v := bo.Uint32(hdr[4:]); v != 1 {
		d.warn("header version %d (only 1 is known); reading it as version 1", v)
	}
	hsize := int64(bo.Uint32(hdr[8:]))
	if hsize < fileHeaderSize || hsize > size {
		return nil, fmt.Errorf("%s: header size %d is outside [%d, %d]", name, hsize, fileHeaderSize, size)
	}
	d.Machine = bo.Uint32(hdr[12:])
	d.PID = bo.Uint32(hdr[20:])
	// hdr[32:40] are flags: LLVM 19's ORC writes garbage there, and
	// nothing here depends on them.

	rd := &reader{r: r, size: size, bo: bo}
	live := map[uint64]*Code{}    // by code_index... or address for writers that reuse indexes
	var loads []*Code             // in file order
	var pending map[uint64][]Line // debug info waiting for its CODE_LOAD, by code address
	off := hsize
	badNames := 0
	var outside []uint64 // line entries outside their code
	for off < size {
		id, total, err := rd.recordHeader(off)
		if err != nil {
			d.warn("%s at offset %#x; records from there on are ignored", err, off)
			break
		}
		body := off + recordHeaderSize
		end := off + total
		switch id {
		case recCodeLoad:
			c, err := rd.codeLoad(body, end)
			if err != nil {
				d.warn("CODE_LOAD at offset %#x: %v; records from there on are ignored", off, err)
				off = size
				continue
			}
			if lines, ok := pending[c.Addr]; ok {
				// An entry outside its code is dropped: LLVM 14 lists the
				// rows of the whole section from the function on (the
				// next functions' records have them too), and Node 20
				// writes some entries with garbage addresses (and lines).
				for _, l := range lines {
					if l.Addr >= c.Addr && l.Addr-c.Addr < c.Size {
						c.Lines = append(c.Lines, l)
					} else if len(outside) < maxOutside {
						outside = append(outside, l.Addr)
					}
				}
				delete(pending, c.Addr)
			}
			live[c.index] = c
			loads = append(loads, c)
		case recCodeMove:
			idx, oldAddr, newAddr, err := rd.codeMove(body, end)
			if err != nil {
				d.warn("CODE_MOVE at offset %#x: %v; records from there on are ignored", off, err)
				off = size
				continue
			}
			if c := live[idx]; c != nil && c.Addr == oldAddr {
				delta := newAddr - oldAddr
				for i := range c.Lines {
					c.Lines[i].Addr += delta
				}
				c.Addr = newAddr
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
				pending = map[uint64][]Line{}
			}
			pending[addr] = lines
		case recCodeClose:
			off = size
			continue
		default: // CODE_UNWINDING_INFO and unknown records: skipped by size
		}
		off = end
	}
	if badNames > 0 {
		d.warn("%d CODE_DEBUG_INFO records with file names that are not text were dropped", badNames)
	}
	d.Code = finalState(loads)
	garbage := 0
	for _, a := range outside {
		if d.Lookup(a) == nil && d.Lookup(a-1) == nil { // a row at a code's end closes it
			garbage++
		}
	}
	if garbage > 0 {
		d.warn("%d line entries at addresses of no code were dropped", garbage)
	}
	return d, nil
}

// finalState keeps, of the code loaded, what a later load does not
// overlap, sorted by address.
func finalState(loads []*Code) []Code {
	// Later loads win: walk from the last, keeping a piece only if it
	// overlaps nothing kept.
	var kept []Code
	var spans [][2]uint64 // of kept, sorted by start
	for i := len(loads) - 1; i >= 0; i-- {
		c := loads[i]
		if c.Size == 0 || c.Addr+c.Size < c.Addr {
			continue
		}
		j, _ := slices.BinarySearchFunc(spans, c.Addr, func(s [2]uint64, a uint64) int { return cmp.Compare(s[0], a) })
		if (j < len(spans) && spans[j][0] < c.Addr+c.Size) || (j > 0 && spans[j-1][1] > c.Addr) {
			continue
		}
		spans = slices.Insert(spans, j, [2]uint64{c.Addr, c.Addr + c.Size})
		kept = append(kept, *c)
	}
	slices.SortFunc(kept, func(a, b Code) int { return cmp.Compare(a.Addr, b.Addr) })
	return kept
}

func (d *Dump) warn(format string, args ...any) {
	d.Warnings = append(d.Warnings, fmt.Sprintf(format, args...))
}

// reader reads records, bounded by the file's size.
type reader struct {
	r    io.ReaderAt
	size int64
	bo   binary.ByteOrder
	buf  []byte
}

// read returns n bytes at off, which must lie before end.
func (rd *reader) read(off, end int64, n int64) ([]byte, error) {
	if n < 0 || off+n > end || off+n > rd.size {
		return nil, errors.New("record shorter than its fields")
	}
	if int64(cap(rd.buf)) < n {
		rd.buf = make([]byte, n)
	}
	b := rd.buf[:n]
	if _, err := rd.r.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

func (rd *reader) recordHeader(off int64) (id uint32, total int64, err error) {
	b, err := rd.read(off, rd.size, recordHeaderSize)
	if err != nil {
		return 0, 0, errors.New("truncated record header")
	}
	id = rd.bo.Uint32(b)
	total = int64(rd.bo.Uint32(b[4:]))
	if total < recordHeaderSize || off+total > rd.size {
		return 0, 0, fmt.Errorf("record of type %d claims %d bytes, outside [%d, %d]", id, total, recordHeaderSize, rd.size-off)
	}
	return id, total, nil
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

// debugInfo reads a CODE_DEBUG_INFO record; bad reports file names that
// are not text (Node 20 writes some), for which the record is dropped.
func (rd *reader) debugInfo(off, end int64) (addr uint64, lines []Line, bad bool, err error) {
	b, err := rd.read(off, end, 16)
	if err != nil {
		return 0, nil, false, err
	}
	addr, n := rd.bo.Uint64(b), rd.bo.Uint64(b[8:])
	if n > uint64(end-off-16)/17 { // each entry takes at least 8+4+4+1 bytes
		return 0, nil, false, fmt.Errorf("%d line entries cannot fit in %d bytes", n, end-off-16)
	}
	lines = make([]Line, 0, n)
	p := off + 16
	prevFile := ""
	for range n {
		e, err := rd.read(p, end, 16)
		if err != nil {
			return 0, nil, false, err
		}
		l := Line{Addr: rd.bo.Uint64(e) - ELFHeaderSkew, Line: int(rd.bo.Uint32(e[8:]))}
		name, next, err := rd.cstring(p+16, end)
		if err != nil {
			return 0, nil, false, err
		}
		switch {
		case name == "\xff":
			name = prevFile // "same file as before"
		case !isText(name):
			bad = true
		}
		l.File, prevFile = name, name
		lines = append(lines, l)
		p = next
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
	i, found := slices.BinarySearchFunc(d.Code, addr, func(c Code, a uint64) int { return cmp.Compare(c.Addr, a) })
	if !found {
		i--
	}
	if i < 0 || addr-d.Code[i].Addr >= d.Code[i].Size {
		return nil
	}
	return &d.Code[i]
}

// LineAt returns the line entry that covers addr in c: the last one at or
// before it.
func (c *Code) LineAt(addr uint64) (Line, bool) {
	i, found := slices.BinarySearchFunc(c.Lines, addr, func(l Line, a uint64) int { return cmp.Compare(l.Addr, a) })
	if found {
		for i+1 < len(c.Lines) && c.Lines[i+1].Addr == addr {
			i++
		}
	} else {
		i--
	}
	if i < 0 {
		return Line{}, false
	}
	return c.Lines[i], true
}
