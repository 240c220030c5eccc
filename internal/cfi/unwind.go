package cfi

import (
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

// step is Step, taking the bytes of instructions it runs from *work, if
// work is not nil, and failing with ErrWork once none are left.
func (t *Table) step(addr uint64, regs *Regs, mem Memory, work *int64) (caller Regs, ret uint64, signal, end bool, err error) {
	f, ok := t.find(addr)
	if !ok {
		return caller, 0, false, false, ErrNoEntry
	}
	if work != nil {
		if *work <= 0 {
			return caller, 0, false, false, ErrWork
		}
		*work -= int64(len(f.cie.instr) + len(f.instr))
	}
	fail := func(err error) (Regs, uint64, bool, bool, error) {
		return caller, 0, false, false, &StepError{File: t.name, Addr: addr, Err: err}
	}
	var rw row
	if err := t.rowAt(f, addr, &rw); err != nil {
		return fail(err)
	}
	var cfa uint64
	if rw.cfaExpr != nil {
		if cfa, err = t.eval(rw.cfaExpr, regs, mem, nil); err != nil {
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
		return caller, 0, rw.signal, true, nil
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
			} else if v, ok = mem(slot); !ok {
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
			a, err := t.eval(ru.expr, regs, mem, &cfa)
			if err != nil {
				if reg == int(rw.ra) {
					return fail(fmt.Errorf("register %d's expression: %w", reg, err))
				}
				continue
			}
			v = a
			if ru.kind == ruleExpr {
				var ok bool
				if v, ok = mem(a); !ok {
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
	ret, ok = caller.Get(int(rw.ra))
	if !ok {
		return fail(fmt.Errorf("the return address (register %d) is not known", rw.ra))
	}
	if rw.raSigned {
		ret &= 1<<48 - 1 // drop the pointer authentication code
	}
	if t.ptr == 4 {
		ret &= 0xffffffff
	}
	if t.arch.PC >= 0 {
		caller.Set(t.arch.PC, ret)
	}
	return caller, ret, rw.signal, false, nil
}

// A Finder returns the table of the code at runtime address pc, and the
// difference between runtime and file addresses there; ok is false when
// pc is in no code it knows. A nil table with ok true is code without
// tables (JIT code in anonymous memory): its frame is unwound by the
// frame pointer, as are frames of code a table has no entry for.
type Finder func(pc uint64) (t *Table, bias uint64, ok bool)

// goStep unwinds a frame of Go code by the runtime's SP-delta table, as
// the Go runtime's own traceback does. On amd64 the return address is
// delta above the stack pointer, the caller's stack pointer just above
// it, and the caller's frame pointer, once the function has saved it
// (delta 8 or more), just below it. On arm64 (a link register machine)
// the caller's stack pointer is delta above the stack pointer; a
// function that has allocated its frame (delta > 0) saved the return
// address at the stack pointer, and one that has not (its entry, a leaf
// without a frame) still has it in the link register x30, which only the
// innermost frame, or one a signal interrupted (exact), can say; the
// caller's frame pointer is saved just below the stack pointer, and read
// once x29 points at it. (cmd/internal/obj/arm64's prologue: MOVD.W
// R30, -framesize(RSP); MOVD R29, -8(RSP); SUB $8, RSP, R29.)
func (t *Table) goStep(addr uint64, exact bool, regs *Regs, mem Memory, work *int64) (caller Regs, ret uint64, err error) {
	if work != nil && *work <= 0 {
		return caller, 0, ErrWork
	}
	delta, steps, ok := t.goSP(addr)
	if work != nil {
		*work -= int64(steps) * 4 // a step reads about 4 bytes of the table
	}
	sp, ok2 := regs.Get(t.arch.SP)
	if !ok || !ok2 {
		return caller, 0, ErrNoEntry
	}
	caller = *regs
	if t.arch == ARM64 {
		if delta == 0 {
			if ret, ok = regs.Get(arm64LR); !ok || !exact {
				return caller, 0, ErrNoEntry
			}
		} else if ret, ok = mem(sp); !ok {
			return caller, 0, ErrMemory
		}
		if fp, ok := regs.Get(t.arch.FP); ok && delta > 0 && fp == sp-8 {
			if saved, ok := mem(sp - 8); ok {
				caller.Set(t.arch.FP, saved)
			}
		}
		caller.Set(t.arch.SP, sp+uint64(delta))
		return caller, ret, nil
	}
	cfa := sp + uint64(delta) + 8
	if ret, ok = mem(cfa - 8); !ok {
		return caller, 0, ErrMemory
	}
	if delta >= 8 {
		if fp, ok := mem(cfa - 16); ok {
			caller.Set(t.arch.FP, fp)
		}
	}
	caller.Set(t.arch.SP, cfa)
	if t.arch.PC >= 0 {
		caller.Set(t.arch.PC, ret)
	}
	return caller, ret, nil
}

// arm64LR is the DWARF number of AArch64's link register, x30.
const arm64LR = 30

// fpStep unwinds a frame by its frame pointer: the frame record it points
// at holds the caller's frame pointer and the return address (x86-64's
// push rbp after the call; AArch64's stp x29, x30), and the caller's
// stack pointer is just above it.
func fpStep(arch *Arch, regs *Regs, mem Memory) (caller Regs, ret uint64, err error) {
	fp, ok1 := regs.Get(arch.FP)
	sp, ok2 := regs.Get(arch.SP)
	if !ok1 || !ok2 || fp < sp || fp%8 != 0 {
		return caller, 0, ErrNoEntry // not a frame pointer of this stack
	}
	saved, ok1 := mem(fp)
	ret, ok2 = mem(fp + 8)
	if !ok1 || !ok2 {
		return caller, 0, ErrMemory
	}
	caller = *regs
	caller.Set(arch.FP, saved)
	caller.Set(arch.SP, fp+16)
	if arch.PC >= 0 {
		caller.Set(arch.PC, ret)
	}
	return caller, ret, nil
}

// Unwind returns the return addresses of the calls in progress, innermost
// first, in a thread whose innermost frame's registers are regs and pc
// is pc. It stops at the outermost frame, after max addresses, or at the
// first frame it cannot unwind: then err says why, and the addresses
// before it are still returned (perf keeps a copy of the top of the
// stack only, so a deep stack ends in ErrMemory). If work is not nil,
// Unwind takes from it the bytes of call frame instructions it runs and
// stops with ErrWork when none are left: with it, a caller unwinding
// many stacks bounds the time damaged or hostile tables can cost.
func Unwind(arch *Arch, regs Regs, pc uint64, mem Memory, find Finder, max int, work *int64) (rets []uint64, err error) {
	exact := true
	if arch.PC >= 0 {
		regs.Set(arch.PC, pc)
	}
	for len(rets) < max {
		t, bias, ok := find(pc)
		if !ok {
			return rets, ErrNoEntry
		}
		addr := pc - bias
		if !exact {
			addr--
		}
		var caller Regs
		var ret uint64
		var signal, end bool
		err = ErrNoEntry
		if t != nil {
			caller, ret, signal, end, err = t.step(addr, &regs, mem, work)
		}
		if errors.Is(err, ErrNoEntry) && t != nil && t.goSP != nil {
			caller, ret, err = t.goStep(addr, exact, &regs, mem, work)
		}
		if errors.Is(err, ErrNoEntry) {
			caller, ret, err = fpStep(arch, &regs, mem)
		}
		if err != nil || end || ret == 0 {
			return rets, err
		}
		sp, ok1 := regs.Get(arch.SP)
		csp, ok2 := caller.Get(arch.SP)
		if !ok1 || !ok2 || csp < sp || csp-sp < arch.MinCFA {
			return rets, ErrNoProgress
		}
		rets = append(rets, ret)
		regs, pc, exact = caller, ret, signal
	}
	return rets, nil
}

// DWARF expression operations of call frame information (DW_OP_*).
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opPick       = 0x15
	opSwap       = 0x16
	opRot        = 0x17
	opAbs        = 0x19
	opAnd        = 0x1a
	opDiv        = 0x1b
	opMinus      = 0x1c
	opMod        = 0x1d
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opBra        = 0x28
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opSkip       = 0x2f
	opLit0       = 0x30
	opLit31      = 0x4f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opBregx      = 0x92
	opNop        = 0x96
)

// maxEvalSteps bounds an expression's work: branches may loop.
const maxEvalSteps = 1000

// eval computes a DWARF expression's value; push, if not nil, is pushed
// first (the CFA, for a register's rule).
func (t *Table) eval(expr []byte, regs *Regs, mem Memory, push *uint64) (uint64, error) {
	var stack []uint64
	if push != nil {
		stack = append(stack, *push)
	}
	r := &reader{b: expr, bo: t.bo}
	pop := func() uint64 {
		if len(stack) == 0 {
			r.bad = true
			return 0
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v
	}
	reg := func(n uint64, off int64) error {
		v, ok := regs.Get(int(min(n, MaxRegs)))
		if !ok {
			return fmt.Errorf("register %d is not known", n)
		}
		stack = append(stack, v+uint64(off))
		return nil
	}
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	for steps := 0; r.off < len(r.b); steps++ {
		if steps >= maxEvalSteps {
			return 0, fmt.Errorf("more than %d steps", maxEvalSteps)
		}
		if len(stack) > 64 {
			return 0, fmt.Errorf("stack deeper than 64")
		}
		op := r.u8()
		switch {
		case op >= opLit0 && op <= opLit31:
			stack = append(stack, uint64(op-opLit0))
			continue
		case op >= opBreg0 && op <= opBreg31:
			if err := reg(uint64(op-opBreg0), r.sleb()); err != nil {
				return 0, err
			}
			continue
		}
		switch op {
		case opAddr:
			stack = append(stack, r.fixed(t.ptr))
		case opDeref:
			v, ok := mem(pop())
			if !ok {
				return 0, ErrMemory
			}
			stack = append(stack, v)
		case opConst1u:
			stack = append(stack, r.fixed(1))
		case opConst1s:
			stack = append(stack, uint64(int64(int8(r.fixed(1)))))
		case opConst2u:
			stack = append(stack, r.fixed(2))
		case opConst2s:
			stack = append(stack, uint64(int64(int16(r.fixed(2)))))
		case opConst4u:
			stack = append(stack, r.fixed(4))
		case opConst4s:
			stack = append(stack, uint64(int64(int32(r.fixed(4)))))
		case opConst8u, opConst8s:
			stack = append(stack, r.fixed(8))
		case opConstu:
			stack = append(stack, r.uleb())
		case opConsts:
			stack = append(stack, uint64(r.sleb()))
		case opDup:
			v := pop()
			stack = append(stack, v, v)
		case opDrop:
			pop()
		case opOver:
			if len(stack) < 2 {
				return 0, fmt.Errorf("DW_OP_over on a stack of %d", len(stack))
			}
			stack = append(stack, stack[len(stack)-2])
		case opPick:
			i := int(r.u8())
			if i >= len(stack) {
				return 0, fmt.Errorf("DW_OP_pick %d on a stack of %d", i, len(stack))
			}
			stack = append(stack, stack[len(stack)-1-i])
		case opSwap:
			a, b := pop(), pop()
			stack = append(stack, a, b)
		case opRot:
			a, b, c := pop(), pop(), pop()
			stack = append(stack, a, c, b)
		case opAbs:
			v := int64(pop())
			stack = append(stack, uint64(max(v, -v)))
		case opNeg:
			stack = append(stack, -pop())
		case opNot:
			stack = append(stack, ^pop())
		case opPlusUconst:
			stack = append(stack, pop()+r.uleb())
		case opAnd, opDiv, opMinus, opMod, opMul, opOr, opPlus, opShl, opShr, opShra, opXor,
			opEq, opGe, opGt, opLe, opLt, opNe:
			b, a := pop(), pop()
			var v uint64
			switch op {
			case opAnd:
				v = a & b
			case opDiv:
				if b == 0 {
					return 0, fmt.Errorf("division by zero")
				}
				v = uint64(int64(a) / int64(b))
			case opMinus:
				v = a - b
			case opMod:
				if b == 0 {
					return 0, fmt.Errorf("division by zero")
				}
				v = a % b
			case opMul:
				v = a * b
			case opOr:
				v = a | b
			case opPlus:
				v = a + b
			case opShl:
				v = a << b
			case opShr:
				v = a >> b
			case opShra:
				v = uint64(int64(a) >> b)
			case opXor:
				v = a ^ b
			case opEq:
				v = b2u(a == b)
			case opGe:
				v = b2u(int64(a) >= int64(b))
			case opGt:
				v = b2u(int64(a) > int64(b))
			case opLe:
				v = b2u(int64(a) <= int64(b))
			case opLt:
				v = b2u(int64(a) < int64(b))
			case opNe:
				v = b2u(a != b)
			}
			stack = append(stack, v)
		case opSkip, opBra:
			d := int(int16(r.fixed(2)))
			if op == opBra && pop() == 0 {
				break
			}
			to := r.off + d
			if to < 0 || to > len(r.b) {
				return 0, fmt.Errorf("branch outside the expression")
			}
			r.off = to
		case opBregx:
			n := r.uleb()
			if err := reg(n, r.sleb()); err != nil {
				return 0, err
			}
		case opNop:
		default:
			return 0, fmt.Errorf("operation %#x", op)
		}
		if r.bad {
			return 0, fmt.Errorf("truncated or underflowing expression")
		}
	}
	if r.bad || len(stack) == 0 {
		return 0, fmt.Errorf("truncated or empty expression")
	}
	return stack[len(stack)-1], nil
}
