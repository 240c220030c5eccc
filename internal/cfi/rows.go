package cfi

import "fmt"

// How a register of the caller is found (DWARF 5, 6.4.1).
type ruleKind uint8

const (
	ruleSame      ruleKind = iota // the same value as in this frame
	ruleUndefined                 // not recoverable
	ruleOffset                    // saved at CFA+off
	ruleValOffset                 // its value is CFA+off
	ruleRegister                  // in register reg of this frame
	ruleExpr                      // saved at the address expr computes
	ruleValExpr                   // its value is what expr computes
)

type rule struct {
	kind ruleKind
	reg  uint64
	off  int64
	expr []byte
}

// A row is the unwinding rules at one address: the canonical frame
// address (CFA, the caller's stack pointer) and each register's rule.
type row struct {
	cfaReg   uint64
	cfaOff   int64
	cfaExpr  []byte // if not nil, the CFA is its value
	regs     [MaxRegs]rule
	signal   bool   // the entry is a signal handler's frame
	ra       uint64 // the return address column
	raSigned bool   // AArch64: the return address is signed
}

// maxStates bounds DW_CFA_remember_state's stack.
const maxStates = 64

// CFA instructions (DW_CFA_*).
const (
	cfaAdvanceLoc        = 0x40 // high two bits
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaGNUWindowSave     = 0x2d // AArch64: DW_CFA_AARCH64_negate_ra_state
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtSF = 0x2f
)

// maxInitials bounds the CIEs of a Table whose initial row is kept; the
// others' is computed at each step.
const maxInitials = 256

// rowAt sets *rw to the row that holds at addr: the row after f's CIE's
// instructions, then f's own run up to addr.
func (t *Table) rowAt(f *fde, addr uint64, rw *row) error {
	c := f.cie
	initial := c.initial
	if initial == nil {
		if c.initialErr != nil {
			return c.initialErr
		}
		initial = &row{signal: c.signal, ra: c.ra}
		if err := t.run(initial, nil, c.instr, c, 0, ^uint64(0)); err != nil {
			c.initialErr = err
			return err
		}
		if t.initials < maxInitials {
			c.initial = initial
			t.initials++
		}
	}
	*rw = *initial
	return t.run(rw, initial, f.instr, c, f.lo, addr)
}

// run executes instructions from location loc until the location passes
// addr. initial is the row after the CIE's instructions (nil while
// running them), which DW_CFA_restore returns to.
func (t *Table) run(rw *row, initial *row, instr []byte, c *cie, loc, addr uint64) error {
	r := &reader{b: instr, bo: t.bo}
	// The remembered rows: the table's stack, kept for the next run.
	states := t.states[:0]
	defer func() { t.states = states[:0] }()
	set := func(reg uint64, ru rule) {
		if reg < MaxRegs {
			rw.regs[reg] = ru
		}
	}
	restore := func(reg uint64) {
		if reg < MaxRegs {
			if initial != nil {
				rw.regs[reg] = initial.regs[reg]
			} else {
				rw.regs[reg] = rule{}
			}
		}
	}
	advance := func(delta uint64) bool {
		loc += delta * c.codeAlign
		return loc > addr
	}
	block := func() []byte {
		n := r.uleb()
		if n > uint64(len(r.b)-r.off) {
			r.bad = true
			r.off = len(r.b)
			return nil
		}
		b := r.b[r.off : r.off+int(n)]
		r.off += int(n)
		return b
	}
	for r.off < len(r.b) && !r.bad {
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case cfaOffset:
			set(uint64(op&0x3f), rule{kind: ruleOffset, off: int64(r.uleb()) * c.dataAlign})
			continue
		case cfaRestore:
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			v, _ := r.pointer(c.fdeEnc, c.ptr, 0)
			if v > addr {
				return nil
			}
			loc = v
		case cfaAdvanceLoc1:
			if advance(r.fixed(1)) {
				return nil
			}
		case cfaAdvanceLoc2:
			if advance(r.fixed(2)) {
				return nil
			}
		case cfaAdvanceLoc4:
			if advance(r.fixed(4)) {
				return nil
			}
		case cfaOffsetExtended:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: int64(r.uleb()) * c.dataAlign})
		case cfaOffsetExtendedSF:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: r.sleb() * c.dataAlign})
		case cfaGNUNegOffsetExtSF:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: -int64(r.uleb()) * c.dataAlign})
		case cfaValOffset:
			reg := r.uleb()
			set(reg, rule{kind: ruleValOffset, off: int64(r.uleb()) * c.dataAlign})
		case cfaValOffsetSF:
			reg := r.uleb()
			set(reg, rule{kind: ruleValOffset, off: r.sleb() * c.dataAlign})
		case cfaRestoreExtended:
			restore(r.uleb())
		case cfaUndefined:
			set(r.uleb(), rule{kind: ruleUndefined})
		case cfaSameValue:
			set(r.uleb(), rule{kind: ruleSame})
		case cfaRegister:
			reg := r.uleb()
			set(reg, rule{kind: ruleRegister, reg: r.uleb()})
		case cfaRememberState:
			if len(states) >= maxStates {
				return fmt.Errorf("more than %d remembered states", maxStates)
			}
			states = append(states, *rw)
		case cfaRestoreState:
			if len(states) == 0 {
				return fmt.Errorf("DW_CFA_restore_state without a remembered state")
			}
			// The whole row, the CFA rule included (DWARF 5).
			*rw = states[len(states)-1]
			states = states[:len(states)-1]
		case cfaDefCFA:
			rw.cfaReg, rw.cfaOff, rw.cfaExpr = r.uleb(), int64(r.uleb()), nil
		case cfaDefCFASF:
			rw.cfaReg = r.uleb()
			rw.cfaOff, rw.cfaExpr = r.sleb()*c.dataAlign, nil
		case cfaDefCFARegister:
			rw.cfaReg, rw.cfaExpr = r.uleb(), nil
		case cfaDefCFAOffset:
			rw.cfaOff, rw.cfaExpr = int64(r.uleb()), nil
		case cfaDefCFAOffsetSF:
			rw.cfaOff, rw.cfaExpr = r.sleb()*c.dataAlign, nil
		case cfaDefCFAExpression:
			rw.cfaExpr = block()
			if rw.cfaExpr == nil {
				rw.cfaExpr = []byte{}
			}
		case cfaExpression:
			reg := r.uleb()
			set(reg, rule{kind: ruleExpr, expr: block()})
		case cfaValExpression:
			reg := r.uleb()
			set(reg, rule{kind: ruleValExpr, expr: block()})
		case cfaGNUArgsSize:
			r.uleb()
		case cfaGNUWindowSave:
			// AArch64's return address signing state (SPARC's register
			// windows otherwise): a signed return address has its
			// pointer authentication code in its top bits.
			rw.raSigned = !rw.raSigned
		default:
			return fmt.Errorf("unknown instruction %#x", op)
		}
	}
	if r.bad {
		return fmt.Errorf("truncated instructions")
	}
	return nil
}
