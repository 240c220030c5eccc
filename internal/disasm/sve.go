package disasm

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// The Scalable Vector Extension (Armv8.2 SVE), which arm64asm does not
// decode: the instructions compilers vectorize loops into for SVE
// machines (clang and GCC with -march=armv8-a+sve or -mcpu=neoverse-v1,
// LLVM's JITs on such a host) and glibc's SVE string functions use. Each
// form is decoded as objdump 2.40 prints it, aliases included ("mov
// z1.s, s0" for dup z1.s, z0.s[0]); a word of the SVE space that no form
// below takes stays ".inst ... ; undefined". TestSVERandomAgainstObjdump
// holds every form to objdump on random words of its encoding. SVE2's
// forms are in sve2.go.

// An sveForm is one encoding of SVE instructions: the words w with
// w&mask == value, printed by text, which returns "" for a word the form
// does not allocate.
type sveForm struct {
	mask, value uint32
	text        func(w uint32) string
}

// sveARM64 writes objdump's text for an SVE instruction and reports
// whether word is one it decodes.
func sveARM64(b *textBuf, word uint32) bool {
	if word&0x1e000000 != 0x04000000 {
		return false // not SVE's part of the encoding space (op0 = 0010)
	}
	for _, forms := range [...][]sveForm{sveForms, sve2Forms} {
		for i := range forms {
			f := &forms[i]
			if word&f.mask == f.value {
				if s := f.text(word); s != "" {
					b.WriteString(s)
					return true
				}
			}
		}
	}
	return false
}

// sveShift decodes the tsz:imm3 field of a shift by immediate: the
// element size (tsz's highest bit; ok is false for tsz 0) and the right
// (2*esize - tsz:imm3) and left (tsz:imm3 - esize) shifts it encodes.
func sveShift(tsz, imm3 uint32) (size uint32, right, left int64, ok bool) {
	if tsz == 0 {
		return 0, 0, 0, false
	}
	size = uint32(bits.Len32(tsz)) - 1
	esize, v := int64(8)<<size, int64(tsz<<3|imm3)
	return size, 2*esize - v, v - esize, true
}

// zreg is a vector register with its element size: "z3.s".
func zreg(r, size uint32) string { return "z" + strconv.Itoa(int(r)) + "." + sveT(size) }

// sveT is the element suffix of size 0-3.
func sveT(size uint32) string { return [4]string{"b", "h", "s", "d"}[size&3] }

// preg is a predicate register: "p3".
func preg(r uint32) string { return "p" + strconv.Itoa(int(r)) }

// fpreg is the SIMD&FP scalar register of element size size: "s3".
func fpreg(r, size uint32) string {
	return [4]string{"b", "h", "s", "d"}[size&3] + strconv.Itoa(int(r))
}

// genreg is x or w register r (31: the zero register).
func genreg(r uint32, x bool) string {
	if x {
		return xreg(r)
	}
	return wreg(r)
}

// genregSP is x or w register r (31: the stack pointer).
func genregSP(r uint32, x bool) string {
	if x {
		return spreg(r)
	}
	if r == 31 {
		return "wsp"
	}
	return wreg(r)
}

// sveInst joins a mnemonic and its operands as objdump prints them.
func sveInst(mnem string, ops ...string) string {
	if len(ops) == 0 {
		return mnem
	}
	return mnem + "\t" + strings.Join(ops, ", ")
}

// svePatterns are the predicate constraint names (pattern 14-28 are
// printed as numbers).
var svePatterns = [32]string{
	0: "pow2", 1: "vl1", 2: "vl2", 3: "vl3", 4: "vl4", 5: "vl5", 6: "vl6", 7: "vl7", 8: "vl8",
	9: "vl16", 10: "vl32", 11: "vl64", 12: "vl128", 13: "vl256", 29: "mul4", 30: "mul3", 31: "all",
}

// svePattern is the name of pattern p.
func svePattern(p uint32) string {
	if s := svePatterns[p&31]; s != "" {
		return s
	}
	return imm(int64(p))
}

// countOps are the operands of an element count (cntb x0, all, mul #4):
// the pattern and multiplier, left out where they are the defaults.
func countOps(w uint32) []string {
	pat, mul := fld(w, 9, 5), fld(w, 19, 16)+1
	switch {
	case mul != 1:
		return []string{svePattern(pat), "mul " + imm(int64(mul))}
	case pat != 31:
		return []string{svePattern(pat)}
	}
	return nil
}

// fpImm8 is the floating-point value of an 8-bit FMOV immediate
// (VFPExpandImm), as objdump prints it: "#1.000000000000000000e+00".
func fpImm8(v uint32) string {
	sign := 1.0
	if v&0x80 != 0 {
		sign = -1
	}
	exp := int(v>>4&7) ^ 4 - 3 // B:NOT(b):b:b, less the bias: -3..4
	f := sign * (16 + float64(v&15)) / 16 * math.Pow(2, float64(exp))
	return "#" + strconv.FormatFloat(f, 'e', 18, 64)
}

// sveLogicalImm decodes the bitmask immediate imm13 of an SVE logical
// instruction: the element size objdump shows it at (8 to 64 bits; the
// 2- and 4-bit patterns are shown as bytes) and the element's value.
func sveLogicalImm(imm13 uint32) (size uint32, v uint64, ok bool) {
	n, immr, imms := imm13>>12, imm13>>6&63, imm13&63
	var esize uint
	switch {
	case n == 1:
		esize = 64
	case imms>>5 == 0:
		esize = 32
	case imms>>4 == 2:
		esize = 16
	case imms>>3 == 6:
		esize = 8
	case imms>>2 == 14:
		esize = 4
	case imms>>1 == 30:
		esize = 2
	default:
		return 0, 0, false
	}
	s, r := uint(imms)&(esize-1), uint(immr)&(esize-1)
	if s == esize-1 {
		return 0, 0, false // all ones: reserved
	}
	elem := uint64(1)<<(s+1) - 1
	if r != 0 {
		elem = (elem>>r | elem<<(esize-r)) & (uint64(1)<<esize - 1)
	}
	for esize < 8 {
		elem |= elem << esize
		esize *= 2
	}
	switch esize {
	case 8:
		return 0, elem, true
	case 16:
		return 1, elem, true
	case 32:
		return 2, elem, true
	}
	return 3, elem, true
}

// dupImmFits reports whether DUP (immediate) can write v, an element of
// size size (8 << size bits): a signed byte, shifted left by 8 or not.
// Then objdump prints DUPM as dupm, not as its alias mov (binutils'
// aarch64_sve_dupm_mov_immediate_p; its narrowing to a smaller element
// a value repeats in never applies here, as a logical immediate that
// repeats at a smaller size is encoded at that size).
func dupImmFits(v uint64, size uint32) bool {
	n := uint(8) << size
	e := int64(v<<(64-n)) >> (64 - n)
	if e&0xff == 0 {
		e /= 256
	}
	return e >= -128 && e <= 127
}

// zList is an SVE register list of n registers from r: "{z0.s}",
// "{z31.s, z0.s}", "{z0.d-z3.d}".
func zList(r, n, size uint32) string {
	if n > 2 && r+n-1 < 32 {
		return "{" + zreg(r, size) + "-" + zreg(r+n-1, size) + "}"
	}
	regs := make([]string, n)
	for i := range regs {
		regs[i] = zreg((r+uint32(i))%32, size)
	}
	return "{" + strings.Join(regs, ", ") + "}"
}

// mulVL is the address [xn, #imm, mul vl], or [xn] for imm 0.
func mulVL(rn uint32, off int64) string {
	if off == 0 {
		return "[" + spreg(rn) + "]"
	}
	return "[" + spreg(rn) + ", " + imm(off) + ", mul vl]"
}

// scaled is the address [xn, xm, lsl #shift] ([xn, xm] for bytes).
func scaled(rn, rm, shift uint32) string {
	if shift == 0 {
		return "[" + spreg(rn) + ", " + xreg(rm) + "]"
	}
	return "[" + spreg(rn) + ", " + xreg(rm) + ", lsl " + imm(int64(shift)) + "]"
}

// sveLoadTypes are the contiguous loads' dtype field: the mnemonic's
// suffix, the memory size (its shift) and the element size.
var sveLoadTypes = [16]struct {
	suffix     string
	msz, esize uint32
}{
	{"b", 0, 0}, {"b", 0, 1}, {"b", 0, 2}, {"b", 0, 3},
	{"sw", 2, 3}, {"h", 1, 1}, {"h", 1, 2}, {"h", 1, 3},
	{"sh", 1, 3}, {"sh", 1, 2}, {"w", 2, 2}, {"w", 2, 3},
	{"sb", 0, 3}, {"sb", 0, 2}, {"sb", 0, 1}, {"d", 3, 3},
}

// sveForms are the SVE encodings decoded, from the Arm Architecture
// Reference Manual's SVE encoding index.
var sveForms = []sveForm{
	// Integer add/subtract vectors, unpredicated.
	{0xff20e000, 0x04200000, func(w uint32) string {
		name := names([]string{"add", "sub", "", "", "sqadd", "uqadd", "sqsub", "uqsub"}, fld(w, 12, 10))
		if name == "" {
			return ""
		}
		size := fld(w, 23, 22)
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Bitwise logical vectors, unpredicated (mov: orr of one register).
	{0xff20fc00, 0x04203000, func(w uint32) string {
		opc, zd, zn, zm := fld(w, 23, 22), fld(w, 4, 0), fld(w, 9, 5), fld(w, 20, 16)
		if opc == 1 && zn == zm {
			return sveInst("mov", zreg(zd, 3), zreg(zn, 3))
		}
		return sveInst([]string{"and", "orr", "eor", "bic"}[opc], zreg(zd, 3), zreg(zn, 3), zreg(zm, 3))
	}},
	// Integer binary arithmetic, predicated.
	{0xff20e000, 0x04000000, func(w uint32) string {
		opc, size := fld(w, 20, 16), fld(w, 23, 22)
		name := names([]string{
			"add", "sub", "", "subr", "", "", "", "",
			"smax", "umax", "smin", "umin", "sabd", "uabd", "", "",
			"mul", "", "smulh", "umulh", "sdiv", "udiv", "sdivr", "udivr",
			"orr", "eor", "and", "bic",
		}, opc)
		if name == "" || opc >= 20 && opc < 24 && size < 2 {
			return ""
		}
		return predBinary(w, name, size)
	}},
	// Integer reductions, and predicated movprfx.
	{0xff20e000, 0x04002000, func(w uint32) string {
		opc, size, pg, zn := fld(w, 20, 16), fld(w, 23, 22), preg(fld(w, 12, 10)), fld(w, 9, 5)
		switch opc {
		case 0, 1:
			if opc == 0 && size == 3 {
				return ""
			}
			return sveInst([]string{"saddv", "uaddv"}[opc], fpreg(fld(w, 4, 0), 3), pg, zreg(zn, size))
		case 8, 9, 10, 11:
			return sveInst([]string{"smaxv", "umaxv", "sminv", "uminv"}[opc-8], fpreg(fld(w, 4, 0), size), pg, zreg(zn, size))
		case 24, 25, 26:
			return sveInst([]string{"orv", "eorv", "andv"}[opc-24], fpreg(fld(w, 4, 0), size), pg, zreg(zn, size))
		case 16, 17:
			return sveInst("movprfx", zreg(fld(w, 4, 0), size), pg+[]string{"/z", "/m"}[opc&1], zreg(zn, size))
		}
		return ""
	}},
	// Integer unary operations, predicated.
	{0xff30e000, 0x0410a000, func(w uint32) string {
		opc, size := fld(w, 19, 16), fld(w, 23, 22)
		name := names([]string{
			"sxtb", "uxtb", "sxth", "uxth", "sxtw", "uxtw", "abs", "neg",
			"cls", "clz", "cnt", "cnot", "fabs", "fneg", "not",
		}, opc)
		if name == "" || opc <= 1 && size == 0 || (opc == 2 || opc == 3) && size < 2 ||
			(opc == 4 || opc == 5) && size < 3 || (opc == 12 || opc == 13) && size == 0 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), size))
	}},
	// Integer multiply-add writing the addend: mla, mls.
	{0xff20c000, 0x04004000, func(w uint32) string {
		size, pg, d, n, m := fld(w, 23, 22), preg(fld(w, 12, 10))+"/m", fld(w, 4, 0), fld(w, 9, 5), fld(w, 20, 16)
		return sveInst([]string{"mla", "mls"}[w>>13&1], zreg(d, size), pg, zreg(n, size), zreg(m, size))
	}},
	// Integer multiply-add writing the multiplicand: mad, msb.
	{0xff20c000, 0x0400c000, func(w uint32) string {
		size, pg, d, a, m := fld(w, 23, 22), preg(fld(w, 12, 10))+"/m", fld(w, 4, 0), fld(w, 9, 5), fld(w, 20, 16)
		return sveInst([]string{"mad", "msb"}[w>>13&1], zreg(d, size), pg, zreg(m, size), zreg(a, size))
	}},
	// Shifts by immediate, unpredicated.
	{0xff20f000, 0x04209000, func(w uint32) string {
		opc := fld(w, 11, 10)
		size, sh, left, ok := sveShift(fld(w, 23, 22)<<2|fld(w, 20, 19), fld(w, 18, 16))
		if !ok || opc == 2 {
			return ""
		}
		if opc == 3 {
			sh = left
		}
		return sveInst([]string{"asr", "lsr", "", "lsl"}[opc], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), imm(sh))
	}},
	// Shifts by immediate, predicated.
	{0xff30e000, 0x04008000, func(w uint32) string {
		tsz := fld(w, 23, 22)<<2 | fld(w, 9, 8)
		opc := fld(w, 19, 16)
		// sqshl, uqshl, srshr, urshr, sqshlu: SVE2.
		name := names([]string{"asr", "lsr", "", "lsl", "asrd", "", "sqshl", "uqshl",
			"", "", "", "", "srshr", "urshr", "", "sqshlu"}, opc)
		size, sh, left, ok := sveShift(tsz, fld(w, 7, 5))
		if !ok || name == "" {
			return ""
		}
		if strings.HasPrefix(name, "lsl") || strings.HasPrefix(name[1:], "qshl") {
			sh = left
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst(name, zdn, preg(fld(w, 12, 10))+"/m", zdn, imm(sh))
	}},
	// Shifts by vector, predicated.
	{0xff38e000, 0x04108000, func(w uint32) string {
		name := names([]string{"asr", "lsr", "", "lsl", "asrr", "lsrr", "", "lslr"}, fld(w, 18, 16))
		if name == "" {
			return ""
		}
		size := fld(w, 23, 22)
		return predBinary(w, name, size)
	}},
	// Element count: cntb, cnth, cntw, cntd.
	{0xff30fc00, 0x0420e000, func(w uint32) string {
		return sveInst("cnt"+[]string{"b", "h", "w", "d"}[fld(w, 23, 22)], append([]string{xreg(fld(w, 4, 0))}, countOps(w)...)...)
	}},
	// Increment and decrement a register by an element count.
	{0xff30f800, 0x0430e000, func(w uint32) string {
		name := []string{"inc", "dec"}[w>>10&1] + []string{"b", "h", "w", "d"}[fld(w, 23, 22)]
		return sveInst(name, append([]string{xreg(fld(w, 4, 0))}, countOps(w)...)...)
	}},
	// Increment and decrement a vector by an element count.
	{0xff30f800, 0x0430c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"inc", "dec"}[w>>10&1] + []string{"b", "h", "w", "d"}[size]
		return sveInst(name, append([]string{zreg(fld(w, 4, 0), size)}, countOps(w)...)...)
	}},
	// addvl, addpl.
	{0xffa0f800, 0x04205000, func(w uint32) string {
		return sveInst([]string{"addvl", "addpl"}[w>>22&1], spreg(fld(w, 4, 0)), spreg(fld(w, 20, 16)), imm(sext(fld(w, 10, 5), 6)))
	}},
	// rdvl.
	{0xfffff800, 0x04bf5000, func(w uint32) string {
		return sveInst("rdvl", xreg(fld(w, 4, 0)), imm(sext(fld(w, 10, 5), 6)))
	}},
	// index.
	{0xff20f000, 0x04204000, func(w uint32) string {
		size := fld(w, 23, 22)
		x := size == 3
		base, step := imm(sext(fld(w, 9, 5), 5)), imm(sext(fld(w, 20, 16), 5))
		if w>>10&1 == 1 {
			base = genreg(fld(w, 9, 5), x)
		}
		if w>>11&1 == 1 {
			step = genreg(fld(w, 20, 16), x)
		}
		return sveInst("index", zreg(fld(w, 4, 0), size), base, step)
	}},
	// Unpredicated movprfx.
	{0xfffffc00, 0x0420bc00, func(w uint32) string {
		return sveInst("movprfx", "z"+strconv.Itoa(int(fld(w, 4, 0))), "z"+strconv.Itoa(int(fld(w, 9, 5))))
	}},
	// ptrue, ptrues.
	{0xff3efc10, 0x2518e000, func(w uint32) string {
		ops := []string{preg(fld(w, 3, 0)) + "." + sveT(fld(w, 23, 22))}
		if p := fld(w, 9, 5); p != 31 {
			ops = append(ops, svePattern(p))
		}
		return sveInst([]string{"ptrue", "ptrues"}[w>>16&1], ops...)
	}},
	// pfalse.
	{0xfffffff0, 0x2518e400, func(w uint32) string { return sveInst("pfalse", preg(fld(w, 3, 0))+".b") }},
	// ptest.
	{0xffffc21f, 0x2550c000, func(w uint32) string {
		return sveInst("ptest", preg(fld(w, 13, 10)), preg(fld(w, 8, 5))+".b")
	}},
	// while: whilelt, whilele, whilelo, whilels (and SVE2's whilege,
	// whilegt, whilehs, whilehi).
	{0xff20e000, 0x25200000, func(w uint32) string {
		name := "while" + []string{"ge", "gt", "lt", "le", "hs", "hi", "lo", "ls"}[w>>11&1<<2|w>>10&1<<1|w>>4&1]
		x := w>>12&1 == 1
		return sveInst(name, preg(fld(w, 3, 0))+"."+sveT(fld(w, 23, 22)), genreg(fld(w, 9, 5), x), genreg(fld(w, 20, 16), x))
	}},
	// dup (immediate): mov.
	{0xff3fc000, 0x2538c000, func(w uint32) string {
		size, sh := fld(w, 23, 22), w>>13&1
		if size == 0 && sh == 1 {
			return ""
		}
		return sveInst("mov", zreg(fld(w, 4, 0), size), shiftedImm(fld(w, 12, 5), sh, true))
	}},
	// fdup: fmov.
	{0xff3fe000, 0x2539c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst("fmov", zreg(fld(w, 4, 0), size), fpImm8(fld(w, 12, 5)))
	}},
	// dup (scalar): mov.
	{0xff3ffc00, 0x05203800, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("mov", zreg(fld(w, 4, 0), size), genregSP(fld(w, 9, 5), size == 3))
	}},
	// dup (indexed): mov.
	{0xff20fc00, 0x05202000, func(w uint32) string {
		tsz := fld(w, 20, 16)
		if tsz == 0 {
			return ""
		}
		size := uint32(0)
		for tsz>>size&1 == 0 {
			size++
		}
		idx := (fld(w, 23, 22)<<5 | tsz) >> (size + 1)
		zd, zn := fld(w, 4, 0), fld(w, 9, 5)
		t := []string{"b", "h", "s", "d", "q"}[size]
		if idx == 0 {
			return sveInst("mov", "z"+strconv.Itoa(int(zd))+"."+t, t+strconv.Itoa(int(zn)))
		}
		return sveInst("mov", "z"+strconv.Itoa(int(zd))+"."+t, fmt.Sprintf("z%d.%s[%d]", zn, t, idx))
	}},
	// cpy (scalar), predicated: mov.
	{0xff3fe000, 0x0528a000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("mov", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", genregSP(fld(w, 9, 5), size == 3))
	}},
	// cpy (SIMD&FP scalar), predicated: mov.
	{0xff3fe000, 0x05208000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("mov", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", fpreg(fld(w, 9, 5), size))
	}},
	// cpy (immediate), predicated: mov.
	{0xff308000, 0x05100000, func(w uint32) string {
		size, sh := fld(w, 23, 22), w>>13&1
		if size == 0 && sh == 1 {
			return ""
		}
		return sveInst("mov", zreg(fld(w, 4, 0), size), preg(fld(w, 19, 16))+[]string{"/z", "/m"}[w>>14&1], shiftedImm(fld(w, 12, 5), sh, true))
	}},
	// fcpy, predicated: fmov.
	{0xff30e000, 0x0510c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst("fmov", zreg(fld(w, 4, 0), size), preg(fld(w, 19, 16))+"/m", fpImm8(fld(w, 12, 5)))
	}},
	// Integer add/subtract immediate, unpredicated.
	{0xff38c000, 0x2520c000, func(w uint32) string {
		name := names([]string{"add", "sub", "", "subr", "sqadd", "uqadd", "sqsub", "uqsub"}, fld(w, 18, 16))
		size, sh := fld(w, 23, 22), w>>13&1
		if name == "" || size == 0 && sh == 1 {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst(name, zdn, zdn, shiftedImm(fld(w, 12, 5), sh, false))
	}},
	// Integer min/max immediate, unpredicated.
	{0xff38e000, 0x2528c000, func(w uint32) string {
		opc := fld(w, 18, 16)
		if opc > 3 {
			return ""
		}
		v := int64(fld(w, 12, 5))
		if opc&1 == 0 {
			v = sext(fld(w, 12, 5), 8)
		}
		zdn := zreg(fld(w, 4, 0), fld(w, 23, 22))
		return sveInst([]string{"smax", "umax", "smin", "umin"}[opc], zdn, zdn, imm(v))
	}},
	// Integer multiply immediate, unpredicated.
	{0xff3fe000, 0x2530c000, func(w uint32) string {
		zdn := zreg(fld(w, 4, 0), fld(w, 23, 22))
		return sveInst("mul", zdn, zdn, imm(sext(fld(w, 12, 5), 8)))
	}},
	// Bitwise logical with immediate (dupm: mov where dup cannot).
	{0xff3c0000, 0x05000000, func(w uint32) string {
		size, v, ok := sveLogicalImm(fld(w, 17, 5))
		if !ok {
			return ""
		}
		opc, zdn := fld(w, 23, 22), zreg(fld(w, 4, 0), size)
		hex := "#0x" + strconv.FormatUint(v, 16)
		if opc == 3 {
			if dupImmFits(v, size) {
				return sveInst("dupm", zdn, hex)
			}
			return sveInst("mov", zdn, hex)
		}
		return sveInst([]string{"orr", "eor", "and"}[opc], zdn, zdn, hex)
	}},
	// Floating-point arithmetic, unpredicated.
	{0xff20e000, 0x65000000, func(w uint32) string {
		name := names([]string{"fadd", "fsub", "fmul", "ftsmul", "", "", "frecps", "frsqrts"}, fld(w, 12, 10))
		size := fld(w, 23, 22)
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Floating-point arithmetic, predicated.
	{0xff30e000, 0x65008000, func(w uint32) string {
		name := names([]string{"fadd", "fsub", "fmul", "fsubr", "fmaxnm", "fminnm", "fmax", "fmin",
			"fabd", "fscale", "fmulx", "", "fdivr", "fdiv"}, fld(w, 19, 16))
		size := fld(w, 23, 22)
		if name == "" || size == 0 {
			return ""
		}
		return predBinary(w, name, size)
	}},
	// Floating-point arithmetic with immediate, predicated.
	{0xff38e3c0, 0x65188000, func(w uint32) string {
		opc, size, i1 := fld(w, 18, 16), fld(w, 23, 22), w>>5&1
		if size == 0 {
			return ""
		}
		name := []string{"fadd", "fsub", "fmul", "fsubr", "fmaxnm", "fminnm", "fmax", "fmin"}[opc]
		v := [2]string{"#0.5", "#1.0"} // fadd, fsub, fsubr
		switch {
		case opc == 2:
			v = [2]string{"#0.5", "#2.0"}
		case opc >= 4:
			v = [2]string{"#0.0", "#1.0"}
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst(name, zdn, preg(fld(w, 12, 10))+"/m", zdn, v[i1])
	}},
	// Floating-point multiply-add: fmla, fmls, fnmla, fnmls (Zda) and
	// fmad, fmsb, fnmad, fnmsb (Zdn).
	{0xff200000, 0x65200000, func(w uint32) string {
		size, pg, d, n, m := fld(w, 23, 22), preg(fld(w, 12, 10))+"/m", fld(w, 4, 0), fld(w, 9, 5), fld(w, 20, 16)
		if size == 0 {
			return ""
		}
		opc := fld(w, 14, 13)
		if w>>15&1 == 0 {
			return sveInst([]string{"fmla", "fmls", "fnmla", "fnmls"}[opc], zreg(d, size), pg, zreg(n, size), zreg(m, size))
		}
		return sveInst([]string{"fmad", "fmsb", "fnmad", "fnmsb"}[opc], zreg(d, size), pg, zreg(n, size), zreg(m, size))
	}},
	// Floating-point conversions and rounding, predicated.
	{0xff00e000, 0x6500a000, func(w uint32) string {
		op := fld(w, 23, 16)
		var name string
		var dst, src uint32
		switch {
		case op&0xc0 != 0 && op&0x38 == 0: // frint*, size in 23:22
			name = names([]string{"frintn", "frintp", "frintm", "frintz", "frinta", "", "frintx", "frinti"}, op&7)
			dst, src = op>>6, op>>6
		case op&0xc0 != 0 && op&0x3e == 0x0c: // frecpx, fsqrt
			name = []string{"frecpx", "fsqrt"}[op&1]
			dst, src = op>>6, op>>6
		default:
			cvt, ok := sveConvs[op]
			if !ok {
				return ""
			}
			name, dst, src = cvt.name, cvt.dst, cvt.src
		}
		if name == "" {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), dst), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), src))
	}},
	// Floating-point compare vectors.
	{0xff204000, 0x65004000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := []string{"fcmge", "fcmgt", "fcmeq", "fcmne", "fcmuo", "facge", "", "facgt"}[w>>15&1<<2|w>>13&1<<1|w>>4&1]
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, preg(fld(w, 3, 0))+"."+sveT(size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Floating-point compare with zero.
	{0xff3ce000, 0x65102000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"fcmge", "fcmgt", "fcmlt", "fcmle", "fcmeq", "", "fcmne"}, fld(w, 17, 16)<<1|w>>4&1)
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, preg(fld(w, 3, 0))+"."+sveT(size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), "#0.0")
	}},
	// Floating-point reductions: faddv, fmaxnmv, fminnmv, fmaxv, fminv.
	{0xff38e000, 0x65002000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"faddv", "", "", "", "fmaxnmv", "fminnmv", "fmaxv", "fminv"}, fld(w, 18, 16))
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, fpreg(fld(w, 4, 0), size), preg(fld(w, 12, 10)), zreg(fld(w, 9, 5), size))
	}},
	// fadda, the ordered sum.
	{0xff3fe000, 0x65182000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		vd := fpreg(fld(w, 4, 0), size)
		return sveInst("fadda", vd, preg(fld(w, 12, 10)), vd, zreg(fld(w, 9, 5), size))
	}},
	// Integer compare vectors.
	{0xff200000, 0x24000000, func(w uint32) string {
		size, op := fld(w, 23, 22), fld(w, 15, 13)
		name := "cmp" + []string{"hs", "hi", "eq", "ne", "ge", "gt", "lt", "le", "ge", "gt", "eq", "ne", "hs", "hi", "lo", "ls"}[op<<1|w>>4&1]
		msize := size
		if op != 0 && op != 4 && op != 5 { // wide: the second operand has .d elements
			if size == 3 {
				return ""
			}
			msize = 3
		}
		return sveInst(name, preg(fld(w, 3, 0))+"."+sveT(size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), msize))
	}},
	// Integer compare with signed immediate.
	{0xff204000, 0x25000000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"ge", "gt", "lt", "le", "eq", "ne"}, w>>15&1<<2|w>>13&1<<1|w>>4&1)
		if name == "" {
			return ""
		}
		return sveInst("cmp"+name, preg(fld(w, 3, 0))+"."+sveT(size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), imm(sext(fld(w, 20, 16), 5)))
	}},
	// Integer compare with unsigned immediate.
	{0xff200000, 0x24200000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := "cmp" + []string{"hs", "hi", "lo", "ls"}[w>>13&1<<1|w>>4&1]
		return sveInst(name, preg(fld(w, 3, 0))+"."+sveT(size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), imm(int64(fld(w, 20, 14))))
	}},
	// sel (mov when the destination is the second source).
	{0xff20c000, 0x0520c000, func(w uint32) string {
		size, zd, zn, zm := fld(w, 23, 22), fld(w, 4, 0), fld(w, 9, 5), fld(w, 20, 16)
		pg := preg(fld(w, 13, 10))
		if zd == zm {
			return sveInst("mov", zreg(zd, size), pg+"/m", zreg(zn, size))
		}
		return sveInst("sel", zreg(zd, size), pg, zreg(zn, size), zreg(zm, size))
	}},
	// Contiguous loads, scalar plus immediate: ld1*, ldnf1*.
	{0xfe00e000, 0xa400a000, func(w uint32) string {
		t := sveLoadTypes[fld(w, 24, 21)]
		name := []string{"ld1", "ldnf1"}[w>>20&1] + t.suffix
		return sveInst(name, zList(fld(w, 4, 0), 1, t.esize), preg(fld(w, 12, 10))+"/z", mulVL(fld(w, 9, 5), sext(fld(w, 19, 16), 4)))
	}},
	// Contiguous loads, scalar plus scalar: ld1*, ldff1*.
	{0xfe00c000, 0xa4004000, func(w uint32) string {
		t := sveLoadTypes[fld(w, 24, 21)]
		rm := fld(w, 20, 16)
		name := []string{"ld1", "ldff1"}[w>>13&1] + t.suffix
		if name[2] == '1' && rm == 31 {
			return ""
		}
		return sveInst(name, zList(fld(w, 4, 0), 1, t.esize), preg(fld(w, 12, 10))+"/z", scaled(fld(w, 9, 5), rm, t.msz))
	}},
	// Contiguous non-temporal and multi-register loads, scalar plus
	// immediate: ldnt1*, ld2*, ld3*, ld4*.
	{0xfe10e000, 0xa400e000, func(w uint32) string {
		msz, num := fld(w, 24, 23), fld(w, 22, 21)
		return sveInst(structName("ld", num, msz), zList(fld(w, 4, 0), num+1, msz), preg(fld(w, 12, 10))+"/z", mulVL(fld(w, 9, 5), sext(fld(w, 19, 16), 4)*int64(num+1)))
	}},
	// Contiguous non-temporal and multi-register loads, scalar plus
	// scalar.
	{0xfe00e000, 0xa400c000, func(w uint32) string {
		msz, num, rm := fld(w, 24, 23), fld(w, 22, 21), fld(w, 20, 16)
		if rm == 31 {
			return ""
		}
		return sveInst(structName("ld", num, msz), zList(fld(w, 4, 0), num+1, msz), preg(fld(w, 12, 10))+"/z", scaled(fld(w, 9, 5), rm, msz))
	}},
	// Contiguous stores, scalar plus immediate: st1*.
	{0xfe10e000, 0xe400e000, func(w uint32) string {
		msz, size := fld(w, 24, 23), fld(w, 22, 21)
		if size < msz {
			return ""
		}
		return sveInst("st1"+[]string{"b", "h", "w", "d"}[msz], zList(fld(w, 4, 0), 1, size), preg(fld(w, 12, 10)), mulVL(fld(w, 9, 5), sext(fld(w, 19, 16), 4)))
	}},
	// Contiguous stores, scalar plus scalar: st1*.
	{0xfe00e000, 0xe4004000, func(w uint32) string {
		msz, size, rm := fld(w, 24, 23), fld(w, 22, 21), fld(w, 20, 16)
		if size < msz || rm == 31 {
			return ""
		}
		return sveInst("st1"+[]string{"b", "h", "w", "d"}[msz], zList(fld(w, 4, 0), 1, size), preg(fld(w, 12, 10)), scaled(fld(w, 9, 5), rm, msz))
	}},
	// Contiguous non-temporal and multi-register stores, scalar plus
	// immediate: stnt1*, st2*, st3*, st4*.
	{0xfe10e000, 0xe410e000, func(w uint32) string {
		msz, num := fld(w, 24, 23), fld(w, 22, 21)
		return sveInst(structName("st", num, msz), zList(fld(w, 4, 0), num+1, msz), preg(fld(w, 12, 10)), mulVL(fld(w, 9, 5), sext(fld(w, 19, 16), 4)*int64(num+1)))
	}},
	// Contiguous non-temporal and multi-register stores, scalar plus
	// scalar.
	{0xfe00e000, 0xe4006000, func(w uint32) string {
		msz, num, rm := fld(w, 24, 23), fld(w, 22, 21), fld(w, 20, 16)
		if rm == 31 {
			return ""
		}
		return sveInst(structName("st", num, msz), zList(fld(w, 4, 0), num+1, msz), preg(fld(w, 12, 10)), scaled(fld(w, 9, 5), rm, msz))
	}},
	// Predicate logical operations (mov, movs, not, nots: their aliases).
	{0xff30c000, 0x25004000, func(w uint32) string {
		op, sflag, o2, o3 := w>>23&1, w>>22&1, w>>9&1, w>>4&1
		pd, pg, pn, pm := fld(w, 3, 0), fld(w, 13, 10), fld(w, 8, 5), fld(w, 19, 16)
		name := [2][4]string{{"and", "bic", "eor", "sel"}, {"orr", "orn", "nor", "nand"}}[op][o2<<1|o3]
		if name == "sel" && sflag == 1 {
			return ""
		}
		s := ""
		if sflag == 1 {
			s = "s"
		}
		b := func(r uint32) string { return preg(r) + ".b" }
		switch {
		case name == "and" && pn == pm:
			return sveInst("mov"+s, b(pd), preg(pg)+"/z", b(pn))
		case name == "orr" && pn == pm && pn == pg:
			return sveInst("mov"+s, b(pd), b(pn))
		case name == "eor" && pm == pg:
			return sveInst("not"+s, b(pd), preg(pg)+"/z", b(pn))
		case name == "sel" && pd == pm:
			return sveInst("mov", b(pd), preg(pg)+"/m", b(pn))
		case name == "sel":
			return sveInst(name, b(pd), preg(pg), b(pn), b(pm))
		}
		return sveInst(name+s, b(pd), preg(pg)+"/z", b(pn), b(pm))
	}},
	// brka, brkb (and brkas, brkbs).
	{0xff3fc200, 0x25104000, func(w uint32) string {
		sflag, m := w>>22&1, w>>4&1
		if sflag == 1 && m == 1 {
			return ""
		}
		name := []string{"brka", "brkb"}[w>>23&1] + []string{"", "s"}[sflag]
		return sveInst(name, preg(fld(w, 3, 0))+".b", preg(fld(w, 13, 10))+[]string{"/z", "/m"}[m], preg(fld(w, 8, 5))+".b")
	}},
	// brkn, brkns.
	{0xffbfc210, 0x25184000, func(w uint32) string {
		pdm := preg(fld(w, 3, 0)) + ".b"
		return sveInst([]string{"brkn", "brkns"}[w>>22&1], pdm, preg(fld(w, 13, 10))+"/z", preg(fld(w, 8, 5))+".b", pdm)
	}},
	// brkpa, brkpb (and brkpas, brkpbs).
	{0xff30c200, 0x2500c000, func(w uint32) string {
		if w>>23&1 == 1 {
			return ""
		}
		name := []string{"brkpa", "brkpb"}[w>>4&1] + []string{"", "s"}[w>>22&1]
		return sveInst(name, preg(fld(w, 3, 0))+".b", preg(fld(w, 13, 10))+"/z", preg(fld(w, 8, 5))+".b", preg(fld(w, 19, 16))+".b")
	}},
	// cntp.
	{0xff3fc200, 0x25208000, func(w uint32) string {
		return sveInst("cntp", xreg(fld(w, 4, 0)), preg(fld(w, 13, 10)), preg(fld(w, 8, 5))+"."+sveT(fld(w, 23, 22)))
	}},
	// incp, decp of a register.
	{0xff3efe00, 0x252c8800, func(w uint32) string {
		return sveInst([]string{"incp", "decp"}[w>>16&1], xreg(fld(w, 4, 0)), preg(fld(w, 8, 5))+"."+sveT(fld(w, 23, 22)))
	}},
	// incp, decp of a vector.
	{0xff3efe00, 0x252c8000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst([]string{"incp", "decp"}[w>>16&1], zreg(fld(w, 4, 0), size), preg(fld(w, 8, 5))+"."+sveT(size))
	}},
	// Saturating incp, decp of a register.
	{0xff3cfa00, 0x25288800, func(w uint32) string {
		u, d, sf := w>>16&1, w>>17&1, w>>10&1
		name := []string{"sq", "uq"}[u] + []string{"incp", "decp"}[d]
		pm := preg(fld(w, 8, 5)) + "." + sveT(fld(w, 23, 22))
		switch {
		case sf == 1:
			return sveInst(name, xreg(fld(w, 4, 0)), pm)
		case u == 0:
			return sveInst(name, xreg(fld(w, 4, 0)), pm, wreg(fld(w, 4, 0)))
		}
		return sveInst(name, wreg(fld(w, 4, 0)), pm)
	}},
	// Saturating incp, decp of a vector.
	{0xff3cfe00, 0x25288000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"sq", "uq"}[w>>16&1] + []string{"incp", "decp"}[w>>17&1]
		return sveInst(name, zreg(fld(w, 4, 0), size), preg(fld(w, 8, 5))+"."+sveT(size))
	}},
	// The first-fault register: setffr, wrffr, rdffr, rdffrs.
	{0xffffffff, 0x252c9000, func(w uint32) string { return "setffr" }},
	{0xfffffe1f, 0x25289000, func(w uint32) string { return sveInst("wrffr", preg(fld(w, 8, 5))+".b") }},
	{0xfffffff0, 0x2519f000, func(w uint32) string { return sveInst("rdffr", preg(fld(w, 3, 0))+".b") }},
	{0xffbffe10, 0x2518f000, func(w uint32) string {
		return sveInst([]string{"rdffr", "rdffrs"}[w>>22&1], preg(fld(w, 3, 0))+".b", preg(fld(w, 8, 5))+"/z")
	}},
	// pnext, pfirst.
	{0xff3ffe10, 0x2519c400, func(w uint32) string {
		pdn := preg(fld(w, 3, 0)) + "." + sveT(fld(w, 23, 22))
		return sveInst("pnext", pdn, preg(fld(w, 8, 5)), pdn)
	}},
	{0xfffffe10, 0x2558c000, func(w uint32) string {
		pdn := preg(fld(w, 3, 0)) + ".b"
		return sveInst("pfirst", pdn, preg(fld(w, 8, 5)), pdn)
	}},
	// Permutes of vectors: zip1, zip2, uzp1, uzp2, trn1, trn2.
	{0xff20e000, 0x05206000, func(w uint32) string {
		name := names([]string{"zip1", "zip2", "uzp1", "uzp2", "trn1", "trn2"}, fld(w, 12, 10))
		if name == "" {
			return ""
		}
		size := fld(w, 23, 22)
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Permutes of predicates.
	{0xff30e210, 0x05204000, func(w uint32) string {
		name := names([]string{"zip1", "zip2", "uzp1", "uzp2", "trn1", "trn2"}, fld(w, 12, 10))
		if name == "" {
			return ""
		}
		t := "." + sveT(fld(w, 23, 22))
		return sveInst(name, preg(fld(w, 3, 0))+t, preg(fld(w, 8, 5))+t, preg(fld(w, 19, 16))+t)
	}},
	// rev of a vector, of a predicate.
	{0xff3ffc00, 0x05383800, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("rev", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size))
	}},
	{0xff3ffe10, 0x05344000, func(w uint32) string {
		t := "." + sveT(fld(w, 23, 22))
		return sveInst("rev", preg(fld(w, 3, 0))+t, preg(fld(w, 8, 5))+t)
	}},
	// revb, revh, revw, rbit.
	{0xff3ce000, 0x05248000, func(w uint32) string {
		size, opc := fld(w, 23, 22), fld(w, 17, 16)
		if opc < 3 && size <= opc {
			return ""
		}
		return sveInst([]string{"revb", "revh", "revw", "rbit"}[opc], zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), size))
	}},
	// tbl.
	{0xff20fc00, 0x05203000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("tbl", zreg(fld(w, 4, 0), size), "{"+zreg(fld(w, 9, 5), size)+"}", zreg(fld(w, 20, 16), size))
	}},
	// ext.
	{0xffe0e000, 0x05200000, func(w uint32) string {
		zdn := zreg(fld(w, 4, 0), 0)
		return sveInst("ext", zdn, zdn, zreg(fld(w, 9, 5), 0), imm(int64(fld(w, 20, 16)<<3|fld(w, 12, 10))))
	}},
	// insr of a general or a SIMD&FP register.
	{0xff3ffc00, 0x05243800, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("insr", zreg(fld(w, 4, 0), size), genreg(fld(w, 9, 5), size == 3))
	}},
	{0xff3ffc00, 0x05343800, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("insr", zreg(fld(w, 4, 0), size), fpreg(fld(w, 9, 5), size))
	}},
	// lasta, lastb into a general or a SIMD&FP register.
	{0xff3ee000, 0x0520a000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst([]string{"lasta", "lastb"}[w>>16&1], genreg(fld(w, 4, 0), size == 3), preg(fld(w, 12, 10)), zreg(fld(w, 9, 5), size))
	}},
	{0xff3ee000, 0x05228000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst([]string{"lasta", "lastb"}[w>>16&1], fpreg(fld(w, 4, 0), size), preg(fld(w, 12, 10)), zreg(fld(w, 9, 5), size))
	}},
	// clasta, clastb into a general register, a SIMD&FP register, a
	// vector.
	{0xff3ee000, 0x0530a000, func(w uint32) string {
		size := fld(w, 23, 22)
		rdn := genreg(fld(w, 4, 0), size == 3)
		return sveInst([]string{"clasta", "clastb"}[w>>16&1], rdn, preg(fld(w, 12, 10)), rdn, zreg(fld(w, 9, 5), size))
	}},
	{0xff3ee000, 0x052a8000, func(w uint32) string {
		size := fld(w, 23, 22)
		vdn := fpreg(fld(w, 4, 0), size)
		return sveInst([]string{"clasta", "clastb"}[w>>16&1], vdn, preg(fld(w, 12, 10)), vdn, zreg(fld(w, 9, 5), size))
	}},
	{0xff3ee000, 0x05288000, func(w uint32) string {
		size := fld(w, 23, 22)
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst([]string{"clasta", "clastb"}[w>>16&1], zdn, preg(fld(w, 12, 10)), zdn, zreg(fld(w, 9, 5), size))
	}},
	// compact, splice.
	{0xff3fe000, 0x05218000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size < 2 {
			return ""
		}
		return sveInst("compact", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10)), zreg(fld(w, 9, 5), size))
	}},
	{0xff3fe000, 0x052c8000, func(w uint32) string {
		size := fld(w, 23, 22)
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst("splice", zdn, preg(fld(w, 12, 10)), zdn, zreg(fld(w, 9, 5), size))
	}},
	// sunpklo, sunpkhi, uunpklo, uunpkhi; punpklo, punpkhi.
	{0xff3cfc00, 0x05303800, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"sunpklo", "sunpkhi", "uunpklo", "uunpkhi"}[fld(w, 17, 16)]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1))
	}},
	{0xfffefe10, 0x05304000, func(w uint32) string {
		return sveInst([]string{"punpklo", "punpkhi"}[w>>16&1], preg(fld(w, 3, 0))+".h", preg(fld(w, 8, 5))+".b")
	}},
	// Floating-point multiply-add and multiply by an indexed element:
	// fmla, fmls, fmul.
	{0xff20f800, 0x64200000, func(w uint32) string {
		return byElement(w, []string{"fmla", "fmls"}[w>>10&1])
	}},
	{0xff20fc00, 0x64202000, func(w uint32) string { return byElement(w, "fmul") }},
	// sdot, udot of vectors and by an indexed element.
	{0xffa0f800, 0x44800000, func(w uint32) string {
		sz := w >> 22 & 1
		return sveInst([]string{"sdot", "udot"}[w>>10&1], zreg(fld(w, 4, 0), 2+sz), zreg(fld(w, 9, 5), sz), zreg(fld(w, 20, 16), sz))
	}},
	{0xffa0f800, 0x44a00000, func(w uint32) string {
		sz := w >> 22 & 1
		zm, idx := fld(w, 18, 16), fld(w, 20, 19)
		if sz == 1 {
			zm, idx = fld(w, 19, 16), w>>20&1
		}
		return sveInst([]string{"sdot", "udot"}[w>>10&1], zreg(fld(w, 4, 0), 2+sz), zreg(fld(w, 9, 5), sz), fmt.Sprintf("%s[%d]", zreg(zm, sz), idx))
	}},
	// Saturating increment and decrement of a register by an element
	// count: sqincb, uqdecd, ...
	{0xff20f000, 0x0420f000, func(w uint32) string {
		u, d, sf := w>>10&1, w>>11&1, w>>20&1
		name := []string{"sq", "uq"}[u] + []string{"inc", "dec"}[d] + []string{"b", "h", "w", "d"}[fld(w, 23, 22)]
		r := fld(w, 4, 0)
		var ops []string
		switch {
		case sf == 1:
			ops = []string{xreg(r)}
		case u == 0:
			ops = []string{xreg(r), wreg(r)}
		default:
			ops = []string{wreg(r)}
		}
		return sveInst(name, append(ops, countOps(w)...)...)
	}},
	// Saturating increment and decrement of a vector by an element
	// count.
	{0xff30f000, 0x0420c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"sq", "uq"}[w>>10&1] + []string{"inc", "dec"}[w>>11&1] + []string{"b", "h", "w", "d"}[size]
		return sveInst(name, append([]string{zreg(fld(w, 4, 0), size)}, countOps(w)...)...)
	}},
	// adr.
	{0xff20f000, 0x0420a000, func(w uint32) string {
		opc, msz := fld(w, 23, 22), fld(w, 11, 10)
		size, ext := uint32(3), []string{"sxtw", "uxtw", "lsl", "lsl"}[opc]
		if opc == 2 {
			size = 2
		}
		addr := zreg(fld(w, 9, 5), size) + ", " + zreg(fld(w, 20, 16), size)
		switch {
		case ext != "lsl" && msz == 0:
			addr += ", " + ext
		case msz != 0:
			addr += ", " + ext + " " + imm(int64(msz))
		}
		return sveInst("adr", zreg(fld(w, 4, 0), size), "["+addr+"]")
	}},
	// Shifts by wide elements, unpredicated and predicated.
	{0xff20f000, 0x04208000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := []string{"asr", "lsr", "", "lsl"}[fld(w, 11, 10)]
		if name == "" || size == 3 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), 3))
	}},
	{0xff38e000, 0x04188000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"asr", "lsr", "", "lsl"}, fld(w, 18, 16))
		if name == "" || size == 3 {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst(name, zdn, preg(fld(w, 12, 10))+"/m", zdn, zreg(fld(w, 9, 5), 3))
	}},
	// frecpe, frsqrte.
	{0xff3efc00, 0x650e3000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst([]string{"frecpe", "frsqrte"}[w>>16&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size))
	}},
	// fcadd, fcmla (vectors).
	{0xff3ee000, 0x64008000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst("fcadd", zdn, preg(fld(w, 12, 10))+"/m", zdn, zreg(fld(w, 9, 5), size), []string{"#90", "#270"}[w>>16&1])
	}},
	{0xff208000, 0x64000000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst("fcmla", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size), imm(int64(fld(w, 14, 13))*90))
	}},
	// Gather loads of 32-bit elements: scalar plus 32-bit offsets
	// (unscaled, scaled), vector plus immediate.
	{0xfe000000, 0x84000000, func(w uint32) string {
		msz, u, ff := fld(w, 24, 23), w>>14&1, w>>13&1
		name := gatherName(msz, u, ff, 2)
		xs, scaled := fld(w, 22, 22), w>>21&1 == 1
		switch {
		case name == "":
			return ""
		case w>>15&1 == 0 && (!scaled || msz != 0):
			return sveInst(name, zList(fld(w, 4, 0), 1, 2), preg(fld(w, 12, 10))+"/z", vecOffset(fld(w, 9, 5), fld(w, 20, 16), 2, xs, scaled, msz))
		case w>>15&1 == 1 && fld(w, 22, 21) == 1:
			return sveInst(name, zList(fld(w, 4, 0), 1, 2), preg(fld(w, 12, 10))+"/z", vecImm(fld(w, 9, 5), 2, int64(fld(w, 20, 16))<<msz))
		}
		return ""
	}},
	// Gather loads of 64-bit elements: scalar plus 64-bit offsets
	// (unscaled, scaled), unpacked 32-bit offsets, vector plus
	// immediate.
	{0xfe000000, 0xc4000000, func(w uint32) string {
		msz, u, ff := fld(w, 24, 23), w>>14&1, w>>13&1
		name := gatherName(msz, u, ff, 3)
		zt, pg := zList(fld(w, 4, 0), 1, 3), preg(fld(w, 12, 10))+"/z"
		rn, zm, opc := fld(w, 9, 5), fld(w, 20, 16), fld(w, 22, 21)
		switch {
		case name == "":
			return ""
		case w>>15&1 == 0 && (opc&1 == 0 || msz != 0):
			return sveInst(name, zt, pg, vecOffset(rn, zm, 3, opc>>1, opc&1 == 1, msz))
		case w>>15&1 == 1 && opc == 1:
			return sveInst(name, zt, pg, vecImm(rn, 3, int64(zm)<<msz))
		case w>>15&1 == 1 && opc == 2:
			return sveInst(name, zt, pg, "["+spreg(rn)+", "+zreg(zm, 3)+"]")
		case w>>15&1 == 1 && opc == 3 && msz != 0:
			return sveInst(name, zt, pg, "["+spreg(rn)+", "+zreg(zm, 3)+", lsl "+imm(int64(msz))+"]")
		}
		return ""
	}},
	// Scatter stores.
	{0xfe008000, 0xe4008000, func(w uint32) string {
		msz, opc, rn, zm := fld(w, 24, 23), fld(w, 22, 21), fld(w, 9, 5), fld(w, 20, 16)
		name := "st1" + []string{"b", "h", "w", "d"}[msz]
		zt := func(size uint32) string { return zList(fld(w, 4, 0), 1, size) }
		pg := preg(fld(w, 12, 10))
		if fld(w, 15, 13) == 5 {
			switch {
			case opc == 0:
				return sveInst(name, zt(3), pg, "["+spreg(rn)+", "+zreg(zm, 3)+"]")
			case opc == 1 && msz != 0:
				return sveInst(name, zt(3), pg, "["+spreg(rn)+", "+zreg(zm, 3)+", lsl "+imm(int64(msz))+"]")
			case opc == 2:
				return sveInst(name, zt(3), pg, vecImm(rn, 3, int64(zm)<<msz))
			case opc == 3 && msz < 3:
				return sveInst(name, zt(2), pg, vecImm(rn, 2, int64(zm)<<msz))
			}
			return ""
		}
		if w>>13&1 == 1 {
			return ""
		}
		xs := w >> 14 & 1
		size, scaled := uint32(3), opc&1 == 1
		if opc >= 2 {
			size = 2
		}
		if scaled && msz == 0 || size == 2 && msz == 3 {
			return ""
		}
		return sveInst(name, zt(size), pg, vecOffset(rn, zm, size, xs, scaled, msz))
	}},
	// ld1r*: load and broadcast an element.
	{0xfe408000, 0x84408000, func(w uint32) string {
		t := sveLoadTypes[fld(w, 24, 23)<<2|fld(w, 14, 13)]
		off := int64(fld(w, 21, 16)) << t.msz
		addr := "[" + spreg(fld(w, 9, 5)) + "]"
		if off != 0 {
			addr = "[" + spreg(fld(w, 9, 5)) + ", " + imm(off) + "]"
		}
		return sveInst("ld1r"+t.suffix, zList(fld(w, 4, 0), 1, t.esize), preg(fld(w, 12, 10))+"/z", addr)
	}},
	// ld1rq*, ld1ro*: load and replicate 16 or 32 bytes, scalar plus
	// immediate and scalar plus scalar.
	{0xfe10e000, 0xa4002000, func(w uint32) string {
		msz, op := fld(w, 24, 23), fld(w, 22, 21)
		if op > 1 {
			return ""
		}
		addr := "[" + spreg(fld(w, 9, 5)) + "]"
		if off := sext(fld(w, 19, 16), 4) * int64(16<<op); off != 0 {
			addr = "[" + spreg(fld(w, 9, 5)) + ", " + imm(off) + "]"
		}
		name := []string{"ld1rq", "ld1ro"}[op] + []string{"b", "h", "w", "d"}[msz]
		return sveInst(name, zList(fld(w, 4, 0), 1, msz), preg(fld(w, 12, 10))+"/z", addr)
	}},
	{0xfe00e000, 0xa4000000, func(w uint32) string {
		msz, op, rm := fld(w, 24, 23), fld(w, 22, 21), fld(w, 20, 16)
		if op > 1 || rm == 31 {
			return ""
		}
		name := []string{"ld1rq", "ld1ro"}[op] + []string{"b", "h", "w", "d"}[msz]
		return sveInst(name, zList(fld(w, 4, 0), 1, msz), preg(fld(w, 12, 10))+"/z", scaled(fld(w, 9, 5), rm, msz))
	}},
	// Prefetches: prfb, prfh, prfw, prfd, scalar plus immediate, scalar
	// plus scalar, scalar plus vector, vector plus immediate.
	{0xffc08010, 0x85c00000, func(w uint32) string {
		msz := fld(w, 14, 13)
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), mulVL(fld(w, 9, 5), sext(fld(w, 21, 16), 6)))
	}},
	{0xfe60e010, 0x8400c000, func(w uint32) string {
		msz, rm := fld(w, 24, 23), fld(w, 20, 16)
		if rm == 31 {
			return ""
		}
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), scaled(fld(w, 9, 5), rm, msz))
	}},
	{0xffa08010, 0x84200000, func(w uint32) string {
		msz := fld(w, 14, 13)
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), vecOffset(fld(w, 9, 5), fld(w, 20, 16), 2, w>>22&1, true, msz))
	}},
	{0xffa08010, 0xc4200000, func(w uint32) string {
		msz := fld(w, 14, 13)
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), vecOffset(fld(w, 9, 5), fld(w, 20, 16), 3, w>>22&1, true, msz))
	}},
	{0xffe08010, 0xc4608000, func(w uint32) string {
		msz := fld(w, 14, 13)
		addr := "[" + spreg(fld(w, 9, 5)) + ", " + zreg(fld(w, 20, 16), 3)
		if msz != 0 {
			addr += ", lsl " + imm(int64(msz))
		}
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), addr+"]")
	}},
	{0xfe60e010, 0x8400e000, func(w uint32) string {
		msz := fld(w, 24, 23)
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), vecImm(fld(w, 9, 5), 2, int64(fld(w, 20, 16))<<msz))
	}},
	{0xfe60e010, 0xc400e000, func(w uint32) string {
		msz := fld(w, 24, 23)
		return sveInst(prfName(msz), prfOp(w), preg(fld(w, 12, 10)), vecImm(fld(w, 9, 5), 3, int64(fld(w, 20, 16))<<msz))
	}},
	// ftssel, fexpa, ftmad: the trigonometric and exponential
	// accelerators.
	{0xff20fc00, 0x0420b000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst("ftssel", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	{0xff3ffc00, 0x0420b800, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst("fexpa", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size))
	}},
	{0xff38fc00, 0x65108000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst("ftmad", zdn, zdn, zreg(fld(w, 9, 5), size), imm(int64(fld(w, 18, 16))))
	}},
	// fcmla by an indexed element.
	{0xffa0f000, 0x64a01000, func(w uint32) string {
		size, zm, idx := uint32(1), fld(w, 18, 16), fld(w, 20, 19)
		if w>>22&1 == 1 {
			size, zm, idx = 2, fld(w, 19, 16), w>>20&1
		}
		return sveInst("fcmla", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), fmt.Sprintf("%s[%d]", zreg(zm, size), idx), imm(int64(fld(w, 11, 10))*90))
	}},
	// ldr, str of a vector or predicate register.
	{0xffc0a000, 0x85800000, ldrSTR},
	{0xffc0a000, 0xe5800000, ldrSTR},
}

// gatherName is the mnemonic of a gather load of memory size msz into
// elements of size esize (2 or 3): ld1[s]{b,h,w,d} or ldff1..., "" for
// the unallocated combinations.
func gatherName(msz, u, ff, esize uint32) string {
	if msz > esize || msz == esize && u == 0 {
		return ""
	}
	name := []string{"ld1", "ldff1"}[ff]
	if u == 0 {
		name += "s"
	}
	return name + []string{"b", "h", "w", "d"}[msz]
}

// vecOffset is the address [xn, zm.T, uxtw|sxtw] of a gather or scatter
// with 32-bit offsets of elements of size size, "#msz" added if scaled
// by more than a byte.
func vecOffset(rn, zm, size, xs uint32, scaled bool, msz uint32) string {
	s := "[" + spreg(rn) + ", " + zreg(zm, size) + ", " + []string{"uxtw", "sxtw"}[xs]
	if scaled && msz != 0 {
		s += " " + imm(int64(msz))
	}
	return s + "]"
}

// vecImm is the address of a vector plus immediate, "[z1.s, #8]",
// without the offset when it is 0.
func vecImm(zn, size uint32, off int64) string {
	if off == 0 {
		return "[" + zreg(zn, size) + "]"
	}
	return "[" + zreg(zn, size) + ", " + imm(off) + "]"
}

// prfName is the prefetch of memory size msz.
func prfName(msz uint32) string { return "prf" + []string{"b", "h", "w", "d"}[msz&3] }

// prfOp is the prefetch operation of bits 3:0: pldl1keep..pstl3strm, or
// the number.
func prfOp(w uint32) string {
	op := fld(w, 3, 0)
	if op&7 >= 6 {
		return imm(int64(op))
	}
	return []string{"pld", "pst"}[op>>3] + "l" + strconv.Itoa(int(op>>1&3)+1) + []string{"keep", "strm"}[op&1]
}

// byElement is the text of an instruction by an indexed element (fmla
// z0.s, z1.s, z2.s[3]; SVE2's integer mul, mla, ...): half precision takes the index
// from bits 22 and 20:19 and z0-z7, single from 20:19 and z0-z7, double
// from bit 20 and z0-z15.
func byElement(w uint32, name string) string {
	var size, zm, idx uint32
	switch fld(w, 23, 22) {
	case 0, 1:
		size, zm, idx = 1, fld(w, 18, 16), w>>22&1<<2|fld(w, 20, 19)
	case 2:
		size, zm, idx = 2, fld(w, 18, 16), fld(w, 20, 19)
	default:
		size, zm, idx = 3, fld(w, 19, 16), w>>20&1
	}
	return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), fmt.Sprintf("%s[%d]", zreg(zm, size), idx))
}

// predBinary is the text of a predicated (merging) binary operation on
// elements of size size: "name zdn.T, pg/m, zdn.T, zm.T".
func predBinary(w uint32, name string, size uint32) string {
	zdn := zreg(fld(w, 4, 0), size)
	return sveInst(name, zdn, preg(fld(w, 12, 10))+"/m", zdn, zreg(fld(w, 9, 5), size))
}

// structName is the mnemonic of a contiguous load or store (op "ld" or
// "st") of num+1 registers of memory size msz: ldnt1w for one (the
// non-temporal form shares the encoding), ld2w to ld4w for more.
func structName(op string, num, msz uint32) string {
	name := op + "nt1"
	if num > 0 {
		name = op + strconv.Itoa(int(num)+1)
	}
	return name + []string{"b", "h", "w", "d"}[msz]
}

// ldrSTR is the text of ldr and str of a vector or predicate register.
func ldrSTR(w uint32) string {
	off := sext(fld(w, 21, 16)<<3|fld(w, 12, 10), 9)
	name := []string{"ldr", "str"}[w>>30&1]
	if w>>14&1 == 1 {
		return sveInst(name, "z"+strconv.Itoa(int(fld(w, 4, 0))), mulVL(fld(w, 9, 5), off))
	}
	if w>>4&1 == 1 {
		return ""
	}
	return sveInst(name, preg(fld(w, 3, 0)), mulVL(fld(w, 9, 5), off))
}

// shiftedImm is the immediate of imm8 shifted left by 8 if sh is 1,
// signed or not, as objdump prints it: the value, or "#0, lsl #8".
func shiftedImm(imm8, sh uint32, signed bool) string {
	if sh == 1 && imm8 == 0 {
		return "#0, lsl #8"
	}
	v := int64(imm8)
	if signed {
		v = sext(imm8, 8)
	}
	return imm(v << (8 * sh))
}

// An sveConv is a floating-point conversion: its mnemonic and its
// destination and source element sizes.
type sveConv struct {
	name     string
	dst, src uint32
}

// sveConvs are the floating-point conversions, predicated, by bits
// 23:16.
var sveConvs = map[uint32]sveConv{
	0x88: {"fcvt", 1, 2}, 0x89: {"fcvt", 2, 1}, 0xc8: {"fcvt", 1, 3}, 0xc9: {"fcvt", 3, 1},
	0xca: {"fcvt", 2, 3}, 0xcb: {"fcvt", 3, 2},
	0x52: {"scvtf", 1, 1}, 0x53: {"ucvtf", 1, 1}, 0x54: {"scvtf", 1, 2}, 0x55: {"ucvtf", 1, 2},
	0x56: {"scvtf", 1, 3}, 0x57: {"ucvtf", 1, 3}, 0x94: {"scvtf", 2, 2}, 0x95: {"ucvtf", 2, 2},
	0xd0: {"scvtf", 3, 2}, 0xd1: {"ucvtf", 3, 2}, 0xd4: {"scvtf", 2, 3}, 0xd5: {"ucvtf", 2, 3},
	0xd6: {"scvtf", 3, 3}, 0xd7: {"ucvtf", 3, 3},
	0x5a: {"fcvtzs", 1, 1}, 0x5b: {"fcvtzu", 1, 1}, 0x5c: {"fcvtzs", 2, 1}, 0x5d: {"fcvtzu", 2, 1},
	0x5e: {"fcvtzs", 3, 1}, 0x5f: {"fcvtzu", 3, 1}, 0x9c: {"fcvtzs", 2, 2}, 0x9d: {"fcvtzu", 2, 2},
	0xd8: {"fcvtzs", 2, 3}, 0xd9: {"fcvtzu", 2, 3}, 0xdc: {"fcvtzs", 3, 2}, 0xdd: {"fcvtzu", 3, 2},
	0xde: {"fcvtzs", 3, 3}, 0xdf: {"fcvtzu", 3, 3},
}
