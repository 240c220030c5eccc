package disasm

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/arch/riscv64/riscv64asm"
)

// decodeRISCV64 decodes RISC-V (RV64GC) code at addr. Instructions are
// two bytes (compressed) or four; bytes that do not decode become one
// instruction of the length their low bits announce, in objdump's
// ".2byte"/".4byte" form.
func decodeRISCV64(code []byte, addr uint64, sym Symbolizer) []Inst {
	return decodeRISCV(code, addr, sym, false)
}

// DecodeRV32 decodes 32-bit RISC-V (RV32GC) code at addr, which an ELF
// file tells from RV64 code by its class (ELFCLASS32), not its machine:
// the compressed encodings RV64 uses for c.addiw, c.ld, c.sd, c.ldsp and
// c.sdsp are RV32's c.jal, c.flw, c.fsw, c.flwsp and c.fswsp, and
// addresses are 32 bits. Otherwise it is Decode for elf.EM_RISCV.
func DecodeRV32(code []byte, addr uint64, sym Symbolizer) []Inst {
	return decodeRISCV(code, addr, sym, true)
}

// decodeRISCV decodes RV64GC code, or RV32GC code if rv32.
func decodeRISCV(code []byte, addr uint64, sym Symbolizer, rv32 bool) []Inst {
	insts := make([]Inst, 0, len(code)/3+1)
	var b textBuf
	hi := riscvHi{rv32: rv32}
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		inst, ok := riscv64asm.Inst{}, false
		if rv32 {
			inst, ok = decodeRV32Compressed(code[off:])
		}
		if !ok {
			inst, ok = decodeOneRISCV64(code[off:])
		}
		if !ok {
			n := min(riscvLen(code[off]), len(code)-off)
			insts = append(insts, Inst{Addr: pc, Len: n, Text: badRISCV64(code[off : off+n])})
			off += n
			continue
		}
		b.Reset()
		text := safeFormat(&b, func() { formatRISCV64(&b, inst, pc, sym, &hi) })
		insts = append(insts, Inst{Addr: pc, Len: inst.Len, Text: text})
		off += inst.Len
	}
	return insts
}

// decodeRV32Compressed decodes the compressed instructions of RV32 whose
// encodings RV64 gives to others, as the instructions they expand to
// (objdump prints them so): c.jal as jal ra, c.flw and c.flwsp as flw,
// c.fsw and c.fswsp as fsw. ok is false for any other bytes.
func decodeRV32Compressed(src []byte) (inst riscv64asm.Inst, ok bool) {
	if len(src) < 2 {
		return inst, false
	}
	x := uint32(binary.LittleEndian.Uint16(src))
	bit := func(i, n uint32) uint32 { return x >> i & (1<<n - 1) }
	creg := func(i uint32) uint32 { return 8 + bit(i, 3) } // x8 to x15, f8 to f15
	mem := func(base uint32, off uint32) riscv64asm.RegOffset {
		return riscv64asm.RegOffset{OfsReg: riscv64asm.X0 + riscv64asm.Reg(base), Ofs: riscv64asm.Simm{Imm: int32(off), Decimal: true, Width: 12}}
	}
	f := func(r uint32) riscv64asm.Reg { return riscv64asm.F0 + riscv64asm.Reg(r) }
	inst = riscv64asm.Inst{Enc: x, Len: 2}
	switch x&3<<3 | bit(13, 3) {
	case 1<<3 | 1: // c.jal: quadrant 1, funct3 001
		off := bit(12, 1)<<11 | bit(8, 1)<<10 | bit(9, 2)<<8 | bit(6, 1)<<7 | bit(7, 1)<<6 | bit(2, 1)<<5 | bit(11, 1)<<4 | bit(3, 3)<<1
		inst.Op = riscv64asm.JAL
		inst.Args = riscv64asm.Args{riscv64asm.X1, riscv64asm.Simm{Imm: int32(off<<20) >> 20, Decimal: true, Width: 12}}
	case 0<<3 | 3, 0<<3 | 7: // c.flw, c.fsw: quadrant 0, funct3 011 and 111
		off := bit(10, 3)<<3 | bit(6, 1)<<2 | bit(5, 1)<<6
		inst.Op = riscv64asm.FLW
		if bit(13, 3) == 7 {
			inst.Op = riscv64asm.FSW
		}
		inst.Args = riscv64asm.Args{f(creg(2)), mem(creg(7), off)}
	case 2<<3 | 3: // c.flwsp: quadrant 2, funct3 011
		off := bit(12, 1)<<5 | bit(4, 3)<<2 | bit(2, 2)<<6
		inst.Op = riscv64asm.FLW
		inst.Args = riscv64asm.Args{f(bit(7, 5)), mem(2, off)}
	case 2<<3 | 7: // c.fswsp: quadrant 2, funct3 111
		off := bit(9, 4)<<2 | bit(7, 2)<<6
		inst.Op = riscv64asm.FSW
		inst.Args = riscv64asm.Args{f(bit(2, 5)), mem(2, off)}
	default:
		return inst, false
	}
	return inst, true
}

// decodeOneRISCV64 decodes one instruction; ok is false for bytes that
// do not decode (a decoder panic included).
func decodeOneRISCV64(src []byte) (inst riscv64asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := riscv64asm.Decode(src)
	if err != nil || inst.Len <= 0 || inst.Len > len(src) {
		return riscv64asm.Inst{}, false
	}
	return inst, true
}

// riscvLen returns the length of the instruction whose first byte is c,
// as objdump reckons it: 2 for compressed ones, 4, 6 or 8 by the low
// bits of the others, and 2 for the longer formats no one uses.
func riscvLen(c byte) int {
	switch {
	case c&3 != 3:
		return 2
	case c&0x1f != 0x1f:
		return 4
	case c&0x3f == 0x1f:
		return 6
	case c&0x7f == 0x3f:
		return 8
	}
	return 2
}

// badRISCV64 returns objdump's text for bytes that do not decode:
// "unimp" for the all-zero halfword, which the ISA reserves as an
// illegal instruction, ".2byte", ".4byte" or ".8byte" and the value, or
// the bytes of a six-byte or cut-off instruction.
func badRISCV64(b []byte) string {
	var v uint64
	switch len(b) {
	case 2:
		if v = uint64(binary.LittleEndian.Uint16(b)); v == 0 {
			return "unimp"
		}
	case 4:
		v = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		v = binary.LittleEndian.Uint64(b)
	default:
		var t strings.Builder
		t.WriteString(".byte\t")
		for i, c := range b {
			if i > 0 {
				t.WriteString(", ")
			}
			fmt.Fprintf(&t, "0x%02x", c)
		}
		return t.String()
	}
	return "." + strconv.Itoa(len(b)) + "byte\t0x" + strconv.FormatUint(v, 16)
}

// riscvHi is what objdump knows of the registers a lui or auipc set: the
// upper bits of an address that a following addi, load, store or jalr
// completes, which objdump prints after the instruction ("# 1db71320
// <bits+0x10>").
type riscvHi struct {
	val   [32]uint64
	valid [32]bool
	rv32  bool // addresses are 32 bits
}

// riscvGPR and riscvFPR are the ABI names objdump prints for x0-x31 and
// f0-f31.
var (
	riscvGPR = [32]string{"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
		"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
		"s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"}
	riscvFPR = [32]string{"ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1",
		"fa0", "fa1", "fa2", "fa3", "fa4", "fa5", "fa6", "fa7",
		"fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11"}
)

// riscvAlias maps a mnemonic of the decoder's GNU syntax to the one
// objdump 2.40 prints: it shows an immediate form by its register form's
// name ("add a3,a3,800" for addi).
var riscvAlias = map[string]string{
	"addi": "add", "andi": "and", "ori": "or", "xori": "xor",
	"slli": "sll", "srli": "srl", "srai": "sra",
	"addiw": "addw", "slliw": "sllw", "srliw": "srlw", "sraiw": "sraw",
	// And so the CSR instructions with an immediate (but see
	// riscvCSRImm).
	"csrrwi": "csrrw", "csrrsi": "csrrs", "csrrci": "csrrc",
	"csrwi": "csrw", "csrsi": "csrs", "csrci": "csrc",
}

// riscvCSRImm returns objdump's alias of a csrrwi that writes the
// floating-point flags or rounding mode: "fsflagsi rd,imm" and "fsrmi
// rd,imm", rd shown even if it is zero. ok is false for other
// instructions.
func riscvCSRImm(inst riscv64asm.Inst) (mnem, rd string, ok bool) {
	if inst.Len != 4 || inst.Enc&0x707f != 0x5073 { // csrrwi
		return "", "", false
	}
	switch inst.Enc >> 20 {
	case 1:
		mnem = "fsflagsi"
	case 2:
		mnem = "fsrmi"
	default:
		return "", "", false
	}
	return mnem, riscvGPR[inst.Enc>>7&0x1f], true
}

// formatRISCV64 writes the objdump text of inst at pc to b: ABI register
// names, branch and jump targets as absolute addresses with their
// symbol, and the address a lui or auipc pair computes as a comment.
func formatRISCV64(b *textBuf, inst riscv64asm.Inst, pc uint64, sym Symbolizer, hi *riscvHi) {
	mnem, args := gnuOperands(riscv64asm.GNUSyntax(inst))
	// An alias that does not show the immediate (mv, li, sext.w, jr,
	// ret) gets no address comment, and leaves the register's upper bits
	// for a later use.
	immForm := true
	switch inst.Op {
	case riscv64asm.ADDI, riscv64asm.ADDIW:
		immForm = mnem == "addi" || mnem == "addiw"
	case riscv64asm.JALR:
		// objdump shows "jalr t1,t3" for the decoder's "jalr
		// x6,0(x28)": an offset of 0 is left out.
		if len(args) == 2 && strings.HasPrefix(args[1], "0(") && strings.HasSuffix(args[1], ")") {
			args[1] = args[1][2 : len(args[1])-1]
		}
		immForm = len(args) > 0 && strings.Contains(args[len(args)-1], "(")
	}
	if a, ok := riscvAlias[mnem]; ok {
		mnem = a
	}
	if m, rd, ok := riscvCSRImm(inst); ok && len(args) >= 2 {
		mnem, args = m, []string{rd, args[len(args)-1]}
	}
	b.WriteString(mnem)
	if len(args) == 0 {
		hi.written(inst, pc)
		return
	}
	if rm, ok := riscvRoundingMode(inst); ok {
		args = append(args, rm)
	}
	b.WriteByte('\t')
	rel, isRel := riscvBranchOffset(inst)
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		if isRel && i == len(args)-1 {
			t := pc + uint64(rel)
			if hi.rv32 {
				t = uint64(uint32(t))
			}
			target(b, t, sym)
			continue
		}
		if u, ok := inst.Args[1].(riscv64asm.Uimm); ok && i == 1 && inst.Op == riscv64asm.LUI {
			// The 20 bits of the immediate, also for a c.lui the
			// decoder gives sign-extended.
			b.WriteString("0x")
			b.WriteString(strconv.FormatUint(uint64(u.Imm&0xfffff), 16))
			continue
		}
		writeRISCVRegs(b, a)
	}
	if immForm {
		if addr, ok := hi.address(inst, pc); ok {
			b.WriteString(" # ")
			target(b, addr, sym)
		}
	}
	hi.written(inst, pc)
}

// riscvBranchOffset returns the PC-relative offset of a branch or jal.
func riscvBranchOffset(inst riscv64asm.Inst) (int64, bool) {
	switch inst.Op {
	case riscv64asm.BEQ, riscv64asm.BNE, riscv64asm.BLT, riscv64asm.BGE, riscv64asm.BLTU, riscv64asm.BGEU,
		riscv64asm.JAL, riscv64asm.C_BEQZ, riscv64asm.C_BNEZ, riscv64asm.C_J:
	default:
		return 0, false
	}
	for i := len(inst.Args) - 1; i >= 0; i-- {
		if s, ok := inst.Args[i].(riscv64asm.Simm); ok {
			return int64(s.Imm), true
		}
	}
	return 0, false
}

// writeRISCVRegs writes the operand a with the decoder's register names
// (x5, f10) replaced by their ABI names (t0, fa0).
func writeRISCVRegs(b *textBuf, a string) {
	for i := 0; i < len(a); {
		c := a[i]
		if (c == 'x' || c == 'f') && (i == 0 || !isWordByte(a[i-1])) {
			j := i + 1
			for j < len(a) && j < i+3 && a[j] >= '0' && a[j] <= '9' {
				j++
			}
			if j > i+1 && (j == len(a) || !isWordByte(a[j])) {
				n, _ := strconv.Atoi(a[i+1 : j])
				if n < 32 {
					if c == 'x' {
						b.WriteString(riscvGPR[n])
					} else {
						b.WriteString(riscvFPR[n])
					}
					i = j
					continue
				}
			}
		}
		b.WriteByte(c)
		i++
	}
}

// isWordByte reports whether c can be part of a name or number.
func isWordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// riscvRM names the rounding modes of the rm field.
var riscvRM = [8]string{"rne", "rtz", "rdn", "rup", "rmm", "", "", ""}

// riscvRoundingMode returns the rounding mode objdump prints as the last
// operand of a floating-point instruction whose rm field is not dyn (7),
// the mode the decoder's syntax leaves out.
func riscvRoundingMode(inst riscv64asm.Inst) (string, bool) {
	if inst.Len != 4 {
		return "", false
	}
	enc := inst.Enc
	switch enc & 0x7f {
	case 0x43, 0x47, 0x4b, 0x4f: // fmadd, fmsub, fnmsub, fnmadd
	case 0x53:
		switch enc >> 27 {
		case 0x00, 0x01, 0x02, 0x03, 0x0b, 0x08, 0x18, 0x1a: // fadd fsub fmul fdiv fsqrt fcvt
		default:
			return "", false
		}
		// Conversions that are always exact have no rounding mode:
		// fcvt.d.s, fcvt.d.w, fcvt.d.wu.
		if f7, rs2 := enc>>25, enc>>20&0x1f; f7 == 0x21 || f7 == 0x69 && rs2 <= 1 {
			return "", false
		}
	default:
		return "", false
	}
	rm := riscvRM[enc>>12&7]
	return rm, rm != ""
}

// address returns the address objdump prints after inst: the upper
// bits a lui or auipc left in the base register plus inst's immediate,
// or the immediate alone on x0 or tp.
func (h *riscvHi) address(inst riscv64asm.Inst, pc uint64) (uint64, bool) {
	var base riscv64asm.Reg
	var imm int64
	wide := false
	switch inst.Op {
	case riscv64asm.ADDI, riscv64asm.ADDIW:
		rs, ok1 := inst.Args[1].(riscv64asm.Reg)
		s, ok2 := inst.Args[2].(riscv64asm.Simm)
		if !ok1 || !ok2 || rs == riscv64asm.X0 {
			return 0, false
		}
		base, imm, wide = rs, int64(s.Imm), inst.Op == riscv64asm.ADDIW
	case riscv64asm.JALR,
		riscv64asm.LB, riscv64asm.LBU, riscv64asm.LH, riscv64asm.LHU, riscv64asm.LW, riscv64asm.LWU, riscv64asm.LD,
		riscv64asm.SB, riscv64asm.SH, riscv64asm.SW, riscv64asm.SD,
		riscv64asm.FLW, riscv64asm.FLD, riscv64asm.FSW, riscv64asm.FSD:
		if inst.Len != 4 {
			return 0, false // objdump does not follow the compressed forms
		}
		var ro riscv64asm.RegOffset
		found := false
		for _, a := range inst.Args {
			if r, ok := a.(riscv64asm.RegOffset); ok {
				ro, found = r, true
			}
		}
		if !found {
			return 0, false
		}
		base, imm = ro.OfsReg, int64(ro.Ofs.Imm)
	default:
		return 0, false
	}
	if base > riscv64asm.X31 {
		return 0, false
	}
	var addr uint64
	switch {
	case h.valid[base]:
		addr = h.val[base] + uint64(imm)
		h.valid[base] = false
	case base == riscv64asm.X0 || base == riscv64asm.X4:
		addr = uint64(imm)
	default:
		return 0, false
	}
	if wide {
		addr = uint64(int64(int32(addr)))
	}
	if h.rv32 {
		addr = uint64(uint32(addr))
	}
	return addr, true
}

// written records what inst leaves in its destination register: the
// upper bits a lui or auipc at pc sets.
func (h *riscvHi) written(inst riscv64asm.Inst, pc uint64) {
	rd, ok := inst.Args[0].(riscv64asm.Reg)
	if !ok || rd > riscv64asm.X31 {
		return
	}
	u, ok := inst.Args[1].(riscv64asm.Uimm)
	if !ok {
		return
	}
	v := uint64(int64(int32(u.Imm << 12)))
	switch inst.Op {
	case riscv64asm.LUI:
		h.val[rd], h.valid[rd] = v, true
	case riscv64asm.AUIPC:
		h.val[rd], h.valid[rd] = pc+v, true
	}
}
