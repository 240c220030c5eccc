// Package cfi reads the call frame information of ELF files (DWARF's
// .debug_frame and its variant .eh_frame, the table C++ exceptions unwind
// with) and unwinds stacks with it: from a thread's registers and a copy
// of the top of its stack, as `perf record --call-graph dwarf` saves them
// with each sample, it finds the return addresses of the calls in
// progress, in code built without frame pointers.
//
// The format is that of the DWARF 5 standard, section 6.4, and of the
// Linux Standard Base's .eh_frame (pointer encodings and augmentations).
// Every read is bounded by the section it reads: a damaged table costs
// the frames it describes, never a panic or a loop.
package cfi

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// MaxRegs bounds the DWARF register numbers tracked: rules for higher
// ones (vector registers) are read and ignored.
const MaxRegs = 33

// An Arch is what unwinding needs to know of a machine.
type Arch struct {
	Name string
	// SP is the DWARF number of the stack pointer, which takes the
	// canonical frame address as its value in the caller.
	SP int
	// PC is the DWARF number of the register that holds the frame's
	// program counter when unwinding starts: the return address column
	// on x86-64 (16), where the pc has no register of its own, and -1 on
	// machines whose pc is not a DWARF register (AArch64: its return
	// address column is the link register x30).
	PC int
	// MinCFA is how far above the stack pointer the canonical frame
	// address of a caller's frame lies at least: 8 on x86-64 (the pushed
	// return address), 0 on AArch64.
	MinCFA uint64
	// FP is the DWARF number of the frame pointer (rbp, x29): code
	// without tables (JIT code) is unwound by it, as a frame record of
	// the caller's frame pointer and the return address.
	FP int
}

// The architectures unwound.
var (
	// X86_64: rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7,
	// r8-r15 8-15, return address 16 (System V psABI, figure 3.36).
	X86_64 = &Arch{Name: "x86-64", SP: 7, PC: 16, MinCFA: 8, FP: 6}
	// ARM64: x0-x30 0-30, sp 31 (DWARF for the Arm 64-bit architecture).
	ARM64 = &Arch{Name: "AArch64", SP: 31, PC: -1, FP: 29}
)

// A Table is the call frame information of one file: its frame
// description entries sorted by the code they cover. It is not safe for
// concurrent use: it keeps what its steps computed.
type Table struct {
	name string
	arch *Arch
	fdes []fde
	// los are the entries' starts, fdes[i].lo at i: the index find
	// searches, 8 bytes an entry where an entry takes 48.
	los []uint64
	bo  binary.ByteOrder
	ptr int // bytes of an address: 4 or 8
	// goSP, if not nil, gives the SP delta of Go code at an address and
	// the work it took (see gopclntab.Table.SPDelta): Go code without a
	// frame description entry (a binary without DWARF) is unwound by it.
	goSP func(addr uint64) (delta int64, work int, ok bool)
	// initials counts the CIEs whose initial row is kept: real files
	// have a few CIEs, a hostile one could have one per FDE, and a row
	// takes 1.6 KB.
	initials int
	// rules are the compiled rows of the table's addresses an Unwinder
	// met, each kept once however many addresses share it (see
	// Table.rule).
	rules map[compiled]*compiled
	// states is run's stack of remembered rows, kept from run to run.
	states []row
}

// An fde is one frame description entry: the code [lo, hi) and its
// instructions, after those of its common information entry.
type fde struct {
	lo, hi uint64
	cie    *cie
	instr  []byte
}

// A cie is a common information entry.
type cie struct {
	codeAlign uint64
	dataAlign int64
	ra        uint64 // return address column
	fdeEnc    byte   // pointer encoding of the FDEs' addresses ('R')
	aug       bool   // 'z': FDEs have augmentation data
	signal    bool   // 'S': a signal handler's frame
	ptr       int    // address size (DWARF 4 .debug_frame may say)
	instr     []byte
	// initial is the row after instr, which every FDE of the CIE starts
	// from, kept once computed (see Table.rowAt); initialErr says why it
	// could not be.
	initial    *row
	initialErr error
}

// A FormatError reports call frame information that cannot be read.
type FormatError struct {
	File    string // the file's name
	Section string // .eh_frame or .debug_frame
	Off     uint64 // offset of the entry in the section
	Msg     string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: %s at offset %#x: %s", e.File, e.Section, e.Off, e.Msg)
}

// A Section is one call frame section's contents and where it is.
type Section struct {
	Name string // .eh_frame or .debug_frame
	Data []byte
	Addr uint64 // its load address (sh_addr), for pc-relative pointers
}

// New reads the frame description entries of the sections of a file
// named name (used in errors), in byte order bo with addresses of ptr
// bytes, for arch. Entries of .eh_frame come first; .debug_frame's fill
// in code .eh_frame does not cover. An entry that cannot be read ends
// its section, and the error says where; what was read before stays.
func New(name string, arch *Arch, bo binary.ByteOrder, ptr int, sections ...Section) (*Table, error) {
	if ptr != 4 && ptr != 8 {
		return nil, fmt.Errorf("%s: addresses of %d bytes", name, ptr)
	}
	t := &Table{name: name, arch: arch, bo: bo, ptr: ptr}
	var errs []error
	for _, s := range sections {
		fdes, err := t.parse(s)
		if err != nil {
			errs = append(errs, err)
		}
		if len(t.fdes) == 0 {
			t.fdes = fdes
			continue
		}
		// Keep what an earlier section covers.
		t.sort()
		for _, f := range fdes {
			if _, ok := t.find(f.lo); !ok {
				t.fdes = append(t.fdes, f)
			}
		}
	}
	t.sort()
	return t, errors.Join(errs...)
}

// ForCode returns the table of an .eh_frame a JIT wrote (a jitdump's
// CODE_UNWINDING_INFO) and bias, what the table's addresses are less than
// the code's; nil if it has no entry. addr is where the .eh_frame was in
// memory, if the writer said (LLVM's ORC, one table for all the code of
// an object): its entries are at their addresses, bias 0. Else (addr 0;
// V8, one table per piece of code) its first entry covers the code at
// address code from its start: where the writer put the .eh_frame need
// not be known, its entries' addresses are relative to it, and the first
// is moved to code.
func ForCode(name string, arch *Arch, bo binary.ByteOrder, ehFrame []byte, addr, code uint64) (t *Table, bias uint64, err error) {
	// Else read as if at 2^62, not 0: the code usually ends right where
	// the .eh_frame starts, which would be the top of the address space.
	at := addr
	if at == 0 {
		at = 1 << 62
	}
	t, err = New(name, arch, bo, 8, Section{Name: ".eh_frame", Data: ehFrame, Addr: at})
	if len(t.fdes) == 0 {
		return nil, 0, err
	}
	if addr != 0 {
		return t, 0, err
	}
	return t, code - t.fdes[0].lo, err
}

// sort sorts the entries by their start and indexes them.
func (t *Table) sort() {
	slices.SortStableFunc(t.fdes, func(a, b fde) int { return cmp.Compare(a.lo, b.lo) })
	t.los = t.los[:0]
	for i := range t.fdes {
		t.los = append(t.los, t.fdes[i].lo)
	}
}

// Len returns the number of frame description entries.
func (t *Table) Len() int { return len(t.fdes) }

// find returns the entry covering addr.
func (t *Table) find(addr uint64) (*fde, bool) {
	// i: the number of entries starting at or below addr.
	i, j := 0, len(t.los)
	for i < j {
		h := int(uint(i+j) >> 1)
		if t.los[h] <= addr {
			i = h + 1
		} else {
			j = h
		}
	}
	// t.fdes[i-1] is the last starting at or below addr; entries do not
	// nest, but a zero-length one may hide a longer one before it.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if f := &t.fdes[j]; addr >= f.lo && addr < f.hi {
			return f, true
		}
	}
	return nil, false
}

// reader reads one section's entries, bounded by the entry.
type reader struct {
	b   []byte
	off int // within b
	bo  binary.ByteOrder
	bad bool
}

func (r *reader) u8() byte {
	if r.off+1 > len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) fixed(n int) uint64 {
	if n < 0 || r.off+n > len(r.b) {
		r.bad = true
		r.off = len(r.b)
		return 0
	}
	p := r.b[r.off:]
	r.off += n
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(r.bo.Uint16(p))
	case 4:
		return uint64(r.bo.Uint32(p))
	case 8:
		return r.bo.Uint64(p)
	}
	r.bad = true
	return 0
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if r.off >= len(r.b) {
			r.bad = true
			return 0
		}
		c := r.b[r.off]
		r.off++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		if r.off >= len(r.b) {
			r.bad = true
			return 0
		}
		c := r.b[r.off]
		r.off++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) cstring() string {
	for i := r.off; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.bad = true
	r.off = len(r.b)
	return ""
}

// Pointer encodings of .eh_frame (DW_EH_PE_*).
const (
	peAbsptr  = 0x00
	peULEB128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSLEB128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePCRel   = 0x10
	peDataRel = 0x30
	peOmit    = 0xff
)

// pointer reads a pointer of encoding enc at the reader's offset in a
// section loaded at addr; ok is false for an encoding it cannot resolve
// (relative to a text or function base, indirect).
func (r *reader) pointer(enc byte, ptr int, addr uint64) (v uint64, ok bool) {
	if enc == peOmit {
		return 0, true
	}
	at := addr + uint64(r.off)
	switch enc & 0x0f {
	case peAbsptr:
		v = r.fixed(ptr)
	case peULEB128:
		v = r.uleb()
	case peUdata2:
		v = r.fixed(2)
	case peUdata4:
		v = r.fixed(4)
	case peUdata8:
		v = r.fixed(8)
	case peSLEB128:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.fixed(2))))
	case peSdata4:
		v = uint64(int64(int32(r.fixed(4))))
	case peSdata8:
		v = r.fixed(8)
	default:
		r.bad = true
		return 0, false
	}
	switch enc & 0x70 {
	case 0:
	case pePCRel:
		v += at
	default:
		return 0, false
	}
	if enc&0x80 != 0 { // indirect: the value is in memory
		return 0, false
	}
	if ptr == 4 {
		v &= 0xffffffff
	}
	return v, true
}

// parse reads the entries of one section.
func (t *Table) parse(s Section) ([]fde, error) {
	eh := s.Name == ".eh_frame"
	cies := map[uint64]*cie{}
	var fdes []fde
	b := s.Data
	for off := uint64(0); off < uint64(len(b)); {
		start := off
		fail := func(format string, args ...any) error {
			return &FormatError{File: t.name, Section: s.Name, Off: start, Msg: fmt.Sprintf(format, args...)}
		}
		if uint64(len(b))-off < 4 {
			return fdes, fail("truncated entry length")
		}
		length := uint64(t.bo.Uint32(b[off:]))
		off += 4
		idSize := uint64(4)
		if length == 0xffffffff {
			if uint64(len(b))-off < 8 {
				return fdes, fail("truncated 64-bit entry length")
			}
			length = t.bo.Uint64(b[off:])
			off += 8
			idSize = 8
		}
		if length == 0 {
			if eh {
				break // the terminator
			}
			continue
		}
		if length > uint64(len(b))-off || length < idSize {
			return fdes, fail("entry of %d bytes, %d left in the section", length, uint64(len(b))-off)
		}
		body := b[:off+length] // offsets stay those of the section
		next := off + length
		idOff := off
		r := &reader{b: body, off: int(off), bo: t.bo}
		id := r.fixed(int(idSize))
		isCIE := id == 0
		if !eh {
			isCIE = id == 0xffffffff || (idSize == 8 && id == ^uint64(0))
		}
		if isCIE {
			off = next
			continue // read when an FDE points at it
		}
		var cieOff uint64
		if eh {
			if id > idOff {
				return fdes, fail("CIE pointer %#x before the section", id)
			}
			cieOff = idOff - id
		} else {
			cieOff = id
		}
		c, ok := cies[cieOff]
		if !ok {
			var err error
			c, err = t.parseCIE(s, cieOff, eh)
			if err != nil {
				return fdes, err
			}
			cies[cieOff] = c
		}
		lo, ok1 := r.pointer(c.fdeEnc, c.ptr, s.Addr)
		size, _ := r.pointer(c.fdeEnc&0x0f, c.ptr, 0)
		if c.aug {
			n := r.uleb()
			if n > uint64(len(body)-r.off) {
				return fdes, fail("augmentation data of %d bytes", n)
			}
			r.off += int(n)
		}
		if r.bad {
			return fdes, fail("truncated FDE")
		}
		if ok1 && size > 0 && lo+size > lo {
			fdes = append(fdes, fde{lo: lo, hi: lo + size, cie: c, instr: body[r.off:next]})
		}
		off = next
	}
	return fdes, nil
}

// parseCIE reads the common information entry at off.
func (t *Table) parseCIE(s Section, off uint64, eh bool) (*cie, error) {
	b := s.Data
	fail := func(format string, args ...any) error {
		return &FormatError{File: t.name, Section: s.Name, Off: off, Msg: "CIE: " + fmt.Sprintf(format, args...)}
	}
	if off > uint64(len(b)) || uint64(len(b))-off < 4 {
		return nil, fail("outside the section")
	}
	length := uint64(t.bo.Uint32(b[off:]))
	p := off + 4
	idSize := 4
	if length == 0xffffffff {
		if uint64(len(b))-p < 8 {
			return nil, fail("truncated")
		}
		length = t.bo.Uint64(b[p:])
		p += 8
		idSize = 8
	}
	if length > uint64(len(b))-p {
		return nil, fail("%d bytes, %d left in the section", length, uint64(len(b))-p)
	}
	r := &reader{b: b[:p+length], off: int(p), bo: t.bo}
	id := r.fixed(idSize)
	if (eh && id != 0) || (!eh && id != 0xffffffff && id != ^uint64(0)) {
		return nil, fail("not a CIE (id %#x)", id)
	}
	c := &cie{ptr: t.ptr, fdeEnc: peAbsptr}
	version := r.u8()
	if version != 1 && version != 3 && version != 4 {
		return nil, fail("version %d", version)
	}
	aug := r.cstring()
	if version == 4 {
		if as := r.u8(); as == 4 || as == 8 {
			c.ptr = int(as)
		}
		r.u8() // segment selector size
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.ra = uint64(r.u8())
	} else {
		c.ra = r.uleb()
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.aug = true
		n := r.uleb()
		if n > uint64(len(r.b)-r.off) {
			return nil, fail("augmentation data of %d bytes", n)
		}
		end := r.off + int(n)
		for _, a := range aug[1:] {
			switch a {
			case 'R':
				c.fdeEnc = r.u8()
			case 'L':
				r.u8()
			case 'P':
				enc := r.u8()
				r.pointer(enc&^0x80, c.ptr, s.Addr)
			case 'S':
				c.signal = true
			}
		}
		r.off = end
	} else if aug == "eh" {
		r.fixed(c.ptr) // the old GCC "eh" data
	} else if aug != "" {
		return nil, fail("augmentation %q", aug)
	}
	if r.bad {
		return nil, fail("truncated")
	}
	c.instr = r.b[r.off:]
	return c, nil
}
