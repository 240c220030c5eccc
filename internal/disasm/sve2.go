package disasm

import (
	"math/bits"
)

// SVE2 (Armv9's SVE): the forms clang -mcpu=neoverse-n2 and
// -mcpu=neoverse-v2 vectorize integer loops into (urhadd for a rounding
// average, the widening and narrowing arithmetic of mixed-width loops)
// and the rest of their encoding groups, as objdump 2.40 prints them;
// with them, SVE2's crypto instructions and Armv8.6's int8 and BFloat16
// dot products, matrix multiplies and conversions and 128-bit element
// permutes. TestSVERandomAgainstObjdump holds each to objdump like SVE's.

// sve2Forms are the SVE2 encodings decoded (see sveForms).
var sve2Forms = []sveForm{
	// Predicated binary operations: rounding and saturating shifts,
	// halving add and subtract, saturating add and subtract.
	{0xff20e000, 0x44008000, func(w uint32) string {
		name := names([]string{
			"", "", "srshl", "urshl", "", "", "srshlr", "urshlr",
			"sqshl", "uqshl", "sqrshl", "uqrshl", "sqshlr", "uqshlr", "sqrshlr", "uqrshlr",
			"shadd", "uhadd", "shsub", "uhsub", "srhadd", "urhadd", "shsubr", "uhsubr",
			"sqadd", "uqadd", "sqsub", "uqsub", "suqadd", "usqadd", "sqsubr", "uqsubr",
		}, fld(w, 20, 16))
		if name == "" {
			return ""
		}
		size := fld(w, 23, 22)
		return predBinary(w, name, size)
	}},
	// Predicated unary operations, pairwise add and accumulate long, and
	// pairwise arithmetic.
	{0xff20e000, 0x4400a000, func(w uint32) string {
		opc, size := fld(w, 20, 16), fld(w, 23, 22)
		zd, pg, zn := fld(w, 4, 0), preg(fld(w, 12, 10))+"/m", fld(w, 9, 5)
		switch opc {
		case 0, 1: // urecpe, ursqrte
			if size != 2 {
				return ""
			}
			return sveInst([]string{"urecpe", "ursqrte"}[opc], zreg(zd, size), pg, zreg(zn, size))
		case 4, 5: // sadalp, uadalp
			if size == 0 {
				return ""
			}
			return sveInst([]string{"sadalp", "uadalp"}[opc&1], zreg(zd, size), pg, zreg(zn, size-1))
		case 8, 9: // sqabs, sqneg
			return sveInst([]string{"sqabs", "sqneg"}[opc&1], zreg(zd, size), pg, zreg(zn, size))
		}
		name := names([]string{"", "addp", "", "", "smaxp", "umaxp", "sminp", "uminp"}, opc-16)
		if opc < 16 || name == "" {
			return ""
		}
		return sveInst(name, zreg(zd, size), pg, zreg(zd, size), zreg(zn, size))
	}},
	// Multiplies, unpredicated: mul, pmul, smulh, umulh, sqdmulh,
	// sqrdmulh.
	{0xff20e000, 0x04206000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"mul", "pmul", "smulh", "umulh", "sqdmulh", "sqrdmulh"}, fld(w, 12, 10))
		if name == "" || name == "pmul" && size != 0 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Add, subtract and absolute difference long.
	{0xff20c000, 0x45000000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"saddlb", "saddlt", "uaddlb", "uaddlt", "ssublb", "ssublt", "usublb", "usublt",
			"", "", "", "", "sabdlb", "sabdlt", "uabdlb", "uabdlt"}, fld(w, 13, 10))
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	// Add and subtract wide.
	{0xff20e000, 0x45004000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"saddwb", "saddwt", "uaddwb", "uaddwt", "ssubwb", "ssubwt", "usubwb", "usubwt"}[fld(w, 12, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size-1))
	}},
	// Multiply long.
	{0xff20e000, 0x45006000, func(w uint32) string {
		size, op := fld(w, 23, 22), fld(w, 12, 10)
		name := []string{"sqdmullb", "sqdmullt", "pmullb", "pmullt", "smullb", "smullt", "umullb", "umullt"}[op]
		switch {
		case size == 0 && (op == 2 || op == 3): // pmullb zd.q, zn.d, zm.d
			return sveInst(name, "z"+itoa(fld(w, 4, 0))+".q", zreg(fld(w, 9, 5), 3), zreg(fld(w, 20, 16), 3))
		case size == 0, size == 2 && (op == 2 || op == 3):
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	// Shift right narrow.
	{0xffa0c000, 0x45200000, func(w uint32) string {
		size, sh, _, ok := sveShift(fld(w, 22, 22)<<2|fld(w, 20, 19), fld(w, 18, 16))
		if !ok {
			return ""
		}
		name := []string{"sqshrunb", "sqshrunt", "sqrshrunb", "sqrshrunt", "shrnb", "shrnt", "rshrnb", "rshrnt",
			"sqshrnb", "sqshrnt", "sqrshrnb", "sqrshrnt", "uqshrnb", "uqshrnt", "uqrshrnb", "uqrshrnt"}[fld(w, 13, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size+1), imm(sh))
	}},
	// Saturating extract narrow.
	{0xffa7e000, 0x45204000, func(w uint32) string {
		tsz := fld(w, 22, 22)<<2 | fld(w, 20, 19)
		opc := fld(w, 12, 11)
		if (tsz != 1 && tsz != 2 && tsz != 4) || opc == 3 {
			return ""
		}
		size := uint32(bits.TrailingZeros32(tsz)) // tsz is 1, 2 or 4
		name := []string{"sqxtn", "uqxtn", "sqxtun"}[opc] + []string{"b", "t"}[w>>10&1]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size+1))
	}},
	// Add and subtract narrow high part.
	{0xff20e000, 0x45206000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"addhnb", "addhnt", "raddhnb", "raddhnt", "subhnb", "subhnt", "rsubhnb", "rsubhnt"}[fld(w, 12, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size-1), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// match, nmatch.
	{0xff20e000, 0x45208000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size > 1 {
			return ""
		}
		t := "." + sveT(size)
		return sveInst([]string{"match", "nmatch"}[w>>4&1], preg(fld(w, 3, 0))+t, preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// histseg, histcnt.
	{0xff20fc00, 0x4520a000, func(w uint32) string {
		if fld(w, 23, 22) != 0 {
			return ""
		}
		return sveInst("histseg", zreg(fld(w, 4, 0), 0), zreg(fld(w, 9, 5), 0), zreg(fld(w, 20, 16), 0))
	}},
	{0xff20e000, 0x4520c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size < 2 {
			return ""
		}
		return sveInst("histcnt", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/z", zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Shift right and accumulate, shift and insert; absolute difference
	// and accumulate.
	{0xff20e000, 0x4500e000, func(w uint32) string {
		op := fld(w, 12, 10)
		if op >= 6 {
			size := fld(w, 23, 22)
			return sveInst([]string{"saba", "uaba"}[op&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
		}
		size, sh, left, ok := sveShift(fld(w, 23, 22)<<2|fld(w, 20, 19), fld(w, 18, 16))
		if !ok {
			return ""
		}
		if op == 5 {
			sh = left
		}
		name := []string{"ssra", "usra", "srsra", "ursra", "sri", "sli"}[op]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), imm(sh))
	}},
	// Shift left long.
	{0xffa0f000, 0x4500a000, func(w uint32) string {
		size, _, sh, ok := sveShift(fld(w, 22, 22)<<2|fld(w, 20, 19), fld(w, 18, 16))
		if !ok {
			return ""
		}
		name := []string{"sshllb", "sshllt", "ushllb", "ushllt"}[fld(w, 11, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size+1), zreg(fld(w, 9, 5), size), imm(sh))
	}},
	// Bit permutes: bext, bdep, bgrp.
	{0xff20f000, 0x4500b000, func(w uint32) string {
		name := names([]string{"bext", "bdep", "bgrp"}, fld(w, 11, 10))
		if name == "" {
			return ""
		}
		size := fld(w, 23, 22)
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// eorbt, eortb.
	{0xff20f800, 0x45009000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst([]string{"eorbt", "eortb"}[w>>10&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// cadd, sqcadd.
	{0xff3ef800, 0x4500d800, func(w uint32) string {
		size := fld(w, 23, 22)
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst([]string{"cadd", "sqcadd"}[w>>16&1], zdn, zdn, zreg(fld(w, 9, 5), size), []string{"#90", "#270"}[w>>10&1])
	}},
	// adclb, adclt, sbclb, sbclt.
	{0xff20f800, 0x4500d000, func(w uint32) string {
		size := 2 + w>>22&1
		name := []string{"adcl", "sbcl"}[w>>23&1] + []string{"b", "t"}[w>>10&1]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	// Multiply-add long.
	{0xff20e000, 0x44004000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"smlalb", "smlalt", "umlalb", "umlalt", "smlslb", "smlslt", "umlslb", "umlslt"}[fld(w, 12, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	// Saturating multiply-add long, and high.
	{0xff20e000, 0x44006000, func(w uint32) string {
		size, op := fld(w, 23, 22), fld(w, 12, 10)
		switch {
		case op < 4 && size != 0:
			name := []string{"sqdmlalb", "sqdmlalt", "sqdmlslb", "sqdmlslt"}[op]
			return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
		case op == 4 || op == 5:
			return sveInst([]string{"sqrdmlah", "sqrdmlsh"}[op&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
		}
		return ""
	}},
	// Multiply, multiply-add and saturating multiply high by an indexed
	// element.
	{0xff20fc00, 0x4420f800, func(w uint32) string { return byElement(w, "mul") }},
	{0xff20f800, 0x44200800, func(w uint32) string { return byElement(w, []string{"mla", "mls"}[w>>10&1]) }},
	{0xff20f800, 0x4420f000, func(w uint32) string { return byElement(w, []string{"sqdmulh", "sqrdmulh"}[w>>10&1]) }},
	{0xff20f800, 0x44201000, func(w uint32) string { return byElement(w, []string{"sqrdmlah", "sqrdmlsh"}[w>>10&1]) }},
	// Multiply-add long and multiply long by an indexed element.
	{0xffa0c000, 0x44a08000, func(w uint32) string {
		name := []string{"smlalb", "smlalt", "umlalb", "umlalt", "smlslb", "smlslt", "umlslb", "umlslt"}[fld(w, 13, 12)<<1|w>>10&1]
		return longIndexed(w, name)
	}},
	{0xffa0e000, 0x44a0c000, func(w uint32) string {
		return longIndexed(w, []string{"smullb", "smullt", "umullb", "umullt"}[w>>12&1<<1|w>>10&1])
	}},
	// Bitwise ternary operations.
	{0xff20f800, 0x04203800, func(w uint32) string {
		name := names([]string{"eor3", "bsl", "bcax", "bsl1n", "", "bsl2n", "", "nbsl"}, fld(w, 23, 22)<<1|w>>10&1)
		if name == "" {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), 3)
		return sveInst(name, zdn, zdn, zreg(fld(w, 20, 16), 3), zreg(fld(w, 9, 5), 3))
	}},
	// xar.
	{0xff20fc00, 0x04203400, func(w uint32) string {
		size, sh, _, ok := sveShift(fld(w, 23, 22)<<2|fld(w, 20, 19), fld(w, 18, 16))
		if !ok {
			return ""
		}
		zdn := zreg(fld(w, 4, 0), size)
		return sveInst("xar", zdn, zdn, zreg(fld(w, 9, 5), size), imm(sh))
	}},
	// tbx, tbl of two registers, ext of two registers.
	{0xff20fc00, 0x05202c00, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("tbx", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
	}},
	{0xff20fc00, 0x05202800, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("tbl", zreg(fld(w, 4, 0), size), zList(fld(w, 9, 5), 2, size), zreg(fld(w, 20, 16), size))
	}},
	{0xffe0e000, 0x05600000, func(w uint32) string {
		return sveInst("ext", zreg(fld(w, 4, 0), 0), zList(fld(w, 9, 5), 2, 0), imm(int64(fld(w, 20, 16)<<3|fld(w, 12, 10))))
	}},
	// Floating-point pairwise operations.
	{0xff38e000, 0x64108000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"faddp", "", "", "", "fmaxnmp", "fminnmp", "fmaxp", "fminp"}, fld(w, 18, 16))
		if name == "" || size == 0 {
			return ""
		}
		return predBinary(w, name, size)
	}},
	// flogb.
	{0xfff9e000, 0x6518a000, func(w uint32) string {
		size := fld(w, 18, 17)
		if size == 0 {
			return ""
		}
		return sveInst("flogb", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), size))
	}},
	// cmla, sqrdcmlah (vectors), cdot.
	{0xff20e000, 0x44002000, func(w uint32) string {
		size := fld(w, 23, 22)
		rot := imm(int64(fld(w, 11, 10)) * 90)
		return sveInst([]string{"cmla", "sqrdcmlah"}[w>>12&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size), rot)
	}},
	{0xffa0f000, 0x44801000, func(w uint32) string {
		sz := w >> 22 & 1
		return sveInst("cdot", zreg(fld(w, 4, 0), 2+sz), zreg(fld(w, 9, 5), sz), zreg(fld(w, 20, 16), sz), imm(int64(fld(w, 11, 10))*90))
	}},
	// Saturating doubling multiply-add long and multiply long by an
	// indexed element.
	{0xffa0e000, 0x44a02000, func(w uint32) string {
		return longIndexed(w, []string{"sqdmlalb", "sqdmlalt", "sqdmlslb", "sqdmlslt"}[w>>12&1<<1|w>>10&1])
	}},
	{0xffa0f000, 0x44a0e000, func(w uint32) string {
		return longIndexed(w, []string{"sqdmullb", "sqdmullt"}[w>>10&1])
	}},
	// Absolute difference and accumulate long; add and subtract long
	// bottom and top interleaved.
	{0xff20f000, 0x4500c000, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		name := []string{"sabalb", "sabalt", "uabalb", "uabalt"}[fld(w, 11, 10)]
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	{0xff20f000, 0x45008000, func(w uint32) string {
		size := fld(w, 23, 22)
		name := names([]string{"saddlbt", "", "ssublbt", "ssubltb"}, fld(w, 11, 10))
		if name == "" || size == 0 {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	// Non-temporal gather loads and scatter stores, vector plus scalar.
	{0xfe60c000, 0x84008000, func(w uint32) string {
		msz, u := fld(w, 24, 23), w>>13&1
		name := gatherName(msz, u, 0, 2)
		if name == "" {
			return ""
		}
		return sveInst("ldnt1"+name[3:], zList(fld(w, 4, 0), 1, 2), preg(fld(w, 12, 10))+"/z", "["+zreg(fld(w, 9, 5), 2)+", "+xreg(fld(w, 20, 16))+"]")
	}},
	{0xfe60a000, 0xc4008000, func(w uint32) string {
		msz, u := fld(w, 24, 23), w>>14&1
		name := gatherName(msz, u, 0, 3)
		if name == "" || w>>13&1 == 1 {
			return ""
		}
		return sveInst("ldnt1"+name[3:], zList(fld(w, 4, 0), 1, 3), preg(fld(w, 12, 10))+"/z", "["+zreg(fld(w, 9, 5), 3)+", "+xreg(fld(w, 20, 16))+"]")
	}},
	{0xfe00e000, 0xe4002000, func(w uint32) string {
		msz, size := fld(w, 24, 23), uint32(3)
		if w>>22&1 == 1 {
			size = 2
		}
		if w>>21&1 == 1 || msz > size {
			return ""
		}
		return sveInst("stnt1"+[]string{"b", "h", "w", "d"}[msz], zList(fld(w, 4, 0), 1, size), preg(fld(w, 12, 10)), "["+zreg(fld(w, 9, 5), size)+", "+xreg(fld(w, 20, 16))+"]")
	}},
	// Floating-point multiply-add long: fmlalb, fmlalt, fmlslb, fmlslt,
	// of vectors and by an indexed element.
	{0xffe0d800, 0x64a08000, func(w uint32) string {
		name := []string{"fmlalb", "fmlalt", "fmlslb", "fmlslt"}[w>>13&1<<1|w>>10&1]
		return sveInst(name, zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 20, 16), 1))
	}},
	{0xffe0d000, 0x64a04000, func(w uint32) string {
		name := []string{"fmlalb", "fmlalt", "fmlslb", "fmlslt"}[w>>13&1<<1|w>>10&1]
		idx := fld(w, 20, 19)<<1 | w>>11&1
		return sveInst(name, zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 18, 16), 1)+"["+itoa(idx)+"]")
	}},
	// Floating-point narrowing and widening conversions: fcvtnt,
	// fcvtlt, fcvtx, fcvtxnt, bfcvt, bfcvtnt.
	{0xfe3ce000, 0x6408a000, func(w uint32) string {
		cvt, ok := sve2Convs[w>>16]
		if !ok {
			return ""
		}
		return sveInst(cvt.name, zreg(fld(w, 4, 0), cvt.dst), preg(fld(w, 12, 10))+"/m", zreg(fld(w, 9, 5), cvt.src))
	}},
	// Permutes of 128-bit elements: zip1, zip2, uzp1, uzp2, trn1, trn2.
	{0xffe0e000, 0x05a00000, func(w uint32) string {
		name := names([]string{"zip1", "zip2", "uzp1", "uzp2", "", "", "trn1", "trn2"}, fld(w, 12, 10))
		if name == "" {
			return ""
		}
		q := func(r uint32) string { return "z" + itoa(r) + ".q" }
		return sveInst(name, q(fld(w, 4, 0)), q(fld(w, 9, 5)), q(fld(w, 20, 16)))
	}},
	// Armv8.6's int8 and BFloat16 dot products and matrix multiplies
	// (I8MM, BF16, F64MM), which int8 and bf16 inference kernels use:
	// usdot, sudot, smmla, usmmla, ummla, fmmla, bfdot, bfmmla, bfmlalb,
	// bfmlalt.
	{0xffe0fc00, 0x44807800, func(w uint32) string {
		return sveInst("usdot", zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 0), zreg(fld(w, 20, 16), 0))
	}},
	{0xffe0f800, 0x44a01800, func(w uint32) string {
		name := []string{"usdot", "sudot"}[w>>10&1]
		return sveInst(name, zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 0), zreg(fld(w, 18, 16), 0)+"["+itoa(fld(w, 20, 19))+"]")
	}},
	{0xff20fc00, 0x45009800, func(w uint32) string {
		name := names([]string{"smmla", "", "usmmla", "ummla"}, fld(w, 23, 22))
		if name == "" {
			return ""
		}
		return sveInst(name, zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 0), zreg(fld(w, 20, 16), 0))
	}},
	{0xff20fc00, 0x6420e400, func(w uint32) string {
		switch size := fld(w, 23, 22); size {
		case 1:
			return sveInst("bfmmla", zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 20, 16), 1))
		case 2, 3:
			return sveInst("fmmla", zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(fld(w, 20, 16), size))
		}
		return ""
	}},
	{0xffe0fc00, 0x64608000, func(w uint32) string {
		return sveInst("bfdot", zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 20, 16), 1))
	}},
	{0xffe0fc00, 0x64604000, func(w uint32) string {
		return sveInst("bfdot", zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 18, 16), 1)+"["+itoa(fld(w, 20, 19))+"]")
	}},
	{0xffe0f800, 0x64e08000, func(w uint32) string {
		return sveInst([]string{"bfmlalb", "bfmlalt"}[w>>10&1], zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 20, 16), 1))
	}},
	{0xffe0f000, 0x64e04000, func(w uint32) string {
		idx := fld(w, 20, 19)<<1 | w>>11&1
		return sveInst([]string{"bfmlalb", "bfmlalt"}[w>>10&1], zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 1), zreg(fld(w, 18, 16), 1)+"["+itoa(idx)+"]")
	}},
	// ctermeq, ctermne.
	{0xffa0fc0f, 0x25a02000, func(w uint32) string {
		x := w>>22&1 == 1
		return sveInst([]string{"ctermeq", "ctermne"}[w>>4&1], genreg(fld(w, 9, 5), x), genreg(fld(w, 20, 16), x))
	}},
	// cdot, cmla and sqrdcmlah by an indexed element.
	{0xffa0c000, 0x44a04000, func(w uint32) string {
		op := fld(w, 13, 12)
		if op == 1 {
			return ""
		}
		name := []string{"cdot", "", "cmla", "sqrdcmlah"}[op]
		sz := w >> 22 & 1
		zm, idx := fld(w, 18, 16), fld(w, 20, 19)
		if sz == 1 {
			zm, idx = fld(w, 19, 16), w>>20&1
		}
		rot := imm(int64(fld(w, 11, 10)) * 90)
		if op == 0 { // cdot: .s from .b, .d from .h
			return sveInst(name, zreg(fld(w, 4, 0), 2+sz), zreg(fld(w, 9, 5), sz), zreg(zm, sz)+"["+itoa(idx)+"]", rot)
		}
		size := 1 + sz
		return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size), zreg(zm, size)+"["+itoa(idx)+"]", rot)
	}},
	// sqdmlalbt, sqdmlslbt.
	{0xff20f800, 0x44000800, func(w uint32) string {
		size := fld(w, 23, 22)
		if size == 0 {
			return ""
		}
		return sveInst([]string{"sqdmlalbt", "sqdmlslbt"}[w>>10&1], zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(fld(w, 20, 16), size-1))
	}},
	// The SVE2 crypto instructions: aese, aesd, aesmc, aesimc, sm4e,
	// sm4ekey, rax1.
	{0xfffff800, 0x4522e000, func(w uint32) string {
		zdn := zreg(fld(w, 4, 0), 0)
		return sveInst([]string{"aese", "aesd"}[w>>10&1], zdn, zdn, zreg(fld(w, 9, 5), 0))
	}},
	{0xfffffbe0, 0x4520e000, func(w uint32) string {
		zdn := zreg(fld(w, 4, 0), 0)
		return sveInst([]string{"aesmc", "aesimc"}[w>>10&1], zdn, zdn)
	}},
	{0xfffffc00, 0x4523e000, func(w uint32) string {
		zdn := zreg(fld(w, 4, 0), 2)
		return sveInst("sm4e", zdn, zdn, zreg(fld(w, 9, 5), 2))
	}},
	{0xffe0fc00, 0x4520f000, func(w uint32) string {
		return sveInst("sm4ekey", zreg(fld(w, 4, 0), 2), zreg(fld(w, 9, 5), 2), zreg(fld(w, 20, 16), 2))
	}},
	{0xffe0fc00, 0x4520f400, func(w uint32) string {
		return sveInst("rax1", zreg(fld(w, 4, 0), 3), zreg(fld(w, 9, 5), 3), zreg(fld(w, 20, 16), 3))
	}},
	// splice of two registers.
	{0xff3fe000, 0x052d8000, func(w uint32) string {
		size := fld(w, 23, 22)
		return sveInst("splice", zreg(fld(w, 4, 0), size), preg(fld(w, 12, 10)), zList(fld(w, 9, 5), 2, size))
	}},
	// whilewr, whilerw.
	{0xff20fc00, 0x25203000, func(w uint32) string {
		return sveInst([]string{"whilewr", "whilerw"}[w>>4&1], preg(fld(w, 3, 0))+"."+sveT(fld(w, 23, 22)), xreg(fld(w, 9, 5)), xreg(fld(w, 20, 16)))
	}},
}

// longIndexed is the text of a long multiply (or multiply-add) by an
// indexed element: .s from .h with a 3-bit index (bits 20:19, 11) and
// z0-z7, or .d from .s with a 2-bit index (bits 20, 11) and z0-z15.
func longIndexed(w uint32, name string) string {
	size, zm, idx := uint32(2), fld(w, 18, 16), fld(w, 20, 19)<<1|w>>11&1
	if w>>22&1 == 1 {
		size, zm, idx = 3, fld(w, 19, 16), w>>20&1<<1|w>>11&1
	}
	return sveInst(name, zreg(fld(w, 4, 0), size), zreg(fld(w, 9, 5), size-1), zreg(zm, size-1)+"["+itoa(idx)+"]")
}

// sve2Convs are the narrowing and widening conversions, by bits 31:16.
var sve2Convs = map[uint32]sveConv{
	0x6488: {"fcvtnt", 1, 2}, 0x6489: {"fcvtlt", 2, 1}, 0x64ca: {"fcvtnt", 2, 3}, 0x64cb: {"fcvtlt", 3, 2},
	0x640a: {"fcvtxnt", 2, 3}, 0x650a: {"fcvtx", 2, 3}, 0x658a: {"bfcvt", 1, 2}, 0x648a: {"bfcvtnt", 1, 2},
}
