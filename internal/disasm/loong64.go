package disasm

import (
	"encoding/binary"
	"fmt"
	"strings"

	"golang.org/x/arch/loong64/loong64asm"
)

// decodeLoong64 decodes LoongArch (LA64, with the LSX and LASX vector
// extensions) code at addr. Instructions are four bytes; a word that does
// not decode is, as objdump shows it, its value in hex, and a tail
// shorter than a word is BadText.
func decodeLoong64(code []byte, addr uint64, sym Symbolizer) []Inst {
	return decodeWords(code, addr, func(b *textBuf, word []byte, pc uint64) string {
		inst, ok := decodeOneLoong64(word)
		if !ok {
			return fmt.Sprintf("0x%08x", binary.LittleEndian.Uint32(word))
		}
		return safeFormat(b, func() { formatLoong64(b, inst, pc, sym) })
	})
}

// decodeOneLoong64 decodes the word src; ok is false for a word that
// does not decode (a decoder panic included).
func decodeOneLoong64(src []byte) (inst loong64asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := loong64asm.Decode(src)
	if err != nil || inst.Op == 0 {
		return loong64asm.Inst{}, false
	}
	return inst, true
}

// formatLoong64 writes the objdump text of inst at pc to b. The decoder's
// GNU syntax follows current GNU objdump (aliases such as move, ret,
// bgtz; unsigned immediates in hex, signed ones in decimal, branch
// offsets in bytes); binutils lays it out as the mnemonic padded
// to 12 columns, a tab and the operands, and follows a branch with a tab,
// "# " and its target, as objdump prints addresses.
func formatLoong64(b *textBuf, inst loong64asm.Inst, pc uint64, sym Symbolizer) {
	mnem, ops, _ := strings.Cut(loong64asm.GNUSyntax(inst), " ")
	b.WriteString(mnem)
	for n := len(mnem); n < 12; n++ {
		b.WriteByte(' ')
	}
	if ops == "" {
		return
	}
	b.WriteByte('\t')
	b.WriteString(ops)
	if inst.Op == loong64asm.JIRL {
		return // its offset is from a register, not the pc
	}
	for _, a := range inst.Args {
		if o, ok := a.(loong64asm.OffsetSimm); ok {
			b.WriteString("\t# ")
			target(b, pc+uint64(int64(o.Imm)), sym)
			return
		}
	}
}
