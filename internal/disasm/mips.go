package disasm

import (
	"encoding/binary"
	"strconv"
)

// DecodeMIPS decodes MIPS code at addr in byte order bo, as GNU objdump
// 2.40 prints it for MIPS64 release 2 (which MIPS32 release 2, what
// clang and GCC emit for 32-bit MIPS, is a subset of): the integer, FPU
// and COP1X instructions, with objdump's aliases (nop, move, li, b, bal,
// beqz, negu, ...). golang.org/x/arch has no MIPS decoder, so the decoding
// here is written from the MIPS64 release 2 instruction tables. n64
// selects the register names of the n32 and n64 ABIs (a 64-bit file, or
// a 32-bit one with EF_MIPS_ABI2), whose a4 to a7 are o32's t0 to t3.
// Instructions are four bytes; a word that does not decode reads as
// objdump's ".word 0x...", and a tail shorter than a word is BadText.
func DecodeMIPS(code []byte, addr uint64, bo binary.ByteOrder, n64 bool, sym Symbolizer) []Inst {
	if bo == nil {
		bo = binary.BigEndian
	}
	names := &mipsO32
	if n64 {
		names = &mipsN64
	}
	return decodeWords(code, addr, func(b *textBuf, word []byte, pc uint64) string {
		m := mipsInst{x: bo.Uint32(word), pc: pc, sym: sym, gpr: names, b: b}
		return safeFormat(b, func() {
			if !m.decode() {
				b.Reset()
				b.WriteString(".word\t" + hexU(m.x))
			}
		})
	})
}

// The general registers' names by ABI, as objdump prints them.
var (
	mipsO32 = [32]string{"zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7",
		"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "t8", "t9", "k0", "k1", "gp", "sp", "s8", "ra"}
	mipsN64 = [32]string{"zero", "at", "v0", "v1", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3",
		"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "t8", "t9", "k0", "k1", "gp", "sp", "s8", "ra"}
)

// mipsInst is one MIPS instruction being decoded.
type mipsInst struct {
	x   uint32
	pc  uint64
	sym Symbolizer
	gpr *[32]string
	b   *textBuf
}

// The instruction's fields.
func (m *mipsInst) rs() string   { return m.gpr[m.x>>21&31] }
func (m *mipsInst) rt() string   { return m.gpr[m.x>>16&31] }
func (m *mipsInst) rd() string   { return m.gpr[m.x>>11&31] }
func (m *mipsInst) sa() uint32   { return m.x >> 6 & 31 }
func (m *mipsInst) simm() int32  { return int32(int16(m.x)) }
func (m *mipsInst) uimm() uint32 { return m.x & 0xffff }

// op writes the mnemonic and the operands, separated by commas without
// spaces, as objdump does for MIPS.
func (m *mipsInst) op(mnem string, args ...string) {
	m.b.WriteString(mnem)
	for i, a := range args {
		if i == 0 {
			m.b.WriteByte('\t')
		} else {
			m.b.WriteByte(',')
		}
		m.b.WriteString(a)
	}
}

// dec is v in decimal, hexU v in hex after "0x", as objdump writes
// signed and unsigned immediates.
func dec(v int32) string   { return strconv.Itoa(int(v)) }
func hexU(v uint32) string { return "0x" + strconv.FormatUint(uint64(v), 16) }

// branch is the target of a PC-relative branch: the delay slot's address
// plus the offset in words.
func (m *mipsInst) branch() string {
	var t textBuf
	target(&t, m.pc+4+uint64(int64(m.simm())<<2), m.sym)
	return t.String()
}

// mem is a load or store's "offset(base)".
func (m *mipsInst) mem() string { return dec(m.simm()) + "(" + m.rs() + ")" }

// fpr names floating-point register n.
func fpr(n uint32) string { return "$f" + strconv.Itoa(int(n&31)) }

// decode writes the instruction's text; false if it does not decode.
func (m *mipsInst) decode() bool {
	x := m.x
	rs, rt := x>>21&31, x>>16&31
	switch op := x >> 26; op {
	case 0:
		return m.special()
	case 1:
		return m.regimm()
	case 2, 3:
		to := (m.pc+4)&^0xfffffff | uint64(x&0x3ffffff)<<2
		var t textBuf
		target(&t, to, m.sym)
		m.op([2]string{"j", "jal"}[op-2], t.String())
	case 4, 20:
		l := "" // beql: likely
		if op == 20 {
			l = "l"
		}
		switch {
		case rs == 0 && rt == 0 && op == 4:
			m.op("b", m.branch())
		case rt == 0:
			m.op("beqz"+l, m.rs(), m.branch())
		default:
			m.op("beq"+l, m.rs(), m.rt(), m.branch())
		}
	case 5, 21:
		l := ""
		if op == 21 {
			l = "l"
		}
		if rt == 0 {
			m.op("bnez"+l, m.rs(), m.branch())
		} else {
			m.op("bne"+l, m.rs(), m.rt(), m.branch())
		}
	case 6, 7, 22, 23:
		if rt != 0 {
			return false
		}
		m.op(mipsOpNames[op], m.rs(), m.branch())
	case 8, 9, 24, 25:
		if rs == 0 && op == 9 {
			m.op("li", m.rt(), dec(m.simm()))
			return true
		}
		m.op(mipsOpNames[op], m.rt(), m.rs(), dec(m.simm()))
	case 10, 11:
		m.op([2]string{"slti", "sltiu"}[op-10], m.rt(), m.rs(), dec(m.simm()))
	case 12, 13, 14:
		if op == 13 && rs == 0 {
			m.op("li", m.rt(), hexU(m.uimm()))
			return true
		}
		m.op([3]string{"andi", "ori", "xori"}[op-12], m.rt(), m.rs(), hexU(m.uimm()))
	case 15:
		if rs != 0 {
			return false
		}
		m.op("lui", m.rt(), hexU(m.uimm()))
	case 16, 17, 18:
		if op == 17 && m.cop1() {
			return true
		}
		if x&(1<<25) == 0 {
			return false
		}
		m.b.Reset()
		m.op("c"+strconv.Itoa(int(op-16)), hexU(x&0x1ffffff)) // a coprocessor operation objdump does not name
	case 50, 54, 58, 62:
		m.op(mipsOpNames[op], "$"+strconv.Itoa(int(rt)), m.mem())
	case 19:
		return m.cop1x()
	case 28:
		return m.special2()
	case 31:
		return m.special3()
	case 47:
		m.op("cache", hexU(rt), m.mem())
	case 51:
		m.op("pref", hexU(rt), m.mem())
	case 49, 53, 57, 61:
		m.op(mipsOpNames[op], fpr(rt), m.mem())
	default:
		name := mipsOpNames[op] // the loads and stores of general registers
		if name == "" {
			return false
		}
		m.op(name, m.rt(), m.mem())
	}
	return true
}

// mipsOpNames names instructions by their opcode (bits 31:26) where the
// opcode alone gives the name: branches, immediate arithmetic, loads and
// stores.
var mipsOpNames = [64]string{
	6: "blez", 7: "bgtz", 22: "blezl", 23: "bgtzl", 8: "addi", 9: "addiu", 24: "daddi", 25: "daddiu",
	49: "lwc1", 53: "ldc1", 57: "swc1", 61: "sdc1", 50: "lwc2", 54: "ldc2", 58: "swc2", 62: "sdc2",
	26: "ldl", 27: "ldr", 32: "lb", 33: "lh", 34: "lwl", 35: "lw", 36: "lbu", 37: "lhu", 38: "lwr", 39: "lwu",
	40: "sb", 41: "sh", 42: "swl", 43: "sw", 44: "sdl", 45: "sdr", 46: "swr", 48: "ll", 52: "lld", 55: "ld",
	56: "sc", 60: "scd", 63: "sd",
}

// mipsSpecialNames names SPECIAL's instructions by their function field
// (bits 5:0), and mipsRotateNames the rotates that share a shift's
// function field (rs or sa 1), as objdump spells them (ror for rotr).
var (
	mipsSpecialNames = [64]string{
		2: "srl", 3: "sra", 4: "sllv", 6: "srlv", 7: "srav", 20: "dsllv", 22: "dsrlv", 23: "dsrav",
		24: "mult", 25: "multu", 26: "div", 27: "divu", 28: "dmult", 29: "dmultu", 30: "ddiv", 31: "ddivu",
		32: "add", 33: "addu", 34: "sub", 35: "subu", 36: "and", 37: "or", 38: "xor", 39: "nor",
		42: "slt", 43: "sltu", 44: "dadd", 45: "daddu", 46: "dsub", 47: "dsubu",
		48: "tge", 49: "tgeu", 50: "tlt", 51: "tltu", 52: "teq", 54: "tne",
		56: "dsll", 58: "dsrl", 59: "dsra", 60: "dsll32", 62: "dsrl32", 63: "dsra32",
	}
	mipsRotateNames = [64]string{2: "ror", 6: "rorv", 22: "drorv", 58: "dror", 62: "dror32"}
)

// special decodes opcode 0 (SPECIAL), by its function field.
func (m *mipsInst) special() bool {
	x := m.x
	rs, rt, rd, sa := x>>21&31, x>>16&31, x>>11&31, m.sa()
	fn := x & 63
	three := func(name string) { m.op(name, m.rd(), m.rs(), m.rt()) }
	switch fn {
	case 0:
		switch {
		case x == 0:
			m.op("nop")
		case x == 0x40:
			m.op("ssnop")
		case x == 0xc0:
			m.op("ehb")
		case rs != 0:
			return false
		default:
			m.op("sll", m.rd(), m.rt(), hexU(sa))
		}
	case 1:
		if sa != 0 || rt&2 != 0 {
			return false
		}
		name := "movf"
		if rt&1 != 0 {
			name = "movt"
		}
		m.op(name, m.rd(), m.rs(), "$fcc"+strconv.Itoa(int(rt>>2)))
	case 2, 3, 58, 59, 56, 60, 62, 63:
		name := mipsSpecialNames[fn]
		switch {
		case rs == 1 && mipsRotateNames[fn] != "":
			name = mipsRotateNames[fn]
		case rs != 0:
			return false
		}
		m.op(name, m.rd(), m.rt(), hexU(sa))
	case 4, 6, 7, 20, 22, 23:
		name := mipsSpecialNames[fn]
		switch {
		case sa == 1 && mipsRotateNames[fn] != "":
			name = mipsRotateNames[fn]
		case sa != 0:
			return false
		}
		m.op(name, m.rd(), m.rt(), m.rs())
	case 8:
		if rt != 0 || rd != 0 || sa&0xf != 0 {
			return false
		}
		if sa == 16 {
			m.op("jr.hb", m.rs())
		} else {
			m.op("jr", m.rs())
		}
	case 9:
		if rt != 0 || sa&0xf != 0 {
			return false
		}
		name := "jalr"
		if sa == 16 {
			name = "jalr.hb"
		}
		if rd == 31 {
			m.op(name, m.rs())
		} else {
			m.op(name, m.rd(), m.rs())
		}
	case 10, 11:
		if sa != 0 {
			return false
		}
		three([2]string{"movz", "movn"}[fn-10])
	case 12:
		if code := x >> 6 & 0xfffff; code != 0 {
			m.op("syscall", hexU(code))
		} else {
			m.op("syscall")
		}
	case 13:
		c1, c2 := x>>16&0x3ff, x>>6&0x3ff
		switch {
		case c2 != 0:
			m.op("break", hexU(c1), hexU(c2))
		case c1 != 0:
			m.op("break", hexU(c1))
		default:
			m.op("break")
		}
	case 15:
		if x>>11&0x7fff != 0 {
			return false
		}
		if sa != 0 {
			m.op("sync", hexU(sa))
		} else {
			m.op("sync")
		}
	case 16, 18:
		if rs != 0 || rt != 0 || sa != 0 {
			return false
		}
		m.op([2]string{"mfhi", "mflo"}[(fn-16)/2], m.rd())
	case 17, 19:
		if x>>6&0x7fff != 0 {
			return false
		}
		m.op([2]string{"mthi", "mtlo"}[(fn-17)/2], m.rs())
	case 24, 25, 28, 29:
		if rd != 0 || sa != 0 {
			return false
		}
		m.op(mipsSpecialNames[fn], m.rs(), m.rt())
	case 26, 27, 30, 31:
		if rd != 0 || sa != 0 {
			return false
		}
		m.op(mipsSpecialNames[fn], "zero", m.rs(), m.rt())
	case 32, 33, 34, 35, 36, 37, 38, 39, 42, 43, 44, 45, 46, 47:
		if sa != 0 {
			return false
		}
		switch {
		case rt == 0 && (fn == 33 || fn == 37 || fn == 45):
			m.op("move", m.rd(), m.rs())
		case rs == 0 && fn == 35:
			m.op("negu", m.rd(), m.rt())
		case rs == 0 && fn == 47:
			m.op("dnegu", m.rd(), m.rt())
		case rs == 0 && fn == 34:
			m.op("neg", m.rd(), m.rt())
		case rs == 0 && fn == 46:
			m.op("dneg", m.rd(), m.rt())
		default:
			three(mipsSpecialNames[fn])
		}
	case 48, 49, 50, 51, 52, 54:
		if code := x >> 6 & 0x3ff; code != 0 {
			m.op(mipsSpecialNames[fn], m.rs(), m.rt(), hexU(code))
		} else {
			m.op(mipsSpecialNames[fn], m.rs(), m.rt())
		}
	default:
		return false
	}
	return true
}

// mipsRegimmNames names REGIMM's branches by their rt field, and
// mipsRegimmTraps its traps.
var (
	mipsRegimmNames = [32]string{0: "bltz", 1: "bgez", 2: "bltzl", 3: "bgezl", 16: "bltzal", 17: "bgezal", 18: "bltzall", 19: "bgezall"}
	mipsRegimmTraps = [32]string{8: "tgei", 9: "tgeiu", 10: "tlti", 11: "tltiu", 12: "teqi", 14: "tnei"}
)

// regimm decodes opcode 1 (REGIMM), by its rt field.
func (m *mipsInst) regimm() bool {
	rs, rt := m.x>>21&31, m.x>>16&31
	names := &mipsRegimmNames
	switch {
	case rt == 17 && rs == 0:
		m.op("bal", m.branch())
	case rt == 1 && rs == 0:
		m.op("b", m.branch())
	case names[rt] != "":
		m.op(names[rt], m.rs(), m.branch())
	case mipsRegimmTraps[rt] != "":
		m.op(mipsRegimmTraps[rt], m.rs(), dec(m.simm()))
	case rt == 31:
		m.op("synci", m.mem())
	default:
		return false
	}
	return true
}

// mipsSpecial2Names names SPECIAL2's multiply-accumulates and counts of
// leading bits by their function field.
var mipsSpecial2Names = [64]string{0: "madd", 1: "maddu", 4: "msub", 5: "msubu", 32: "clz", 33: "clo", 36: "dclz", 37: "dclo"}

// special2 decodes opcode 28 (SPECIAL2): multiply-accumulate, mul, clz.
func (m *mipsInst) special2() bool {
	x := m.x
	rd, sa := x>>11&31, m.sa()
	switch fn := x & 63; fn {
	case 0, 1, 4, 5:
		if rd != 0 || sa != 0 {
			return false
		}
		m.op(mipsSpecial2Names[fn], m.rs(), m.rt())
	case 2:
		if sa != 0 {
			return false
		}
		m.op("mul", m.rd(), m.rs(), m.rt())
	case 32, 33, 36, 37:
		if sa != 0 {
			return false
		}
		if x>>16&31 != rd {
			// rd and rt must agree; objdump shows both.
			m.op(mipsSpecial2Names[fn], m.rd()+" or "+m.rt(), m.rs())
		} else {
			m.op(mipsSpecial2Names[fn], m.rd(), m.rs())
		}
	case 63:
		if code := x >> 6 & 0xfffff; code != 0 {
			m.op("sdbbp", hexU(code))
		} else {
			m.op("sdbbp")
		}
	default:
		return false
	}
	return true
}

// mipsShuffleNames names SPECIAL3's byte shuffles and sign extensions
// (BSHFL and DBSHFL) by their sa field and function field (sa<<6|fn).
var mipsShuffleNames = map[uint32]string{2<<6 | 32: "wsbh", 16<<6 | 32: "seb", 24<<6 | 32: "seh", 2<<6 | 36: "dsbh", 5<<6 | 36: "dshd"}

// special3 decodes opcode 31 (SPECIAL3): bit fields, byte swaps, sign
// extensions, rdhwr.
func (m *mipsInst) special3() bool {
	x := m.x
	msb, lsb := x>>11&31, x>>6&31
	switch fn := x & 63; fn {
	// The bit fields: objdump writes dextm and dextu as dext, dinsm and
	// dinsu as dins, with the position and size they stand for.
	case 0: // ext: size = msbd+1
		m.op("ext", m.rt(), m.rs(), hexU(lsb), hexU(msb+1))
	case 1: // dextm: size = msbd+33
		m.op("dext", m.rt(), m.rs(), hexU(lsb), hexU(msb+33))
	case 2: // dextu: pos = lsb+32
		m.op("dext", m.rt(), m.rs(), hexU(lsb+32), hexU(msb+1))
	case 3:
		m.op("dext", m.rt(), m.rs(), hexU(lsb), hexU(msb+1))
	case 4, 7: // ins, dins: size = msb-lsb+1 (objdump shows a negative one as is)
		m.op([2]string{"ins", "dins"}[fn/7], m.rt(), m.rs(), hexU(lsb), hexU(msb-lsb+1))
	case 5: // dinsm: msb+32
		m.op("dins", m.rt(), m.rs(), hexU(lsb), hexU(msb+32-lsb+1))
	case 6: // dinsu
		m.op("dins", m.rt(), m.rs(), hexU(lsb+32), hexU(msb-lsb+1))
	case 32, 36:
		if x>>21&31 != 0 {
			return false
		}
		name, ok := mipsShuffleNames[lsb<<6|fn]
		if !ok {
			return false
		}
		m.op(name, m.rd(), m.rt())
	case 59:
		if x>>21&31 != 0 || lsb != 0 {
			return false
		}
		m.op("rdhwr", m.rt(), "$"+strconv.Itoa(int(msb)))
	default:
		return false
	}
	return true
}

// mipsFPFmt spells the format field of COP1 arithmetic.
var mipsFPFmt = map[uint32]string{16: "s", 17: "d", 20: "w", 21: "l", 22: "ps"}

// mipsFPCond names the comparisons of c.cond.fmt by their condition.
var mipsFPCond = [16]string{"f", "un", "eq", "ueq", "olt", "ult", "ole", "ule", "sf", "ngle", "seq", "ngl", "lt", "nge", "le", "ngt"}

// mipsFCR names floating-point control register n as objdump does.
func mipsFCR(n uint32) string {
	switch n {
	case 0:
		return "c1_fir"
	case 25:
		return "c1_fccr"
	case 26:
		return "c1_fexr"
	case 28:
		return "c1_fenr"
	case 31:
		return "c1_fcsr"
	}
	return "$" + strconv.Itoa(int(n))
}

// cop1 decodes opcode 17 (COP1): moves, branches and arithmetic of the
// floating-point unit.
func (m *mipsInst) cop1() bool {
	x := m.x
	rs, rt := x>>21&31, x>>16&31
	fs, fd := x>>11&31, x>>6&31
	if rs < 8 {
		if x&0x7ff != 0 {
			return false
		}
		names := [8]string{"mfc1", "dmfc1", "cfc1", "mfhc1", "mtc1", "dmtc1", "ctc1", "mthc1"}
		if rs == 2 || rs == 6 {
			m.op(names[rs], m.rt(), mipsFCR(fs))
		} else {
			m.op(names[rs], m.rt(), fpr(fs))
		}
		return true
	}
	if rs == 8 {
		names := [4]string{"bc1f", "bc1t", "bc1fl", "bc1tl"}
		if cc := rt >> 2; cc != 0 {
			m.op(names[rt&3], "$fcc"+strconv.Itoa(int(cc)), m.branch())
		} else {
			m.op(names[rt&3], m.branch())
		}
		return true
	}
	f, ok := mipsFPFmt[rs]
	if !ok {
		return false
	}
	fn := x & 63
	two := func(name string) bool {
		if rt != 0 {
			return false
		}
		m.op(name+"."+f, fpr(fd), fpr(fs))
		return true
	}
	switch {
	case fn < 4 && (rs == 16 || rs == 17) || fn < 3 && rs == 22:
		m.op([4]string{"add", "sub", "mul", "div"}[fn]+"."+f, fpr(fd), fpr(fs), fpr(rt))
	case fn >= 4 && fn < 8 && (rs == 16 || rs == 17 || rs == 22 && fn != 4):
		return two([4]string{"sqrt", "abs", "mov", "neg"}[fn-4])
	case fn >= 8 && fn < 16 && (rs == 16 || rs == 17):
		names := [8]string{"round.l", "trunc.l", "ceil.l", "floor.l", "round.w", "trunc.w", "ceil.w", "floor.w"}
		return two(names[fn-8])
	case fn == 17 && (rs == 16 || rs == 17 || rs == 22):
		if rt&2 != 0 {
			return false
		}
		name := "movf"
		if rt&1 != 0 {
			name = "movt"
		}
		m.op(name+"."+f, fpr(fd), fpr(fs), "$fcc"+strconv.Itoa(int(rt>>2)))
	case (fn == 18 || fn == 19) && (rs == 16 || rs == 17 || rs == 22):
		m.op([2]string{"movz", "movn"}[fn-18]+"."+f, fpr(fd), fpr(fs), m.rt())
	case (fn == 21 || fn == 22) && (rs == 16 || rs == 17):
		return two([2]string{"recip", "rsqrt"}[fn-21])
	case fn == 32 && rs != 16 && rs != 22:
		return two("cvt.s")
	case fn == 33 && rs != 17 && rs != 22:
		return two("cvt.d")
	case fn == 36 && (rs == 16 || rs == 17):
		return two("cvt.w")
	case fn == 37 && (rs == 16 || rs == 17):
		return two("cvt.l")
	case fn >= 48 && (rs == 16 || rs == 17 || rs == 22):
		if fd&3 != 0 {
			return false
		}
		name := "c." + mipsFPCond[fn-48] + "." + f
		if cc := fd >> 2; cc != 0 {
			m.op(name, "$fcc"+strconv.Itoa(int(cc)), fpr(fs), fpr(rt))
		} else {
			m.op(name, fpr(fs), fpr(rt))
		}
	default:
		return false
	}
	return true
}

// COP1X's instructions: the indexed loads and stores by function field,
// the fused multiply-adds by its bits 5:3 and their formats by bits 2:0.
var (
	mipsCOP1XNames = [64]string{0: "lwxc1", 1: "ldxc1", 5: "luxc1", 8: "swxc1", 9: "sdxc1", 13: "suxc1"}
	mipsFusedNames = [8]string{4: "madd", 5: "msub", 6: "nmadd", 7: "nmsub"}
	mipsFusedFmts  = [8]string{0: "s", 1: "d", 6: "ps"}
)

// cop1x decodes opcode 19 (COP1X): indexed loads and stores of floating-
// point registers and the fused multiply-adds.
func (m *mipsInst) cop1x() bool {
	x := m.x
	base, index := m.rs(), m.rt()
	fs, fd := x>>11&31, x>>6&31
	switch fn := x & 63; fn {
	case 0, 1, 5:
		if fs != 0 {
			return false
		}
		m.op(mipsCOP1XNames[fn], fpr(fd), index+"("+base+")")
	case 8, 9, 13:
		if fd != 0 {
			return false
		}
		m.op(mipsCOP1XNames[fn], fpr(fs), index+"("+base+")")
	case 15:
		if fd != 0 {
			return false
		}
		m.op("prefx", hexU(fs), index+"("+base+")")
	default:
		name, f := mipsFusedNames[fn>>3], mipsFusedFmts[fn&7]
		if name == "" || f == "" {
			return false
		}
		m.op(name+"."+f, fpr(fd), fpr(x>>21&31), fpr(fs), fpr(x>>16&31))
	}
	return true
}
