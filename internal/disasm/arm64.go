package disasm

import (
	"strconv"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
)

// decodeARM64 decodes AArch64 code at addr. Instructions are four bytes;
// a tail shorter than that is one BadText instruction.
func decodeARM64(code []byte, addr uint64, sym Symbolizer) []Inst {
	insts := make([]Inst, 0, len(code)/4+1)
	var b strings.Builder
	for off := 0; off < len(code); off += 4 {
		pc := addr + uint64(off)
		n := min(4, len(code)-off)
		inst, ok := decodeOneARM64(code[off : off+n])
		if !ok {
			insts = append(insts, Inst{Addr: pc, Len: n, Text: BadText})
			continue
		}
		b.Reset()
		formatARM64(&b, inst, pc, sym)
		insts = append(insts, Inst{Addr: pc, Len: 4, Text: b.String()})
	}
	return insts
}

// decodeOneARM64 decodes one instruction; ok is false for bytes that do
// not decode (a decoder panic included).
func decodeOneARM64(src []byte) (inst arm64asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := arm64asm.Decode(src)
	if err != nil {
		return arm64asm.Inst{}, false
	}
	return inst, true
}

// formatARM64 writes the objdump text of inst at pc to b: GNU syntax,
// with PC-relative operands as absolute targets ("bl 4005c0 <foo+0x10>").
func formatARM64(b *strings.Builder, inst arm64asm.Inst, pc uint64, sym Symbolizer) {
	hasRel := false
	for _, a := range inst.Args {
		if _, ok := a.(arm64asm.PCRel); ok {
			hasRel = true
		}
	}
	if !hasRel {
		text := arm64asm.GNUSyntax(inst)
		mnem, ops, _ := strings.Cut(text, " ")
		b.WriteString(mnem)
		if ops = strings.TrimSpace(ops); ops != "" {
			b.WriteByte('\t')
			b.WriteString(fixARM64(mnem, ops))
		}
		return
	}
	// GNUSyntax prints a PCRel as ".+0x10"; rebuild the operand list.
	text := arm64asm.GNUSyntax(inst)
	mnem, _, _ := strings.Cut(text, " ")
	b.WriteString(mnem)
	b.WriteByte('\t')
	first := true
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if c, ok := a.(arm64asm.Cond); ok && inst.Op == arm64asm.B {
			_ = c // already part of the mnemonic ("b.ne")
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		if r, ok := a.(arm64asm.PCRel); ok {
			t := pc + uint64(int64(r))
			if inst.Op == arm64asm.ADRP {
				t = pc&^0xfff + uint64(int64(r))
			}
			target(b, t, sym)
			continue
		}
		b.WriteString(strings.ToLower(a.String()))
	}
	if c, ok := condAlias[mnem]; ok {
		b.WriteString(" // ")
		b.WriteString(c)
	}
}

// condAlias are the SVE condition names objdump adds as a comment to a
// conditional branch ("b.ne 34 <crc+0x34> // b.any").
var condAlias = map[string]string{
	"b.eq": "b.none", "b.ne": "b.any", "b.cs": "b.nlast", "b.hs": "b.nlast", "b.cc": "b.last", "b.lo": "b.last",
	"b.mi": "b.first", "b.pl": "b.nfrst", "b.hi": "b.pmore", "b.ls": "b.plast", "b.ge": "b.tcont", "b.lt": "b.tstop",
}

// fixARM64 rewrites arm64asm's GNU operands where they differ from
// objdump 2.40 in ways that cost nothing to fix: a space after the comma
// before an immediate ("[x0, #8]") and the decimal comment objdump adds
// to a hexadecimal move ("mov w8, #0x8320 // #33568").
func fixARM64(mnem, ops string) string {
	ops = strings.ReplaceAll(ops, ",#", ", #")
	if mnem == "mov" || mnem == "movz" || mnem == "movk" || mnem == "movn" {
		if i := strings.LastIndex(ops, "#0x"); i >= 0 && !strings.Contains(ops[i:], ",") {
			if v, err := strconv.ParseUint(ops[i+3:], 16, 64); err == nil {
				ops += " // #" + strconv.FormatUint(v, 10)
			}
		}
	}
	return ops
}
