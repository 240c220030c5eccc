package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/jitpprof/pprof/internal/cfi"
	jprofile "github.com/jitpprof/pprof/profile"
)

// maxUnwound bounds the user frames unwound for one sample; perf's own
// limit (kernel.perf_event_max_stack) is 127 by default.
const maxUnwound = 512

// A perfArch maps perf's user registers (the bits of sample_regs_user)
// to DWARF's numbering.
type perfArch struct {
	arch   *cfi.Arch
	dwarf  []int // by perf register index: the DWARF number, or -1
	pc, sp int   // perf's indexes of the pc and the stack pointer
}

// perfArches are the machines whose recordings are unwound, by uname -m.
var perfArches = map[string]*perfArch{
	// arch/x86/include/uapi/asm/perf_regs.h: AX BX CX DX SI DI BP SP IP
	// FLAGS CS SS DS ES FS GS R8-R15.
	"x86_64": {arch: cfi.X86_64, pc: 8, sp: 7,
		dwarf: []int{0, 3, 2, 1, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15}},
	// arch/arm64/include/uapi/asm/perf_regs.h: X0-X30, SP, PC.
	"aarch64": {arch: cfi.ARM64, pc: 32, sp: 31,
		dwarf: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, -1}},
}

// unwinder unwinds the user stacks of a recording made with perf record
// --call-graph dwarf: each sample has the thread's registers and a copy
// of the top of its stack, and the call frame information of the files
// mapped there tells where each caller's frame is.
type unwinder struct {
	pa        *perfArch
	mask      uint64 // sample_regs_user
	byteOrder binary.ByteOrder
	finder    *fileFinder
	lookup    func(pid uint32, addr uint64) *mmapping
	jit       *jitTables // nil: JIT code by its frame pointer
	note      func(string)
	files     map[string]*cfi.File // by fileFinder.key; nil: unusable
	// work is the bytes of call frame instructions unwinding may still
	// run: linear in the recording's size, so that damaged or hostile
	// tables (a huge entry every frame of every sample runs) cannot
	// make reading it take without bound. Real recordings use a small
	// part of it: a sample's frames run a few hundred bytes.
	work int64
}

// Work allowed: workPerByte bytes of instructions per byte of the
// recording, and workBase more.
const (
	workPerByte = 16
	workBase    = 1 << 28
)

// unwound reports whether f's samples carry user registers and stacks to
// unwind (perf record --call-graph dwarf).
func (f *File) unwound() bool {
	for i := range f.Attrs {
		if st := f.Attrs[i].SampleType; st&SampleStackUser != 0 && st&SampleRegsUser != 0 {
			return true
		}
	}
	return false
}

// newUnwinder returns the unwinder for f's samples, nil if they have no
// user registers and stacks or f's machine is not one unwound (which a
// note then says).
func newUnwinder(f *File, finder *fileFinder, lookup func(uint32, uint64) *mmapping, jit *jitTables, note func(string)) *unwinder {
	var attr *Attr
	for i := range f.Attrs {
		if st := f.Attrs[i].SampleType; st&SampleStackUser != 0 && st&SampleRegsUser != 0 {
			attr = &f.Attrs[i]
			break
		}
	}
	if attr == nil {
		return nil
	}
	pa := perfArches[f.Arch]
	if pa == nil {
		note(fmt.Sprintf("recorded with --call-graph dwarf on %q: user stacks are unwound for x86_64 and aarch64 recordings only; the stacks are the leaf and the kernel's callchain", f.Arch))
		return nil
	}
	for _, a := range f.Attrs {
		if a.RegsUser != attr.RegsUser {
			note("recorded with --call-graph dwarf, events with different user registers: the stacks are the leaf and the kernel's callchain")
			return nil
		}
	}
	if attr.RegsUser&(1<<pa.pc) == 0 || attr.RegsUser&(1<<pa.sp) == 0 {
		note("recorded with --call-graph dwarf without the pc and stack pointer: the stacks are the leaf and the kernel's callchain")
		return nil
	}
	return &unwinder{pa: pa, mask: attr.RegsUser, byteOrder: f.ByteOrder, finder: finder,
		lookup: lookup, jit: jit, note: note, files: map[string]*cfi.File{}, work: workBase + workPerByte*f.size}
}

// unwind appends to frames the user pc of a sample with user registers
// regs and stack copy stack, and the return addresses of its callers.
func (u *unwinder) unwind(frames []uint64, pid uint32, regs []uint64, stack []byte) []uint64 {
	var r cfi.Regs
	var pc, sp uint64
	var havePC, haveSP bool
	mask := u.mask
	for k := 0; mask != 0 && k < len(regs); k++ {
		i := bits.TrailingZeros64(mask)
		mask &= mask - 1
		switch i {
		case u.pa.pc:
			pc, havePC = regs[k], true
		case u.pa.sp:
			sp, haveSP = regs[k], true
		}
		if i < len(u.pa.dwarf) && u.pa.dwarf[i] >= 0 {
			r.Set(u.pa.dwarf[i], regs[k])
		}
	}
	if !havePC || !haveSP || pc == 0 {
		return frames
	}
	frames = append(frames, pc)
	bo := u.byteOrder
	mem := func(addr uint64) (uint64, bool) {
		if addr < sp || addr-sp > uint64(len(stack)) || uint64(len(stack))-(addr-sp) < 8 {
			return 0, false
		}
		return bo.Uint64(stack[addr-sp:]), true
	}
	find := func(pc uint64) (*cfi.Table, uint64, bool) {
		mm := u.lookup(pid, pc)
		if mm == nil {
			return nil, 0, false
		}
		if mm.file == "" {
			// Anonymous memory: JIT code, unwound by its JIT object's
			// tables, or by its frame pointer.
			if u.jit != nil {
				if t, bias := u.jit.at(pc); t != nil {
					return t, bias, true
				}
			}
			return nil, 0, true
		}
		cf := u.file(mm)
		if cf == nil {
			return nil, 0, false
		}
		bias, ok := cf.Bias(mm.start, mm.offset, pc)
		return cf.Table, bias, ok
	}
	rets, err := cfi.Unwind(u.pa.arch, r, pc, mem, find, maxUnwound, &u.work)
	if errors.Is(err, cfi.ErrWork) {
		u.note("user stacks are not unwound further: the files' call frame information takes more work than any recording of this size needs (damaged tables?)")
	}
	return append(frames, rets...)
}

// file returns the call frame information of mm's file (see
// fileFinder.open); nil, said once, if there is none to use.
func (u *unwinder) file(mm *mmapping) *cfi.File {
	if mm.cfiKnown {
		return mm.cfi
	}
	mm.cfi, mm.cfiKnown = u.fileByKey(mm), true
	return mm.cfi
}

// fileByKey is file, once per file however many mappings it has.
func (u *unwinder) fileByKey(mm *mmapping) *cfi.File {
	key := u.finder.key(mm)
	if cf, ok := u.files[key]; ok {
		return cf
	}
	var cf *cfi.File
	ef, err := u.finder.open(mm)
	if err == nil {
		cf, err = cfi.OpenELF(ef)
		ef.Close()
		if cf != nil && err != nil {
			u.note(err.Error()) // damaged: what was read is used
		}
	}
	u.files[key] = cf
	if cf == nil {
		u.note(fmt.Sprintf("user stacks end at %s: %v", mm.file, err))
	}
	return cf
}

// jitTables gives the call frame tables of JIT code, from the JIT objects
// of the recorded processes: an LLVM dump's .eh_frame (relocated to load
// addresses: bias 0), or the one a jitdump's writer gave that piece of
// code (CODE_UNWINDING_INFO), each made into a table once. Code without
// one is unwound by its frame pointer.
type jitTables struct {
	jit    JITCode
	tables map[*jprofile.CallFrameInfo]jitTable
	byPC   map[uint64]jitTable // the table of each pc asked about
}

// jitTable is one table and what its addresses are less than the code's.
type jitTable struct {
	t    *cfi.Table // nil: none to use
	bias uint64
}

func newJITTables(jit JITCode) *jitTables {
	return &jitTables{jit: jit, tables: map[*jprofile.CallFrameInfo]jitTable{}, byPC: map[uint64]jitTable{}}
}

// at returns the table of the JIT code at pc and its bias; nil if there
// is none (tables that cannot be read leave the code to its frame
// pointers: the JIT stage says what is wrong with the object, if
// anything).
func (j *jitTables) at(pc uint64) (*cfi.Table, uint64) {
	if jt, ok := j.byPC[pc]; ok {
		return jt.t, jt.bias
	}
	var jt jitTable
	if info, err := j.jit.CallFrameInfo(pc); err == nil && info != nil {
		var ok bool
		if jt, ok = j.tables[info]; !ok {
			jt = tableOf(info)
			j.tables[info] = jt
		}
	}
	j.byPC[pc] = jt
	return jt.t, jt.bias
}

// tableOf makes the table of info.
func tableOf(info *jprofile.CallFrameInfo) jitTable {
	arch := cfi.ArchOf(info.Machine)
	if arch == nil {
		return jitTable{}
	}
	if info.Relocated {
		var secs []cfi.Section
		if len(info.EHFrame) > 0 {
			secs = append(secs, cfi.Section{Name: ".eh_frame", Data: info.EHFrame})
		}
		if len(info.DebugFrame) > 0 {
			secs = append(secs, cfi.Section{Name: ".debug_frame", Data: info.DebugFrame})
		}
		t, _ := cfi.New(info.Path, arch, info.ByteOrder, 8, secs...)
		return jitTable{t: t}
	}
	t, bias, _ := cfi.ForCode(info.Path, arch, info.ByteOrder, info.EHFrame, info.EHFrameAddr, info.Code)
	return jitTable{t: t, bias: bias}
}
