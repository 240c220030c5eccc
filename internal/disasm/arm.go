package disasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/arch/arm/armasm"
)

// armDecode serializes armasm.Decode, which records the table entries it
// matched in an unguarded package variable: concurrent calls race.
var armDecode sync.Mutex

// decodeARM decodes 32-bit ARM code (the A32 instruction set, "ARM mode")
// at addr. Instructions are four bytes; a word that does not decode reads
// as objdump's undefined instruction, and a tail shorter than a word is
// BadText. Thumb code is not decoded here: callers tell it
// apart by the object's mapping symbols and the Thumb bit of function
// symbols (objtool does).
func decodeARM(code []byte, addr uint64, sym Symbolizer) []Inst {
	armDecode.Lock()
	defer armDecode.Unlock()
	return decodeWords(code, addr, func(b *textBuf, word []byte, pc uint64) string {
		if binary.LittleEndian.Uint32(word) == 0xe1a00000 {
			return "nop\t\t\t@ (mov r0, r0)" // objdump's name for it
		}
		inst, ok := decodeOneARM(word)
		if !ok {
			x := binary.LittleEndian.Uint32(word)
			if text, ok := vfpMultiple(x); ok {
				return text
			}
			if x>>28 != 15 {
				if text, ok := coprocessorTransfer(x, armCond[x>>28]); ok {
					return text
				}
				if text, ok := neonTransfer(x, armCond[x>>28]); ok {
					return text
				}
			} else if text, ok := neon(x, ""); ok {
				return text
			}
			if text, ok := coprocessorOp(x, armCond[min(x>>28, 14)], pc+8, sym); ok {
				return text
			}
			if x&0xfff000f0 == 0xe7f000f0 { // the permanently undefined instruction
				imm := x>>4&0xfff0 | x&0xf
				return "udf\t#" + strconv.Itoa(int(imm)) + armValueComment(int64(imm))
			}
			return armWord(word) + armIMB(x)
		}
		return safeFormat(b, func() {
			formatARM(b, inst, pc, sym)
			if armUnpredictable(binary.LittleEndian.Uint32(word)) {
				b.WriteString("\t@ <UNPREDICTABLE>")
			}
		})
	})
}

// armUnpredictable reports whether objdump flags the ARM instruction x
// as unpredictable, for the classes it does where armasm does not: a
// data-processing instruction whose shift amount is a register with pc as
// its destination or first operand, and a multiply with pc as an operand
// (data in Go's text decodes so).
func armUnpredictable(x uint32) bool {
	rd, rn, rs, rm := x>>12&15, x>>16&15, x>>8&15, x&15
	switch {
	case x>>28 == 15:
		return false
	case x&0x0e000090 == 0x00000010 && x&0x01900000 != 0x01000000:
		// Data processing, register-shifted register (not the
		// miscellaneous instructions, whose opcode is 10xx with S 0).
		// objdump flags pc as rd or rn (not as rm or rs).
		compare := x>>21&0xc == 8 // tst, teq, cmp, cmn: no rd
		return rn == 15 || rd == 15 && !compare
	case x&0x0fc000f0 == 0x00000090:
		// mul and mla: rd in bits 19:16, rn (mla's addend) in 15:12.
		mla := x&(1<<21) != 0
		return rn == 15 || rm == 15 || rs == 15 || mla && rd == 15
	}
	return false
}

// Data returns the words of a data region of 32-bit ARM code (a literal
// pool, which the object's $d mapping symbols mark) as objdump prints
// them: one ".word 0x%08x" each, in byte order bo, a shorter tail as
// ".short" and ".byte".
func Data(code []byte, addr uint64, bo binary.ByteOrder) []Inst {
	if bo == nil {
		bo = binary.LittleEndian
	}
	insts := make([]Inst, 0, len(code)/4+2)
	off := 0
	for ; off+4 <= len(code); off += 4 {
		insts = append(insts, Inst{Addr: addr + uint64(off), Len: 4, Text: fmt.Sprintf(".word\t0x%08x", bo.Uint32(code[off:]))})
	}
	if off+2 <= len(code) {
		insts = append(insts, Inst{Addr: addr + uint64(off), Len: 2, Text: fmt.Sprintf(".short\t0x%04x", bo.Uint16(code[off:]))})
		off += 2
	}
	if off < len(code) {
		insts = append(insts, Inst{Addr: addr + uint64(off), Len: 1, Text: fmt.Sprintf(".byte\t0x%02x", code[off])})
	}
	return insts
}

// armWord is the text of a word that does not decode, objdump's for an
// undefined instruction (which it also prints for the few coprocessor
// and system instructions armasm does not decode).
func armWord(b []byte) string {
	return fmt.Sprintf("@ <UNDEFINED> instruction: 0x%08x", binary.LittleEndian.Uint32(b))
}

// decodeOneARM decodes the word src; ok is false for a word that does not
// decode (a decoder panic included). The caller holds armDecode.
func decodeOneARM(src []byte) (inst armasm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := armasm.Decode(src, armasm.ModeARM)
	if err != nil {
		inst, err = decodeSTRHighIndex(src)
	}
	if err != nil || inst.Op == 0 || inst.Len != 4 {
		return armasm.Inst{}, false
	}
	return inst, true
}

// decodeSTRHighIndex decodes a word store with a register offset whose
// index register is r8 to r15 (str ip, [r9, lr, lsl #2]), which armasm
// (v0.33) rejects while it decodes the same store with r0 to r7 and the
// loads with any: it decodes the word with the index's top bit clear and
// puts the index back.
func decodeSTRHighIndex(src []byte) (armasm.Inst, error) {
	x := binary.LittleEndian.Uint32(src)
	const mask, str = 0x0e500010, 0x06000000 // 011P U0W0 .... .... ....  ...0 ....: STR (register)
	if x>>28 == 0xf || x&mask != str || x&8 == 0 {
		return armasm.Inst{}, errNotSTR
	}
	var low [4]byte
	binary.LittleEndian.PutUint32(low[:], x&^8)
	inst, err := armasm.Decode(low[:], armasm.ModeARM)
	if err != nil {
		return inst, err
	}
	for i, a := range inst.Args {
		if m, ok := a.(armasm.Mem); ok && m.Sign != 0 && m.Index == armasm.Reg(x&7) {
			m.Index = armasm.Reg(x & 15)
			inst.Args[i] = m
			inst.Enc = x
			return inst, nil
		}
	}
	return armasm.Inst{}, errNotSTR
}

var errNotSTR = errors.New("not a store with a register offset")

// formatARM writes the objdump text of inst at pc to b: the decoder's GNU
// syntax, a tab after the mnemonic, branch targets as addresses with
// their symbols ("bl 9e734 <runtime.morestack>"; the pc reads 8 bytes
// ahead), barrier options by name, and objdump's comments: the target of
// a pc-relative load, the hex of an immediate or offset above 32 or below
// -16 (binutils' arm-dis.c rule), the one-register form of push and pop.
func formatARM(b *textBuf, inst armasm.Inst, pc uint64, sym Symbolizer) {
	mnem, ops, _ := strings.Cut(armasm.GNUSyntax(inst), " ")
	mnem = armMultipleName(mnem, inst.Enc)
	b.WriteString(mnem)
	if inst.Op&^15 == armasm.NOP_EQ {
		ops = "{0}" // the hint's number
	}
	if ops == "" {
		return
	}
	b.WriteByte('\t')
	switch {
	case inst.Op == armasm.DMB || inst.Op == armasm.DSB:
		if o, ok := inst.Args[0].(armasm.Imm); ok && int(o) < len(armBarrier) && armBarrier[o] != "" {
			ops = armBarrier[o]
		}
	case inst.Op&^15 == armasm.VMRS_EQ:
		ops = strings.Replace(ops, "apsr_nzcv", "APSR_nzcv", 1)
	}
	for _, a := range inst.Args {
		if rel, ok := a.(armasm.PCRel); ok {
			// GNUSyntax prints the target as ".+0x10".
			args := strings.Split(ops, ", ")
			for k, s := range args {
				if strings.HasPrefix(s, ".") {
					var tb textBuf
					target(&tb, uint64(uint32(pc)+8+uint32(rel)), sym)
					args[k] = tb.String()
				}
			}
			b.WriteString(strings.Join(args, ", "))
			return
		}
	}
	b.WriteString(ops)
	for _, a := range inst.Args {
		var v int64
		switch a := a.(type) {
		case armasm.Mem:
			if a.Sign != 0 {
				continue // a register offset
			}
			if a.Base == armasm.PC && a.Mode == armasm.AddrOffset {
				b.WriteString("\t@ ")
				target(b, uint64(uint32(pc)+8+uint32(int32(a.Offset))), sym)
				return
			}
			v = int64(a.Offset)
		case armasm.Imm:
			switch op := inst.Op &^ 15; {
			case op == armasm.SVC_EQ || op == armasm.BKPT_EQ || strings.HasPrefix(mnem, "v"):
				// objdump comments neither a call number nor a VFP
				// immediate's encoding (for vmov it shows the value),
				// and compares with zero as "#0.0".
				if strings.HasPrefix(mnem, "vcmp") && strings.HasSuffix(ops, ", #0") {
					b.WriteString(".0")
				}
				if inst.Op&^15 == armasm.VMOV_EQ_F32 || inst.Op&^15 == armasm.VMOV_EQ_F64 {
					vfpImmComment(b, inst.Enc>>12&0xf0|inst.Enc&0xf)
				}
				if op == armasm.SVC_EQ {
					b.WriteString(armIMB(inst.Enc))
				}
				return
			case op == armasm.MOVW_EQ || op == armasm.MOVT_EQ:
				v = int64(uint32(a))
			default:
				v = int64(int32(a))
			}
		case armasm.ImmAlt:
			v = int64(uint32(a.Imm())) // "#228, 20": the rotated value
		case armasm.RegList:
			if bits.OnesCount16(uint16(a)) == 1 && (strings.HasPrefix(mnem, "push") || strings.HasPrefix(mnem, "pop")) {
				// One register, which the instruction moves as a
				// str or ldr would; with its condition ("popeq {pc}
				// @ (ldreq pc, [sp], #4)").
				r := strings.Trim(ops, "{}")
				if c, ok := strings.CutPrefix(mnem, "push"); ok {
					b.WriteString("\t@ (str" + c + " " + r + ", [sp, #-4]!)")
				} else {
					b.WriteString("\t@ (ldr" + strings.TrimPrefix(mnem, "pop") + " " + r + ", [sp], #4)")
				}
				return
			}
			continue
		default:
			continue
		}
		b.WriteString(armValueComment(v))
		return
	}
}

// armMultipleName returns objdump's mnemonic for a load or store
// multiple of the word x, which armasm names mnem (with its condition):
// "stmia" for an increment-after store with writeback or user registers
// (objdump says "stm" only without either), "ldmfd"/"stmfd" for a pop or
// push of one register (which a single ldr or str encodes
// canonically). Other instructions keep mnem.
func armMultipleName(mnem string, x uint32) string {
	switch {
	case x&0x0f900000 == 0x08800000 && x&0x00600000 != 0:
		// STMIA (P 0, U 1, L 0) with writeback (W) or user registers (S).
		if c, ok := strings.CutPrefix(mnem, "stm"); ok && !strings.HasPrefix(c, "i") && !strings.HasPrefix(c, "d") {
			return "stmia" + c
		}
	case x&0x0fff0000 == 0x08bd0000 && bits.OnesCount32(x&0xffff) == 1:
		if c, ok := strings.CutPrefix(mnem, "ldm"); ok {
			return "ldmfd" + c
		}
	case x&0x0fff0000 == 0x092d0000 && bits.OnesCount32(x&0xffff) == 1:
		if c, ok := strings.CutPrefix(mnem, "stmdb"); ok {
			return "stmfd" + c
		}
	}
	return mnem
}

// armIMB is the comment objdump adds after the words of ARM Linux's
// instruction memory barrier calls, svc 0x00f00000 ("IMB") and
// 0x00f00001 ("IMBRange"), also where the condition makes them
// undefined; "" for other words.
func armIMB(x uint32) string {
	switch x & 0x0fffffff {
	case 0x0ff00000:
		return " @ IMB"
	case 0x0ff00001:
		return " @ IMBRange"
	}
	return ""
}

// armValueComment is the comment objdump adds after a 32-bit ARM
// instruction (ARM or Thumb) with an immediate or offset v above 32 or
// below -16 (binutils' arm-dis.c rule): "\t@ 0x" and v's 32 bits in hex;
// "" for others.
func armValueComment(v int64) string {
	if v > 32 || v < -16 {
		return "\t@ 0x" + strconv.FormatUint(uint64(uint32(v)), 16)
	}
	return ""
}

// vfpImmComment writes objdump's comment on the 8-bit immediate imm8 of
// a VFP vmov: the single-precision bits VFPExpandImm makes of it (for
// vmov.f64 too) and the value, with one decimal if it has at most one
// binary fraction digit, three if at most three, seven beyond:
// "@ 0x3f800000  1.0", "@ 0x40100000  2.250", "@ 0xbe080000 -0.1328125".
func vfpImmComment(b *textBuf, imm8 uint32) {
	bb := imm8 >> 6 & 1
	v := imm8>>7<<31 | (bb^1)<<30 | bb*0x1f<<25 | imm8>>4&3<<23 | imm8&15<<19
	f := math.Float32frombits(v)
	digits := 7
	switch {
	case f*2 == float32(int32(f*2)):
		digits = 1
	case f*8 == float32(int32(f*8)):
		digits = 3
	}
	sign := " "
	if f < 0 {
		sign, f = "-", -f
	}
	b.WriteString("\t@ 0x")
	b.WriteString(fmt.Sprintf("%08x %s%.*f", v, sign, digits, f))
}

// armBarrier names the options of dmb and dsb as objdump prints them.
var armBarrier = [16]string{1: "oshld", 2: "oshst", 3: "osh", 5: "nshld", 6: "nshst", 7: "nsh", 9: "ishld", 10: "ishst", 11: "ish", 13: "ld", 14: "st", 15: "sy"}

// armCond spells the condition field of an instruction as objdump
// suffixes it to the mnemonic ("" for always).
var armCond = [15]string{"eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", ""}

// vfpMultiple decodes the VFP loads and stores of several registers,
// which armasm (v0.33) does not: vldm and vstm in their increment-after
// and decrement-before forms, and vpush and vpop, the forms on sp with
// write-back that function prologues and epilogues use to save d8 to d15.
// The text is objdump's: "vpush {d8-d9}", "vldmia r1!, {s2}".
func vfpMultiple(x uint32) (string, bool) {
	cond := x >> 28
	if cond == 0xf || x&0x0e000e00 != 0x0c000a00 {
		return "", false // not cond 110P UDWL Rn Vd 101x imm8
	}
	p, u, w, load := x>>24&1, x>>23&1, x>>21&1, x>>20&1
	rn, imm8 := x>>16&15, x&0xff
	var mode string
	switch {
	case p == 0 && u == 1:
		mode = "ia"
	case p == 1 && u == 0 && w == 1:
		mode = "db"
	default:
		return "", false // vldr, vstr, or 64-bit transfers
	}
	var first, n uint32
	kind := "s"
	if x&0x100 != 0 {
		if imm8&1 != 0 {
			return "", false // fldmx and fstmx, deprecated
		}
		kind, first, n = "d", x>>18&16|x>>12&15, imm8/2
		if n > 16 || first+n > 32 {
			return "", false
		}
	} else {
		first, n = x>>12&15<<1|x>>22&1, imm8
		if first+n > 32 {
			return "", false
		}
	}
	if n == 0 || rn == 15 && w == 1 {
		return "", false
	}
	list := fmt.Sprintf("{%s%d}", kind, first)
	if n > 1 {
		list = fmt.Sprintf("{%s%d-%s%d}", kind, first, kind, first+n-1)
	}
	c := armCond[cond]
	switch {
	case rn == 13 && w == 1 && load == 0 && mode == "db":
		return "vpush" + c + "\t" + list, true
	case rn == 13 && w == 1 && load == 1 && mode == "ia":
		return "vpop" + c + "\t" + list, true
	}
	op := "vstm"
	if load == 1 {
		op = "vldm"
	}
	base := armRegName(rn)
	if w == 1 {
		base += "!"
	}
	return op + mode + c + "\t" + base + ", " + list, true
}

// armRegName is the name objdump gives core register r.
func armRegName(r uint32) string {
	switch r {
	case 10:
		return "sl"
	case 11:
		return "fp"
	case 12:
		return "ip"
	case 13:
		return "sp"
	case 14:
		return "lr"
	case 15:
		return "pc"
	}
	return "r" + strconv.Itoa(int(r))
}

// coprocessorTransfer decodes mrc and mcr, the moves between a core
// register and a coprocessor's (the thread pointer is read with mrc 15,
// 0, r0, cr13, cr0, {3}), in their ARM encoding x with condition
// suffix c ("" for always), as objdump prints them; armasm decodes
// neither. The VFP transfers (coprocessors 10 and 11) are not these.
func coprocessorTransfer(x uint32, c string) (string, bool) {
	if c == "al" {
		c = ""
	}
	cp := x >> 8 & 15
	if x&0x0fe00000 == 0x0c400000 {
		return coprocessorPair(x, c)
	}
	if x&0x0f000010 != 0x0e000010 || cp == 10 || cp == 11 {
		return "", false
	}
	name, rt := "mcr", r(x>>12)
	if x&(1<<20) != 0 {
		name = "mrc"
		if x>>12&15 == 15 {
			rt = "APSR_nzcv" // the flags, not pc
		}
	}
	return name + c + "\t" + strconv.Itoa(int(cp)) + ", " + strconv.Itoa(int(x>>21&7)) + ", " + rt +
		", cr" + strconv.Itoa(int(x>>16&15)) + ", cr" + strconv.Itoa(int(x&15)) + ", {" + strconv.Itoa(int(x>>5&7)) + "}", true
}

// coprocessorPair decodes the moves between two core registers and a
// coprocessor, ARM encoding x with condition suffix c: vmov of a
// doubleword or two singles (coprocessors 11 and 10), which armasm does
// not decode, and mcrr and mrrc of other coprocessors.
func coprocessorPair(x uint32, c string) (string, bool) {
	cp, toCore := x>>8&15, x&(1<<20) != 0
	rt, rt2, m := r(x>>12), r(x>>16), x&15
	if (cp == 10 || cp == 11) && x&0xd0 == 0x10 {
		var fp string
		if cp == 11 {
			fp = "d" + strconv.Itoa(int(x>>1&16|m))
		} else {
			n := m<<1 | x>>5&1
			if n == 31 {
				return "", false
			}
			fp = "s" + strconv.Itoa(int(n)) + ", s" + strconv.Itoa(int(n+1))
		}
		if toCore {
			return "vmov" + c + "\t" + rt + ", " + rt2 + ", " + fp, true
		}
		return "vmov" + c + "\t" + fp + ", " + rt + ", " + rt2, true
	}
	name := "mcrr"
	if toCore {
		name = "mrrc"
	}
	text := name + c + "\t" + strconv.Itoa(int(cp)) + ", " + strconv.Itoa(int(x>>4&15)) + ", " + rt + ", " + rt2 + ", cr" + strconv.Itoa(int(m))
	if x>>12&15 == 15 || x>>16&15 == 15 || toCore && x>>12&15 == x>>16&15 {
		text += "\t@ <UNPREDICTABLE>"
	}
	return text, true
}

// coprocessorOp decodes the generic coprocessor instructions objdump
// names for any coprocessor, in their ARM encoding x with condition
// suffix c: ldc and stc (the "l" forms too), cdp, and with condition 1111
// their "2" forms with mcr2, mrc2, mcrr2 and mrrc2. base is what a
// pc-relative ldc's offset counts from (the pc plus 8 in ARM code, the
// word-aligned pc plus 4 in Thumb code). VFP and Advanced SIMD, whose
// coprocessors are 10 and 11, are not these outside the "2" forms.
func coprocessorOp(x uint32, c string, base uint64, sym Symbolizer) (string, bool) {
	if c == "al" {
		c = ""
	}
	two := x>>28 == 15
	cp := x >> 8 & 15
	if !two && (cp == 10 || cp == 11) {
		return "", false
	}
	suffix := c
	if two {
		suffix = "2"
	}
	crd, n := strconv.Itoa(int(x>>12&15)), strconv.Itoa(int(cp))
	switch {
	case x&0x0f000010 == 0x0e000000:
		return "cdp" + suffix + "\t" + n + ", " + strconv.Itoa(int(x>>20&15)) + ", cr" + crd + ", cr" + strconv.Itoa(int(x>>16&15)) +
			", cr" + strconv.Itoa(int(x&15)) + ", {" + strconv.Itoa(int(x>>5&7)) + "}", true
	case two && x&0x0f000010 == 0x0e000010:
		name, rt := "mcr2", x>>12&15
		if x&(1<<20) != 0 {
			name = "mrc2"
		}
		text := name + "\t" + n + ", " + strconv.Itoa(int(x>>21&7)) + ", " + armRegName(rt) + ", cr" + strconv.Itoa(int(x>>16&15)) +
			", cr" + strconv.Itoa(int(x&15)) + ", {" + strconv.Itoa(int(x>>5&7)) + "}"
		if name == "mcr2" && rt == 15 {
			text += "\t@ <UNPREDICTABLE>"
		}
		return text, true
	case two && x&0x0fe00000 == 0x0c400000:
		text, ok := coprocessorPair(x&0x0fffffff|0xe0000000, "")
		if !ok {
			return "", false
		}
		mnem, ops, _ := strings.Cut(text, "\t")
		return mnem + "2\t" + ops, true
	case x&0x0e000000 == 0x0c000000:
		p, u, w := x>>24&1, x>>23&1, x>>21&1
		if p == 0 && u == 0 && w == 0 {
			return "", false // mcrr and mrrc, or undefined
		}
		name := "stc"
		if x&(1<<20) != 0 {
			name = "ldc"
		}
		if x&(1<<22) != 0 {
			suffix = "l" + suffix
			if two {
				suffix = "2l"
			}
		}
		rn := x >> 16 & 15
		off := int64(x&0xff) * 4
		if u == 0 {
			off = -off
		}
		var addr string
		var comment int64
		switch {
		case p == 1:
			addr = "[" + armRegName(rn)
			if off != 0 || u == 0 {
				addr += ", #" + strconv.FormatInt(off, 10)
			}
			addr += "]"
			if w == 1 {
				addr += "!"
			}
			comment = off
		case w == 1:
			addr = "[" + armRegName(rn) + "], #" + strconv.FormatInt(off, 10)
			comment = off
		default:
			addr = "[" + armRegName(rn) + "], {" + strconv.Itoa(int(x&0xff)) + "}"
			comment = int64(x & 0xff)
		}
		text := name + suffix + "\t" + n + ", cr" + crd + ", " + addr
		if rn == 15 && p == 1 && w == 0 {
			var t textBuf
			target(&t, uint64(int64(base)+off), sym)
			return text + "\t@ " + t.String(), true
		}
		return text + armValueComment(comment), true
	}
	return "", false
}
