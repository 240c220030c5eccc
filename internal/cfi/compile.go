package cfi

import (
	"encoding/binary"
	"fmt"
)

// Compiled rules: what unwinding a frame at one address takes, worked
// out once from the table's row there and kept, so that a frame costs a
// few loads from the stack, not a run of the CFA program of its entry.
// Most rows, those of code compiled by GCC, clang, rustc or Go's
// toolchain, say: the CFA is a register (the stack pointer or the frame
// pointer) plus a constant, and the return address and a few
// callee-saved registers are saved at constant offsets from it; the
// commonest of all, "CFA = SP + k, return address at CFA - 8", is one
// load. Such a row compiles to a kindFast rule, a short list of loads;
// the others (DWARF expressions, registers saved in registers) keep the
// row itself and take the general path, applyRow.

// The kinds of compiled rules.
const (
	kindFast    uint8 = iota // CFA = register + offset; registers the same, undefined or loaded
	kindRow                  // any other row: row
	kindErr                  // the entry's instructions cannot be run: err
	kindNoEntry              // no entry covers the address; goDelta, goSteps and goOK the Go runtime's SP delta, if the table has it
)

// maxLoads bounds the registers of a kindFast rule loaded from the
// stack: AArch64's callee-saved x19-x30 are 12.
const maxLoads = 14

// maxRules bounds the distinct rules a Table keeps (see Table.rule).
const maxRules = 1 << 16

// A compiled rule is a row of a table compiled for unwinding (see the
// kinds). Rules of kindFast and kindNoEntry are comparable values, kept
// once per table.
type compiled struct {
	kind     uint8
	cfaReg   uint8
	ra       uint8 // the return address column
	n        uint8 // loads used
	signal   bool  // the entry is a signal handler's frame
	raSigned bool  // AArch64: the return address is signed
	end      bool  // the return address is undefined: the outermost frame
	spIsCFA  bool  // the stack pointer's rule is "same value": the CFA
	cfaOff   int64
	// undef are the registers whose caller's values are not known.
	undef uint64
	loads [maxLoads]load
	// cost is the work of a step at the address: the bytes of
	// instructions of the entry and its CIE.
	cost int64
	row  *row  // kindRow
	err  error // kindErr
	// kindNoEntry with the Go runtime's table (see goApply).
	goDelta int64
	goSteps int
	goOK    bool
}

// A load is a register saved at an offset from the CFA.
type load struct {
	reg uint8
	off int32
}

// noEntry is the rule of an address no entry covers, in a table without
// Go's SP deltas.
var noEntry = &compiled{kind: kindNoEntry}

// rule returns t's compiled rule at file address addr (see Step for
// what addr is). Rules of kindFast and kindNoEntry are kept in t, once
// each however many addresses have them, and returned again: at most
// maxRules of them, which real tables do not reach (the rules of a
// binary differ by their CFA offsets and saved registers: a few
// hundred); others are made anew.
func (t *Table) rule(addr uint64) *compiled {
	f, ok := t.find(addr)
	if !ok {
		if t.goSP == nil {
			return noEntry
		}
		c := compiled{kind: kindNoEntry}
		c.goDelta, c.goSteps, c.goOK = t.goSP(addr)
		return t.keep(&c)
	}
	cost := int64(len(f.cie.instr) + len(f.instr))
	var rw row
	if err := t.rowAt(f, addr, &rw); err != nil {
		return &compiled{kind: kindErr, cost: cost, err: err}
	}
	c := t.compile(&rw)
	c.cost = cost
	if c.kind == kindRow {
		k := &compiled{}
		*k = c
		k.row = new(row)
		*k.row = rw
		return k
	}
	return t.keep(&c)
}

// keep returns the rule kept in t equal to c, keeping a copy of c if
// there is none and room.
func (t *Table) keep(c *compiled) *compiled {
	if k := t.rules[*c]; k != nil {
		return k
	}
	k := new(compiled)
	*k = *c
	if len(t.rules) < maxRules {
		if t.rules == nil {
			t.rules = map[compiled]*compiled{}
		}
		t.rules[*c] = k
	}
	return k
}

// compile compiles rw: a kindFast rule if it can be one, else kindRow.
func (t *Table) compile(rw *row) compiled {
	c := compiled{kind: kindRow, signal: rw.signal, raSigned: rw.raSigned}
	if rw.cfaExpr != nil || rw.cfaReg >= MaxRegs || rw.ra >= MaxRegs {
		return c
	}
	c.cfaReg, c.cfaOff, c.ra = uint8(rw.cfaReg), rw.cfaOff, uint8(rw.ra)
	if rw.regs[rw.ra].kind == ruleUndefined {
		c.kind, c.end = kindFast, true
		return c
	}
	for reg := range MaxRegs {
		ru := &rw.regs[reg]
		switch ru.kind {
		case ruleSame:
			if reg == t.arch.SP {
				c.spIsCFA = true
			}
		case ruleUndefined:
			c.undef |= 1 << reg
		case ruleOffset:
			if int(c.n) == maxLoads || ru.off != int64(int32(ru.off)) {
				return c
			}
			c.loads[c.n] = load{reg: uint8(reg), off: int32(ru.off)}
			c.n++
		default:
			return c
		}
	}
	c.kind = kindFast
	return c
}

// applyFast is applyRow for a kindFast rule, but for its registers:
// regs, the callee's, become the caller's (the caller's registers
// depend on the callee's CFA and stack pointer only, which are read
// first). After an error regs are of no frame.
func (t *Table) applyFast(c *compiled, addr uint64, regs *Regs, m *memory) (ret uint64, signal, end bool, err error) {
	if regs.known&(1<<c.cfaReg) == 0 {
		return 0, false, false, &StepError{File: t.name, Addr: addr, Err: errCFAReg(c.cfaReg)}
	}
	cfa := regs.val[c.cfaReg] + uint64(c.cfaOff)
	if c.end {
		return 0, c.signal, true, nil
	}
	spReg := t.arch.SP
	sp, haveSP := regs.val[spReg], regs.known&(1<<spReg) != 0
	regs.known &^= c.undef
	le, base := m.le, m.stack.Addr
	for _, l := range c.loads[:c.n] {
		slot := cfa + uint64(int64(l.off))
		if haveSP && slot < sp && l.reg != c.ra {
			// Popped already (see applyRow): the caller's value,
			// the same as ours.
			continue
		}
		var v uint64
		ok := true
		if off := slot - base; off < uint64(len(le)) && uint64(len(le))-off >= 8 {
			v = binary.LittleEndian.Uint64(le[off:]) // m.read's first case
		} else {
			v, ok = m.readOther(slot)
		}
		if !ok {
			if l.reg == c.ra {
				return 0, false, false, &StepError{File: t.name, Addr: addr, Err: ErrMemory}
			}
			regs.known &^= 1 << l.reg
			continue
		}
		regs.val[l.reg%MaxRegs] = v
		regs.known |= 1 << l.reg
	}
	if c.spIsCFA {
		regs.val[spReg] = cfa
		regs.known |= 1 << spReg
	}
	if regs.known&(1<<c.ra) == 0 {
		return 0, false, false, &StepError{File: t.name, Addr: addr, Err: errRAUnknown(c.ra)}
	}
	return t.returned(regs.val[c.ra%MaxRegs], c.raSigned, regs), c.signal, false, nil
}

// errCFAReg and errRAUnknown are applyRow's errors of a CFA based on a
// register not known and a return address not known.
func errCFAReg(reg uint8) error {
	return fmt.Errorf("the CFA is based on register %d, which is not known", reg)
}

func errRAUnknown(reg uint8) error {
	return fmt.Errorf("the return address (register %d) is not known", reg)
}
