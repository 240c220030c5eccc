package cfi

import "fmt"

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

// eval computes a DWARF expression's value in a frame of registers regs
// and memory m; push, if not nil, is pushed first (the CFA, for a
// register's rule).
func (t *Table) eval(expr []byte, regs *Regs, m *memory, push *uint64) (uint64, error) {
	var buf [72]uint64 // the stack, as deep as it may grow
	stack := buf[:0]
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
			v, ok := m.read(pop())
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
