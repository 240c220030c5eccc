package disasm

import (
	"encoding/binary"
	"strconv"
)

// thumb32 decodes the 32-bit Thumb instruction x (first halfword in the
// high bits) at pc, by the groups of the ARMv7-A manual's table A6-9.
func (d *thumbDecoder) thumb32(x uint32, pc uint64) {
	op1, op2 := x>>27&3, x>>20&0x7f
	switch {
	case op1 == 1 && op2&0x64 == 0:
		d.loadStoreMultiple(x)
	case op1 == 1 && op2&0x64 == 4:
		d.loadStoreDual(x, pc)
	case op1 == 1 && op2&0x60 == 0x20:
		d.dataShiftedReg(x)
	case op1 == 2 && x&0x8000 == 0 && op2&0x20 == 0:
		d.dataModifiedImm(x)
	case op1 == 2 && x&0x8000 == 0:
		d.dataPlainImm(x)
	case op1 == 2:
		d.branchMisc(x, pc)
	case op1 == 3 && op2&0x71 == 0:
		d.loadStore(x, pc, false)
	case op1 == 3 && op2&0x67 == 1, op1 == 3 && op2&0x67 == 3, op1 == 3 && op2&0x67 == 5:
		d.loadStore(x, pc, true)
	case op1 == 3 && op2&0x70 == 0x20:
		d.dataReg(x)
	case op1 == 3 && op2&0x78 == 0x30:
		d.multiply(x)
	case op1 == 3 && op2&0x78 == 0x38:
		d.longMultiply(x)
	case op2&0x40 != 0 && x>>28 == 0xe:
		d.coprocessor(x, pc)
	case x>>24 == 0xff || x>>24 == 0xf9:
		d.neon(x)
	case op1 == 3 && op2&0x40 != 0:
		// 111111xx: the "2" forms of the coprocessor instructions,
		// whose ARM encoding (condition 1111) is the same bits.
		if text, ok := coprocessorOp(x, "", uint64(uint32(pc+4)&^3), d.sym); ok {
			d.b.WriteString(text)
		} else {
			d.undefined(x, 4)
		}
	default:
		d.undefined(x, 4)
	}
}

// shifted is the operand "rm, lsl #2" of bits 14:12, 7:0 of x.
func shifted(x uint32) string {
	rm := r(x & 15)
	amt := x>>10&0x1c | x>>6&3
	switch x >> 4 & 3 {
	case 0:
		if amt == 0 {
			return rm
		}
		return rm + ", lsl #" + strconv.Itoa(int(amt))
	case 1, 2:
		if amt == 0 {
			amt = 32
		}
		name := ", lsr #"
		if x>>4&3 == 2 {
			name = ", asr #"
		}
		return rm + name + strconv.Itoa(int(amt))
	}
	if amt == 0 {
		return rm + ", rrx"
	}
	return rm + ", ror #" + strconv.Itoa(int(amt))
}

// flag is "s" if bit 20 of x (S, set flags) is set.
func flag(x uint32) string {
	if x&(1<<20) != 0 {
		return "s"
	}
	return ""
}

// thumbDPNames names the data-processing operations by bits 24:21 ("" for
// encodings that are not one).
var thumbDPNames = [16]string{0: "and", 1: "bic", 2: "orr", 3: "orn", 4: "eor", 8: "add", 10: "adc", 11: "sbc", 13: "sub", 14: "rsb"}

// dataProcessing writes a data-processing instruction whose last operand
// is op2 (a shifted register or an immediate): the compare and test
// forms where rd is pc and the flags are set, mov and mvn where rn is pc.
// objdump adds ".w" where a 16-bit encoding of the same name exists.
func (d *thumbDecoder) dataProcessing(x uint32, op2 string) {
	op, rn, rd := x>>21&15, x>>16&15, x>>8&15
	c := d.c()
	test := rd == 15 && x&(1<<20) != 0
	switch {
	case op == 0 && test:
		d.op("tst"+c+".w", r(rn), op2)
	case op == 4 && test:
		d.op("teq"+c, r(rn), op2)
	case op == 8 && test:
		d.op("cmn"+c+".w", r(rn), op2)
	case op == 13 && test:
		d.op("cmp"+c+".w", r(rn), op2)
	case op == 2 && rn == 15:
		d.op("mov"+flag(x)+c+".w", r(rd), op2)
	case op == 3 && rn == 15:
		d.op("mvn"+flag(x)+c+".w", r(rd), op2)
	case op == 3 || op == 14:
		d.op(thumbDPNames[op]+flag(x)+c, r(rd), r(rn), op2)
	case thumbDPNames[op] != "":
		d.op(thumbDPNames[op]+flag(x)+c+".w", r(rd), r(rn), op2)
	default:
		d.undefined(x, 4)
	}
}

// dataShiftedReg decodes data processing with a shifted register.
func (d *thumbDecoder) dataShiftedReg(x uint32) {
	if x&0x8000 != 0 {
		d.undefined(x, 4)
		return
	}
	if x>>21&15 == 6 {
		if x&(1<<20) != 0 || x&0x10 != 0 {
			d.undefined(x, 4)
			return
		}
		name := "pkhbt"
		if x&0x20 != 0 {
			name = "pkhtb"
		}
		d.op(name+d.c(), r(x>>8), r(x>>16), shifted(x))
		return
	}
	d.dataProcessing(x, shifted(x))
}

// dataModifiedImm decodes data processing with a modified immediate, the
// 12 bits i:imm3:imm8 that ThumbExpandImm expands to 32.
func (d *thumbDecoder) dataModifiedImm(x uint32) {
	bits := x&0xff | x>>4&0x700 | x>>15&0x800
	imm8 := bits & 0xff
	var v uint32
	switch bits >> 8 {
	case 0:
		v = imm8
	case 1:
		v = imm8<<16 | imm8
	case 2:
		v = imm8<<24 | imm8<<8
	case 3:
		v = imm8<<24 | imm8<<16 | imm8<<8 | imm8
	default:
		rot := bits >> 7
		v = (0x80 | bits&0x7f) << (32 - rot)
	}
	d.dataProcessing(x, d.imm(v))
}

// dataPlainImm decodes data processing with a plain binary immediate:
// addw, subw, movw, movt, bit fields and saturation.
func (d *thumbDecoder) dataPlainImm(x uint32) {
	c := d.c()
	rn, rd := x>>16&15, x>>8&15
	imm12 := x&0xff | x>>4&0x700 | x>>15&0x800
	lsb := x>>10&0x1c | x>>6&3
	op := x >> 20 & 31
	if op&0x10 != 0 && (x&(1<<26) != 0 || x&0x20 != 0) {
		// Saturation and bit fields have no i bit, and bit 5 is zero.
		d.undefined(x, 4)
		return
	}
	switch op {
	case 0x00:
		d.op("addw"+c, r(rd), r(rn), d.imm(imm12))
	case 0x0a:
		d.op("subw"+c, r(rd), r(rn), d.imm(imm12))
	case 0x04:
		d.op("movw"+c, r(rd), d.imm(imm12|rn<<12))
	case 0x0c:
		d.op("movt"+c, r(rd), d.imm(imm12|rn<<12))
	case 0x10, 0x12, 0x18, 0x1a:
		name := "ssat"
		if x&(1<<23) != 0 {
			name = "usat"
		}
		sat := x & 31
		if name == "ssat" {
			sat++
		}
		if x&(1<<21) != 0 && lsb == 0 {
			d.op(name+"16"+c, r(rd), d.imm(sat), r(rn))
			return
		}
		shift := ""
		switch {
		case x&(1<<21) != 0:
			shift = ", asr #" + strconv.Itoa(int(lsb))
		case lsb != 0:
			shift = ", lsl #" + strconv.Itoa(int(lsb))
		}
		d.op(name+c, r(rd), d.imm(sat), r(rn)+shift)
	case 0x14, 0x1c:
		name := "sbfx"
		if op == 0x1c {
			name = "ubfx"
		}
		d.op(name+c, r(rd), r(rn), "#"+strconv.Itoa(int(lsb)), "#"+strconv.Itoa(int(x&31+1)))
	case 0x16:
		width := int(x&31) - int(lsb) + 1
		if rn == 15 {
			d.op("bfc"+c, r(rd), "#"+strconv.Itoa(int(lsb)), "#"+strconv.Itoa(width))
		} else {
			d.op("bfi"+c, r(rd), r(rn), "#"+strconv.Itoa(int(lsb)), "#"+strconv.Itoa(width))
		}
	default:
		d.undefined(x, 4)
	}
}

// branchMisc decodes branches and miscellaneous control.
func (d *thumbDecoder) branchMisc(x uint32, pc uint64) {
	c := d.c()
	pc4 := uint32(pc) + 4
	s := x >> 26 & 1
	j1, j2 := x>>13&1, x>>11&1
	switch x >> 12 & 5 {
	case 0:
		if x>>23&7 != 7 {
			// b<cond>.w: S:J2:J1:imm6:imm11:0.
			off := s<<20 | j2<<19 | j1<<18 | x>>16&0x3f<<12 | x&0x7ff<<1
			d.op("b"+thumbCond[x>>22&15]+".w", d.target(pc4+uint32(int32(off<<11)>>11)))
			d.unpredictableInIT()
			return
		}
		d.control(x)
		return
	}
	// b.w, bl and blx: S:I1:I2:imm10:imm11:0 with I = not(J xor S).
	i1, i2 := ^(j1^s)&1, ^(j2^s)&1
	off := uint32(int32((s<<24|i1<<23|i2<<22|x>>16&0x3ff<<12|x&0x7ff<<1)<<7) >> 7)
	to := pc4 + off
	switch x >> 12 & 5 {
	case 1:
		d.op("b"+c+".w", d.target(to))
	case 4:
		d.op("blx"+c, d.target(to&^3))
	case 5:
		d.op("bl"+c, d.target(to))
	}
}

// control decodes the miscellaneous control instructions of the branch
// group: msr, mrs, hints, barriers, subs pc, lr.
func (d *thumbDecoder) control(x uint32) {
	c := d.c()
	switch op := x >> 20 & 0x7f; {
	case op&0x7e == 0x38 && x&0x20 == 0 && x&0x1000 == 0:
		psr := "CPSR_"
		if x&(1<<20) != 0 {
			psr = "SPSR_"
		}
		for i, f := range "fsxc" {
			if x&(0x800>>i) != 0 {
				psr += string(f)
			}
		}
		d.op("msr"+c, psr, r(x>>16))
	case op == 0x3a && x&0x1000 == 0 && x&0x700 == 0:
		hints := [8]string{"nop", "yield", "wfe", "wfi", "sev", "sevl"}
		switch h := x & 0xff; {
		case h < 6:
			d.op(hints[h] + c + ".w")
		case h&0xf0 == 0xf0:
			d.op("dbg"+c, "#"+strconv.Itoa(int(h&15)))
		default:
			d.op("nop"+c+".w", "{"+strconv.Itoa(int(h))+"}")
			d.comment = int64(h)
		}
	case op == 0x3b && x&0x1000 == 0:
		opt := x & 15
		switch x >> 4 & 15 {
		case 2:
			d.op("clrex" + c)
		case 4, 5:
			name := "dsb"
			if x>>4&15 == 5 {
				name = "dmb"
			}
			if armBarrier[opt] != "" {
				d.op(name+c, armBarrier[opt])
			} else {
				d.op(name+c, "#"+strconv.Itoa(int(opt)))
			}
		case 6:
			if opt == 15 {
				d.op("isb"+c, "sy")
			} else {
				d.op("isb"+c, "#"+strconv.Itoa(int(opt)))
			}
		default:
			d.undefined(x, 4)
		}
	case op == 0x3d && x&0x1000 == 0 && x>>16&15 == 14:
		d.op("subs"+c, "pc", "lr", d.imm(x&0xff))
	case op&0x7e == 0x3e && x&0x1000 == 0 && x&0x20 == 0:
		psr := "CPSR"
		if x&(1<<20) != 0 {
			psr = "SPSR"
		}
		d.op("mrs"+c, r(x>>8), psr)
	case op == 0x7f && x&0x3000 == 0x2000:
		d.op("udf"+c+".w", d.imm(x>>4&0xf000|x&0xfff))
	case op == 0x7f && x&0x3000 == 0:
		d.op("smc"+c, "#"+strconv.Itoa(int(x>>16&15)))
	default:
		d.undefined(x, 4)
	}
}

// loadStoreMultiple decodes ldm and stm (ia with .w, db without).
func (d *thumbDecoder) loadStoreMultiple(x uint32) {
	c := d.c()
	wb := ""
	if x&(1<<21) != 0 {
		wb = "!"
	}
	load := x&(1<<20) != 0
	var name string
	switch x >> 23 & 3 {
	case 1:
		name = "stmia" + c + ".w"
		if load {
			name = "ldmia" + c + ".w"
		}
	case 2:
		name = "stmdb" + c
		if load {
			name = "ldmdb" + c
		}
	default:
		d.undefined(x, 4)
		return
	}
	d.op(name, r(x>>16)+wb, regList(x&0xffff))
}

// loadStoreDual decodes ldrd and strd, the exclusive loads and stores and
// the table branches.
func (d *thumbDecoder) loadStoreDual(x uint32, pc uint64) {
	c := d.c()
	p, u, w, load := x>>24&1, x>>23&1, x>>21&1, x>>20&1
	rn, rt, rt2 := x>>16&15, x>>12&15, x>>8&15
	if p == 1 || w == 1 {
		name := "strd"
		if load == 1 {
			name = "ldrd"
		}
		off := (x & 0xff) << 2
		sign := ""
		if u == 0 {
			sign = "-"
		}
		imm := "#" + sign + strconv.Itoa(int(off))
		var addr string
		switch {
		case p == 0:
			addr = "[" + r(rn) + "], " + imm
		case off == 0 && u == 1 && w == 0 && rn != 15:
			addr = "[" + r(rn) + "]"
		case w == 1:
			addr = "[" + r(rn) + ", " + imm + "]!"
		default:
			addr = "[" + r(rn) + ", " + imm + "]"
		}
		if rn == 15 {
			// objdump names the literal's address, pc-relative whatever
			// the indexing.
			to := uint32(pc+4) &^ 3
			if u == 1 {
				to += off
			} else {
				to -= off
			}
			addr += "\t@ " + d.target(to)
		}
		d.comment = int64(off)
		d.op(name+c, r(rt), r(rt2), addr)
		return
	}
	if u == 0 {
		// ldrex and strex, with a word offset.
		off := (x & 0xff) << 2
		mem := "[" + r(rn) + "]"
		if off != 0 {
			mem = "[" + r(rn) + ", " + d.imm(off) + "]"
		}
		if load == 1 {
			if x&0xf00 != 0xf00 {
				d.undefined(x, 4)
				return
			}
			d.op("ldrex"+c, r(rt), mem)
		} else {
			d.op("strex"+c, r(rt2), r(rt), mem)
		}
		return
	}
	rd := x & 15
	switch op3 := x >> 4 & 15; {
	case load == 0 && (op3 == 4 || op3 == 5) && x&0xf00 == 0xf00:
		d.op("strex"+"bh"[op3-4:op3-3]+c, r(rd), r(rt), "["+r(rn)+"]")
	case load == 0 && op3 == 7:
		d.op("strexd"+c, r(rd), r(rt), r(rt2), "["+r(rn)+"]")
	case load == 1 && op3 == 0 && x&0xff00 == 0xf000:
		d.op("tbb"+c, "["+r(rn)+", "+r(rd)+"]")
		d.branchInIT()
	case load == 1 && op3 == 1 && x&0xff00 == 0xf000:
		d.op("tbh"+c, "["+r(rn)+", "+r(rd)+", lsl #1]")
		d.branchInIT()
	case load == 1 && (op3 == 4 || op3 == 5) && x&0xf0f == 0xf0f:
		d.op("ldrex"+"bh"[op3-4:op3-3]+c, r(rt), "["+r(rn)+"]")
	case load == 1 && op3 == 7 && x&0xf == 0xf:
		d.op("ldrexd"+c, r(rt), r(rt2), "["+r(rn)+"]")
	default:
		d.undefined(x, 4)
	}
}

// branchInIT writes objdump's warning for a branch inside an IT block
// that is not its last instruction.
func (d *thumbDecoder) branchInIT() {
	if d.it != 0 && d.it.advance() != 0 {
		d.b.WriteString("\t@ unpredictable branch in IT block\n")
	}
}

// loadStore decodes the loads and stores of one register: ldr, ldrb,
// ldrh, ldrsb, ldrsh and their stores, with a 12-bit offset, an 8-bit
// one (pre- or post-indexed, or unprivileged: ldrt), a shifted register
// or, for loads, pc-relative; and the preload hints pld and pli.
func (d *thumbDecoder) loadStore(x uint32, pc uint64, load bool) {
	c := d.c()
	size, signed := x>>21&3, x>>24&1
	rn, rt := x>>16&15, x>>12&15
	var width string
	switch {
	case size == 0 && signed == 1:
		width = "sb"
	case size == 0:
		width = "b"
	case size == 1 && signed == 1:
		width = "sh"
	case size == 1:
		width = "h"
	case signed == 1 || size == 3:
		d.undefined(x, 4)
		return
	}
	u := x>>23&1 == 1
	op := x >> 8 & 15
	name := "str"
	if load {
		name = "ldr"
	}
	if load && rt == 15 && size != 2 {
		// Preload hints: pld (bytes; halfwords are unallocated hints)
		// and pli (signed bytes).
		switch {
		case size == 0 && signed == 0:
			name = "pld"
		case size == 0:
			name = "pli"
		default:
			name = "nop"
		}
		if name == "nop" || !u && rn != 15 && op != 0 && op != 0xc {
			d.undefined(x, 4)
			return
		}
		d.op(name+c, d.address(x, pc))
		return
	}
	if !u && rn != 15 && op == 0xe {
		d.op(name+width+"t"+c, r(rt), d.address(x, pc))
		return
	}
	d.op(name+width+c+".w", r(rt), d.address(x, pc))
}

// address is the memory operand of a 32-bit load or store.
func (d *thumbDecoder) address(x uint32, pc uint64) string {
	rn := x >> 16 & 15
	u := x>>23&1 == 1
	i12, i8 := x&0xfff, x&0xff
	base := "[" + r(rn)
	switch {
	case rn == 15:
		to := uint32(pc+4) &^ 3
		sign := ""
		if u {
			to += i12
		} else {
			to -= i12
			sign = "-"
		}
		return "[pc, #" + sign + strconv.Itoa(int(i12)) + "]\t@ " + d.target(to)
	case u:
		if i12 == 0 {
			return base + "]"
		}
		return base + ", " + d.imm(i12) + "]"
	}
	switch x >> 8 & 15 {
	case 0:
		if x&0xfc0 != 0 {
			return base + ", <undefined>]"
		}
		if sh := x >> 4 & 3; sh != 0 {
			return base + ", " + r(x) + ", lsl #" + strconv.Itoa(int(sh)) + "]"
		}
		return base + ", " + r(x) + "]"
	case 0xe:
		if i8 == 0 {
			return base + "]"
		}
		return base + ", #" + strconv.Itoa(int(i8)) + "]"
	case 0xc:
		if i8 == 0 {
			return base + "]"
		}
		return base + ", #-" + strconv.Itoa(int(i8)) + "]"
	case 0xf:
		return base + ", #" + strconv.Itoa(int(i8)) + "]!"
	case 0xd:
		return base + ", #-" + strconv.Itoa(int(i8)) + "]!"
	case 0xb:
		return base + "], #" + strconv.Itoa(int(i8))
	case 0x9:
		return base + "], #-" + strconv.Itoa(int(i8))
	}
	return base + ", <undefined>]"
}

// parallelAddSub names the parallel additions and subtractions by bits
// 22:20; their prefix (s, q, sh, u, uq, uh) comes from bits 6:4.
var parallelAddSub = [8]string{"add8", "add16", "asx", "", "sub8", "sub16", "sax", ""}

// dataReg decodes data processing with registers: shifts by a register,
// extensions, parallel arithmetic, saturating arithmetic and the bit and
// byte reversals.
func (d *thumbDecoder) dataReg(x uint32) {
	c := d.c()
	op1, op2 := x>>20&15, x>>4&15
	rn, rd, rm := x>>16&15, x>>8&15, x&15
	if x&0xf000 != 0xf000 {
		d.undefined(x, 4)
		return
	}
	switch {
	case op1&8 == 0 && op2 == 0:
		names := [4]string{"lsl", "lsr", "asr", "ror"}
		d.op(names[op1>>1]+flag(x)+c+".w", r(rd), r(rn), r(rm))
	case op1 < 6 && op2&0xc == 8:
		names := [6]string{"sxth", "uxth", "sxtb16", "uxtb16", "sxtb", "uxtb"}
		rot := ""
		if n := x >> 4 & 3; n != 0 {
			rot = ", ror #" + strconv.Itoa(int(n)*8)
		}
		name := names[op1] + c
		if rn == 15 {
			if op1 != 2 && op1 != 3 {
				name += ".w"
			}
			d.op(name, r(rd), r(rm)+rot)
			return
		}
		d.op(names[op1][:2]+"ta"+names[op1][3:]+c, r(rd), r(rn), r(rm)+rot) // sxtah, uxtab16, ...
	case op1&8 != 0 && op2&8 == 0 && parallelAddSub[op1&7] != "":
		prefix := [2][4]string{{"s", "q", "sh", ""}, {"u", "uq", "uh", ""}}[op2>>2&1][op2&3]
		if prefix == "" {
			d.undefined(x, 4)
			return
		}
		d.op(prefix+parallelAddSub[op1&7]+c, r(rd), r(rn), r(rm))
	case op1&0xc == 8 && op2&0xc == 8:
		switch op1 & 3 {
		case 0:
			names := [4]string{"qadd", "qdadd", "qsub", "qdsub"}
			d.op(names[op2&3]+c, r(rd), r(rm), r(rn))
		case 1:
			names := [4]string{"rev" + c + ".w", "rev16" + c + ".w", "rbit" + c, "revsh" + c + ".w"}
			d.op(names[op2&3], r(rd), r(rm))
		case 2:
			if op2 != 8 {
				d.undefined(x, 4)
				return
			}
			d.op("sel"+c, r(rd), r(rn), r(rm))
		case 3:
			if op2 != 8 {
				d.undefined(x, 4)
				return
			}
			d.op("clz"+c, r(rd), r(rm))
		}
	default:
		d.undefined(x, 4)
	}
}

// multiply decodes the 32-bit multiplies and multiply-accumulates.
func (d *thumbDecoder) multiply(x uint32) {
	c := d.c()
	rn, ra, rd, rm := x>>16&15, x>>12&15, x>>8&15, x&15
	op2 := x >> 4 & 3
	if x&0xc0 != 0 {
		d.undefined(x, 4)
		return
	}
	tb := func(bit uint32) string {
		if x&(1<<bit) != 0 {
			return "t"
		}
		return "b"
	}
	var name string
	switch x >> 20 & 7 {
	case 0:
		switch {
		case op2 == 0 && ra == 15:
			d.op("mul"+c+".w", r(rd), r(rn), r(rm))
			return
		case op2 == 0:
			name = "mla"
		case op2 == 1:
			name = "mls"
		default:
			d.undefined(x, 4)
			return
		}
	case 1:
		name = "smla" + tb(5) + tb(4)
		if ra == 15 {
			d.op("smul"+tb(5)+tb(4)+c, r(rd), r(rn), r(rm))
			return
		}
	case 2, 4:
		name = "smlad"
		if x>>20&7 == 4 {
			name = "smlsd"
		}
		if op2&2 != 0 {
			d.undefined(x, 4)
			return
		}
		if op2 == 1 {
			name += "x"
		}
		if ra == 15 {
			d.op("smu"+name[3:]+c, r(rd), r(rn), r(rm))
			return
		}
	case 3:
		if op2&2 != 0 {
			d.undefined(x, 4)
			return
		}
		name = "smlaw" + tb(4)
		if ra == 15 {
			d.op("smulw"+tb(4)+c, r(rd), r(rn), r(rm))
			return
		}
	case 5, 6:
		if op2&2 != 0 {
			d.undefined(x, 4)
			return
		}
		name = "smmla"
		if x>>20&7 == 6 {
			name = "smmls"
		}
		if op2 == 1 {
			name += "r"
		}
		if ra == 15 && x>>20&7 == 5 {
			d.op("smmul"+name[5:]+c, r(rd), r(rn), r(rm))
			return
		}
	case 7:
		if op2 != 0 {
			d.undefined(x, 4)
			return
		}
		if ra == 15 {
			d.op("usad8"+c, r(rd), r(rn), r(rm))
			return
		}
		name = "usada8"
	}
	d.op(name+c, r(rd), r(rn), r(rm), r(ra))
}

// longMultiply decodes the 64-bit multiplies and the divisions.
func (d *thumbDecoder) longMultiply(x uint32) {
	c := d.c()
	rn, lo, hi, rm := x>>16&15, x>>12&15, x>>8&15, x&15
	op1, op2 := x>>20&7, x>>4&15
	long := func(name string) { d.op(name+c, r(lo), r(hi), r(rn), r(rm)) }
	tb := func(bit uint32) string {
		if x&(1<<bit) != 0 {
			return "t"
		}
		return "b"
	}
	switch {
	case op1 == 0 && op2 == 0:
		long("smull")
	case op1 == 1 && op2 == 15 && lo == 15:
		d.op("sdiv"+c, r(hi), r(rn), r(rm))
	case op1 == 2 && op2 == 0:
		long("umull")
	case op1 == 3 && op2 == 15 && lo == 15:
		d.op("udiv"+c, r(hi), r(rn), r(rm))
	case op1 == 4 && op2 == 0:
		long("smlal")
	case op1 == 4 && op2&0xc == 8:
		long("smlal" + tb(5) + tb(4))
	case op1 == 4 && op2&0xe == 0xc:
		long("smlald" + "x"[:op2&1])
	case op1 == 5 && op2&0xe == 0xc:
		long("smlsld" + "x"[:op2&1])
	case op1 == 6 && op2 == 0:
		long("umlal")
	case op1 == 6 && op2 == 6:
		long("umaal")
	default:
		d.undefined(x, 4)
	}
}

// coprocessor decodes the coprocessor space of a 32-bit Thumb
// instruction whose first halfword is 111011xx: VFP, whose ARM encoding
// is the same bits under a condition (the IT block's, or always), the
// moves between core and coprocessor registers, and Advanced SIMD.
func (d *thumbDecoder) coprocessor(x uint32, pc uint64) {
	cond := uint32(14)
	if d.it != 0 {
		cond = d.it.cond()
	}
	if text, ok := coprocessorTransfer(x, thumbCond[cond]); ok {
		d.b.WriteString(text)
		return
	}
	if x>>24 == 0xef {
		d.neon(x)
		return
	}
	arm := cond<<28 | x&0x0fffffff
	if text, ok := neonTransfer(arm, thumbCond[cond]); ok {
		d.b.WriteString(text)
		return
	}
	if text, ok := coprocessorOp(arm, thumbCond[cond], uint64(uint32(pc+4)&^3), d.sym); ok {
		d.b.WriteString(text)
		return
	}
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], arm)
	armDecode.Lock()
	inst, ok := decodeOneARM(w[:])
	armDecode.Unlock()
	if !ok {
		if text, ok := vfpMultiple(arm); ok {
			d.b.WriteString(text)
			return
		}
		d.undefined(x, 4)
		return
	}
	// formatARM reads a pc-relative operand 8 bytes ahead of the address
	// it is given; Thumb's base is the word-aligned pc plus 4.
	formatARM(&d.b, inst, uint64(uint32(pc+4)&^3-8), d.sym)
}

// neon decodes the Advanced SIMD instruction x (first halfword 111x1111
// or 11111001), whose ARM encoding thumbNEON gives.
func (d *thumbDecoder) neon(x uint32) {
	if arm, ok := thumbNEON(x); ok {
		if text, ok := neon(arm, d.c()); ok {
			d.b.WriteString(text)
			return
		}
	}
	d.undefined(x, 4)
}
