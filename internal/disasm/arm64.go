package disasm

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
)

// decodeARM64 decodes AArch64 code at addr. Instructions are four bytes;
// a tail shorter than that is one BadText instruction.
func decodeARM64(code []byte, addr uint64, sym Symbolizer) []Inst {
	return decodeWords(code, addr, func(b *textBuf, src []byte, pc uint64) string {
		word := binary.LittleEndian.Uint32(src)
		if extARM64(b, word) || sveARM64(b, word) {
			return b.String()
		}
		inst, ok := decodeOneARM64(src)
		if !ok {
			return badARM64(word)
		}
		return safeFormatARM64(b, inst, pc, sym)
	})
}

// badARM64 returns objdump's text for a word that does not decode:
// "udf #n" for the permanently undefined encoding, ".inst 0x... ;
// undefined" otherwise.
func badARM64(word uint32) string {
	if word>>16 == 0 {
		return "udf\t#" + strconv.Itoa(int(word))
	}
	return fmt.Sprintf(".inst\t0x%08x ; undefined", word)
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

// safeFormatARM64 returns the text formatARM64 writes, or BadText if
// formatting panics: no input may take the process down.
func safeFormatARM64(b *textBuf, inst arm64asm.Inst, pc uint64, sym Symbolizer) (text string) {
	defer func() {
		if recover() != nil {
			text = BadText
		}
	}()
	formatARM64(b, inst, pc, sym)
	return b.String()
}

// formatARM64 writes the objdump text of inst at pc to b: GNU syntax,
// with PC-relative operands as absolute targets ("bl 4005c0 <foo+0x10>").
func formatARM64(b *textBuf, inst arm64asm.Inst, pc uint64, sym Symbolizer) {
	text := arm64asm.GNUSyntax(inst)
	mnem, ops, _ := strings.Cut(text, " ")
	ops = strings.TrimSpace(ops)
	b.WriteString(mnem)
	hasRel := false
	for _, a := range inst.Args {
		if _, ok := a.(arm64asm.PCRel); ok {
			hasRel = true
		}
	}
	if hasRel {
		// GNUSyntax prints a PCRel as ".+0x10"; rebuild the operands.
		b.WriteByte('\t')
		first := true
		for _, a := range inst.Args {
			if a == nil {
				break
			}
			if _, ok := a.(arm64asm.Cond); ok && inst.Op == arm64asm.B {
				continue // already part of the mnemonic ("b.ne")
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
		if c, ok := strings.CutPrefix(mnem, "b."); ok && condAlias[c] != "" {
			b.WriteString("  // b.")
			b.WriteString(strings.ReplaceAll(condAlias[c], ", ", ", b."))
		}
		return
	}
	if ops == "" {
		return
	}
	b.WriteByte('\t')
	b.WriteString(fixARM64(mnem, ops, &inst))
}

// condAlias are the other names objdump gives a condition in a comment
// ("cset x7, ne // ne = any", "b.cs 117e4 <f+0x10> // b.hs, b.nlast").
var condAlias = map[string]string{
	"eq": "none", "ne": "any", "cs": "hs, nlast", "hs": "cs, nlast", "cc": "lo, ul, last", "lo": "cc, ul, last",
	"mi": "first", "pl": "nfrst", "hi": "pmore", "ls": "plast", "ge": "tcont", "lt": "tstop",
}

// fixARM64 rewrites arm64asm's GNU operands where they differ from
// objdump 2.40 in ways that cost nothing to fix: a space after every
// comma ("[x1, x3, lsl #3]"), "#0.0" in floating-point compares, the
// decimal comment of a hexadecimal move ("mov w8, #0x8320 // #33568") and
// the condition aliases of conditional selects and compares.
func fixARM64(mnem, ops string, inst *arm64asm.Inst) string {
	if strings.Contains(ops, ",") {
		var b strings.Builder
		for i := 0; i < len(ops); i++ {
			b.WriteByte(ops[i])
			if ops[i] == ',' && i+1 < len(ops) && ops[i+1] != ' ' {
				b.WriteByte(' ')
			}
		}
		ops = b.String()
	}
	switch mnem {
	case "mrs", "msr":
		if i := strings.Index(ops, "s3_"); i >= 0 {
			j := i + strings.IndexAny(ops[i:]+",", ",")
			if name, ok := sysRegs[ops[i:j]]; ok {
				ops = ops[:i] + name + ops[j:]
			}
		}
	case "fcmp", "fcmpe":
		if strings.HasSuffix(ops, ", #0") {
			ops += ".0"
		}
	case "mov":
		if i := strings.LastIndex(ops, "#0x"); i >= 0 && !strings.Contains(ops[i:], ",") {
			if v, err := strconv.ParseUint(ops[i+3:], 16, 64); err == nil {
				d := int64(v)
				if strings.HasPrefix(ops, "w") {
					d = int64(int32(uint32(v)))
				}
				ops += "\t// #" + strconv.FormatInt(d, 10)
			}
		}
	}
	var last arm64asm.Arg
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		last = a
	}
	if c, ok := last.(arm64asm.Cond); ok {
		name := strings.ToLower(c.String())
		if al := condAlias[name]; al != "" {
			ops += "\t// " + name + " = " + al
		}
	}
	return ops
}

// sysRegs are objdump's names of system registers arm64asm prints in the
// generic form.
var sysRegs = map[string]string{
	"s3_0_c0_c0_0": "midr_el1", "s3_0_c0_c4_0": "id_aa64pfr0_el1", "s3_0_c0_c6_0": "id_aa64isar0_el1",
	"s3_3_c0_c0_1": "ctr_el0", "s3_3_c0_c0_7": "dczid_el0", "s3_3_c4_c2_0": "nzcv", "s3_3_c4_c2_5": "dit",
	"s3_3_c4_c4_0": "fpcr", "s3_3_c4_c4_1": "fpsr", "s3_3_c13_c0_2": "tpidr_el0",
	"s3_3_c14_c0_0": "cntfrq_el0", "s3_3_c14_c0_2": "cntvct_el0",
}
