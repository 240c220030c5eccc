package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Regs are the registers of a frame by DWARF number, each known or not.
type Regs struct {
	val   [MaxRegs]uint64
	known uint64 // bit i: val[i] is known
}

// Set sets register reg (ignored if reg >= MaxRegs).
func (r *Regs) Set(reg int, v uint64) {
	if reg >= 0 && reg < MaxRegs {
		r.val[reg] = v
		r.known |= 1 << reg
	}
}

// Get returns register reg and whether it is known.
func (r *Regs) Get(reg int) (uint64, bool) {
	if reg < 0 || reg >= MaxRegs || r.known&(1<<reg) == 0 {
		return 0, false
	}
	return r.val[reg], true
}

// Memory reads the 8 bytes at addr in the unwound thread's memory; ok is
// false for memory it does not have.
type Memory func(addr uint64) (v uint64, ok bool)

// A Stack is a copy of the top of a thread's stack, as perf record
// --call-graph dwarf keeps one with each sample: the only memory of the
// thread an Unwinder reads.
type Stack struct {
	Addr      uint64 // where Data[0] was: the stack pointer when copied
	Data      []byte
	BigEndian bool
}

// memory is the unwound thread's memory: fn, if not nil, else a Stack.
type memory struct {
	fn    Memory
	stack Stack
	le    []byte // stack.Data if fn is nil and the stack little-endian
}

// stackMemory returns the memory of stack s.
func stackMemory(s Stack) memory {
	m := memory{stack: s}
	if !s.BigEndian {
		m.le = s.Data
	}
	return m
}

// read reads the 8 bytes at addr (applyFast has its own copy of the
// first case).
func (m *memory) read(addr uint64) (uint64, bool) {
	if off := addr - m.stack.Addr; off < uint64(len(m.le)) && uint64(len(m.le))-off >= 8 {
		return binary.LittleEndian.Uint64(m.le[off:]), true
	}
	return m.readOther(addr)
}

// readOther is read for the other cases.
func (m *memory) readOther(addr uint64) (uint64, bool) {
	if m.fn != nil {
		return m.fn(addr)
	}
	s := &m.stack
	off := addr - s.Addr
	if addr < s.Addr || off > uint64(len(s.Data)) || uint64(len(s.Data))-off < 8 {
		return 0, false
	}
	if s.BigEndian {
		return binary.BigEndian.Uint64(s.Data[off:]), true
	}
	return binary.LittleEndian.Uint64(s.Data[off:]), true
}

// Errors Step and Unwind return besides a FormatError's.
var (
	// ErrNoEntry: no frame description entry covers the address.
	ErrNoEntry = errors.New("no call frame information for the address")
	// ErrMemory: a saved register lies outside the memory given, as
	// past the end of the copy perf keeps of a deep stack.
	ErrMemory = errors.New("a saved register is outside the stack copy")
	// ErrNoProgress: the caller's stack pointer is not above the callee's.
	ErrNoProgress = errors.New("the stack pointer does not move up")
	// ErrWork: the work Unwind was given is spent.
	ErrWork = errors.New("the unwinding work allowed is spent")
)

// A StepError is an error of the table at an address.
type StepError struct {
	File string
	Addr uint64
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("%s: at %#x: %v", e.File, e.Addr, e.Err) }

func (e *StepError) Unwrap() error { return e.Err }

// Step unwinds one frame. regs are the registers of a frame whose code is
// at file address addr in t (the pc itself for the innermost frame and a
// frame a signal interrupted; its return address less one for a caller,
// so that the address is in the call); mem is the thread's memory. It
// returns the caller's registers, its return address (where the caller
// resumes), whether t says the frame is a signal handler's (the caller
// was interrupted: its pc is exact), and end true for the outermost
// frame (the return address column is undefined, as in _start).
func (t *Table) Step(addr uint64, regs *Regs, mem Memory) (caller Regs, ret uint64, signal, end bool, err error) {
	return t.step(addr, regs, mem, nil)
}

// step is Step, taking the work of the step from *work if work is not
// nil (see apply).
func (t *Table) step(addr uint64, regs *Regs, mem Memory, work *int64) (caller Regs, ret uint64, signal, end bool, err error) {
	m := memory{fn: mem}
	ret, signal, end, err = t.apply(t.rule(addr), addr, regs, &caller, &m, work)
	return caller, ret, signal, end, err
}

// apply unwinds a frame at addr by c, t's rule there (see Table.rule),
// writing the caller's registers to caller. It takes the bytes of
// instructions of the frame's entry from *work, if work is not nil,
// and fails with ErrWork once none are left: the same whether the rule
// was computed for this frame or an earlier one, so that the work an
// Unwind takes does not depend on what was unwound before it.
func (t *Table) apply(c *compiled, addr uint64, regs, caller *Regs, m *memory, work *int64) (ret uint64, signal, end bool, err error) {
	if c.kind == kindNoEntry {
		return 0, false, false, ErrNoEntry
	}
	if work != nil {
		if *work <= 0 {
			return 0, false, false, ErrWork
		}
		*work -= c.cost
	}
	switch c.kind {
	case kindErr:
		return 0, false, false, &StepError{File: t.name, Addr: addr, Err: c.err}
	case kindRow:
		return t.applyRow(c.row, addr, regs, caller, m)
	}
	*caller = *regs
	return t.applyFast(c, addr, caller, m)
}

// applyRow unwinds a frame at addr by row rw, any row: its CFA and
// registers' rules may be expressions.
func (t *Table) applyRow(rw *row, addr uint64, regs, caller *Regs, m *memory) (ret uint64, signal, end bool, err error) {
	*caller = Regs{}
	fail := func(err error) (uint64, bool, bool, error) {
		return 0, false, false, &StepError{File: t.name, Addr: addr, Err: err}
	}
	var cfa uint64
	if rw.cfaExpr != nil {
		if cfa, err = t.eval(rw.cfaExpr, regs, m, nil); err != nil {
			return fail(fmt.Errorf("CFA expression: %w", err))
		}
	} else {
		v, ok := regs.Get(int(min(rw.cfaReg, MaxRegs)))
		if !ok {
			return fail(fmt.Errorf("the CFA is based on register %d, which is not known", rw.cfaReg))
		}
		cfa = v + uint64(rw.cfaOff)
	}
	if rw.ra >= MaxRegs {
		return fail(fmt.Errorf("return address column %d", rw.ra))
	}
	if rw.regs[rw.ra].kind == ruleUndefined {
		return 0, rw.signal, true, nil
	}
	sp, haveSP := regs.Get(t.arch.SP)
	for reg := range MaxRegs {
		ru := &rw.regs[reg]
		var v uint64
		switch ru.kind {
		case ruleSame:
			if reg == t.arch.SP {
				continue // the CFA, below
			}
			var ok bool
			if v, ok = regs.Get(reg); !ok {
				continue
			}
		case ruleUndefined:
			continue
		case ruleOffset:
			var ok bool
			if slot := cfa + uint64(ru.off); haveSP && slot < sp && reg != int(rw.ra) {
				// Saved below the stack pointer: popped already, the
				// rule not withdrawn (V8 describes its epilogues so).
				// The register holds the caller's value again.
				if v, ok = regs.Get(reg); !ok {
					continue
				}
			} else if v, ok = m.read(slot); !ok {
				if reg == int(rw.ra) {
					return fail(ErrMemory)
				}
				continue // the caller's frame may not need it
			}
		case ruleValOffset:
			v = cfa + uint64(ru.off)
		case ruleRegister:
			var ok bool
			if v, ok = regs.Get(int(min(ru.reg, MaxRegs))); !ok {
				continue
			}
		case ruleExpr, ruleValExpr:
			a, err := t.eval(ru.expr, regs, m, &cfa)
			if err != nil {
				if reg == int(rw.ra) {
					return fail(fmt.Errorf("register %d's expression: %w", reg, err))
				}
				continue
			}
			v = a
			if ru.kind == ruleExpr {
				var ok bool
				if v, ok = m.read(a); !ok {
					if reg == int(rw.ra) {
						return fail(ErrMemory)
					}
					continue
				}
			}
		}
		caller.Set(reg, v)
	}
	if rw.regs[t.arch.SP].kind == ruleSame {
		caller.Set(t.arch.SP, cfa)
	}
	ret, ok := caller.Get(int(rw.ra))
	if !ok {
		return fail(fmt.Errorf("the return address (register %d) is not known", rw.ra))
	}
	return t.returned(ret, rw.raSigned, caller), rw.signal, false, nil
}

// returned returns the return address ret as the caller resumes at it
// (without its pointer authentication code if signed, of the table's
// address size), which is the caller's pc.
func (t *Table) returned(ret uint64, signed bool, caller *Regs) uint64 {
	if signed {
		ret &= 1<<48 - 1 // drop the pointer authentication code
	}
	if t.ptr == 4 {
		ret &= 0xffffffff
	}
	if t.arch.PC >= 0 {
		caller.Set(t.arch.PC, ret)
	}
	return ret
}

// A Finder returns the table of the code at runtime address pc, and the
// difference between runtime and file addresses there; ok is false when
// pc is in no code it knows. A nil table with ok true is code without
// tables (JIT code in anonymous memory): its frame is unwound by the
// frame pointer, as are frames of code a table has no entry for.
type Finder func(pc uint64) (t *Table, bias uint64, ok bool)

// goStep unwinds a frame of Go code by the runtime's SP-delta table, as
// the Go runtime's own traceback does (see goApply).
func (t *Table) goStep(addr uint64, exact bool, regs *Regs, mem Memory, work *int64) (caller Regs, ret uint64, err error) {
	if work != nil && *work <= 0 {
		return caller, 0, ErrWork
	}
	var c compiled
	c.goDelta, c.goSteps, c.goOK = t.goSP(addr)
	m := memory{fn: mem}
	ret, err = t.goApply(&c, exact, regs, &caller, &m, work)
	return caller, ret, err
}

// goApply unwinds a frame of Go code whose SP delta (see
// gopclntab.Table.SPDelta) c gives, writing the caller's registers to
// caller. On amd64 the return address is delta above the stack pointer,
// the caller's stack pointer just above it, and the caller's frame
// pointer, once the function has saved it (delta 8 or more), just below
// it. On arm64 (a link register machine) the caller's stack pointer is
// delta above the stack pointer; a function that has allocated its frame
// (delta > 0) saved the return address at the stack pointer, and one
// that has not (its entry, a leaf without a frame) still has it in the
// link register x30, which only the innermost frame, or one a signal
// interrupted (exact), can say; the caller's frame pointer is saved just
// below the stack pointer, and read once x29 points at it.
// (cmd/internal/obj/arm64's prologue: MOVD.W R30, -framesize(RSP); MOVD
// R29, -8(RSP); SUB $8, RSP, R29.)
func (t *Table) goApply(c *compiled, exact bool, regs, caller *Regs, m *memory, work *int64) (ret uint64, err error) {
	if work != nil {
		if *work <= 0 {
			return 0, ErrWork
		}
		*work -= int64(c.goSteps) * 4 // a step reads about 4 bytes of the table
	}
	delta, ok := c.goDelta, c.goOK
	sp, ok2 := regs.Get(t.arch.SP)
	if !ok || !ok2 {
		return 0, ErrNoEntry
	}
	*caller = *regs
	if t.arch == ARM64 {
		if delta == 0 {
			if ret, ok = regs.Get(arm64LR); !ok || !exact {
				return 0, ErrNoEntry
			}
		} else if ret, ok = m.read(sp); !ok {
			return 0, ErrMemory
		}
		if fp, ok := regs.Get(t.arch.FP); ok && delta > 0 && fp == sp-8 {
			if saved, ok := m.read(sp - 8); ok {
				caller.Set(t.arch.FP, saved)
			}
		}
		caller.Set(t.arch.SP, sp+uint64(delta))
		return ret, nil
	}
	cfa := sp + uint64(delta) + 8
	if ret, ok = m.read(cfa - 8); !ok {
		return 0, ErrMemory
	}
	if delta >= 8 {
		if fp, ok := m.read(cfa - 16); ok {
			caller.Set(t.arch.FP, fp)
		}
	}
	caller.Set(t.arch.SP, cfa)
	if t.arch.PC >= 0 {
		caller.Set(t.arch.PC, ret)
	}
	return ret, nil
}

// arm64LR is the DWARF number of AArch64's link register, x30.
const arm64LR = 30

// fpStep unwinds a frame by its frame pointer: the frame record it points
// at holds the caller's frame pointer and the return address (x86-64's
// push rbp after the call; AArch64's stp x29, x30), and the caller's
// stack pointer is just above it. The caller's registers go to caller.
func fpStep(arch *Arch, regs, caller *Regs, m *memory) (ret uint64, err error) {
	fp, ok1 := regs.Get(arch.FP)
	sp, ok2 := regs.Get(arch.SP)
	if !ok1 || !ok2 || fp < sp || fp%8 != 0 {
		return 0, ErrNoEntry // not a frame pointer of this stack
	}
	saved, ok1 := m.read(fp)
	ret, ok2 = m.read(fp + 8)
	if !ok1 || !ok2 {
		return 0, ErrMemory
	}
	*caller = *regs
	caller.Set(arch.FP, saved)
	caller.Set(arch.SP, fp+16)
	if arch.PC >= 0 {
		caller.Set(arch.PC, ret)
	}
	return ret, nil
}

// Unwind returns the return addresses of the calls in progress, innermost
// first, in a thread whose innermost frame's registers are regs and pc
// is pc. It stops at the outermost frame, after max addresses, or at the
// first frame it cannot unwind: then err says why, and the addresses
// before it are still returned (perf keeps a copy of the top of the
// stack only, so a deep stack ends in ErrMemory). If work is not nil,
// Unwind takes from it the bytes of call frame instructions of each
// frame's entry and stops with ErrWork when none are left: with it, a
// caller unwinding many stacks bounds the time damaged or hostile
// tables can cost. It is [Unwinder.Unwind] with an Unwinder of its own,
// for memory read through mem.
func Unwind(arch *Arch, regs Regs, pc uint64, mem Memory, find Finder, max int, work *int64) (rets []uint64, err error) {
	u := NewUnwinder(arch, find)
	return u.unwind(nil, &regs, pc, &memory{fn: mem}, max, work)
}
