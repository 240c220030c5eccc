package disasm

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/arch/ppc64/ppc64asm"
)

// decodePPC64 decodes 64-bit PowerPC code at addr, in byte order bo (the
// ELF file's: ppc64le or big-endian ppc64). Instructions are four bytes,
// or eight for the prefixed ones of Power10; a word that does not decode
// is one instruction, ".long 0x...", as objdump shows it.
func decodePPC64(code []byte, addr uint64, bo binary.ByteOrder, sym Symbolizer) []Inst {
	insts := make([]Inst, 0, len(code)/4+1)
	var b textBuf
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		if len(code)-off < 4 {
			insts = append(insts, Inst{Addr: pc, Len: len(code) - off, Text: BadText})
			break
		}
		inst, ok := decodeOnePPC64(code[off:], bo)
		if ok && ppcReservedSet(inst, bo.Uint32(code[off:])) {
			ok = false
		}
		if !ok {
			text, known := ppcOther(bo.Uint32(code[off:]))
			if !known {
				text = fmt.Sprintf(".long 0x%x", bo.Uint32(code[off:]))
			}
			insts = append(insts, Inst{Addr: pc, Len: 4, Text: text})
			off += 4
			continue
		}
		b.Reset()
		text := safeFormat(&b, func() { formatPPC64(&b, inst, pc, sym) })
		insts = append(insts, Inst{Addr: pc, Len: inst.Len, Text: text})
		off += inst.Len
	}
	return insts
}

// decodeOnePPC64 decodes one instruction; ok is false for bytes that do
// not decode (a decoder panic included).
func decodeOnePPC64(src []byte, bo binary.ByteOrder) (inst ppc64asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := ppc64asm.Decode(src, bo)
	if err != nil || inst.Op == 0 || inst.Len <= 0 || inst.Len > len(src) {
		return ppc64asm.Inst{}, false
	}
	return inst, true
}

// ppcOther returns objdump's text for a word the decoder does not
// decode that glibc's code holds: the transactional memory
// instructions of POWER8 (tbegin., tend., tendall., tabort.) and attn
// (POWER9's, an implementation-specific stop; glibc's data words of
// 0x200 read as it).
func ppcOther(word uint32) (string, bool) {
	switch {
	case word&^(1<<21) == 0x7c00051d:
		if word&(1<<21) != 0 {
			return "tbegin. 1", true
		}
		return "tbegin.", true
	case word == 0x7c00055d:
		return "tend.", true
	case word == 0x7e00055d:
		return "tendall.", true
	case word&^(31<<16) == 0x7c00071d:
		return "tabort. r" + strconv.Itoa(int(word>>16&31)), true
	case word&0xfc0007ff == 0x00000200: // the other fields ignored
		return "attn", true
	}
	return "", false
}

// ppcYHint rewrites a conditional branch whose BO has the branch
// prediction bits "at" = 01, reserved since version 2 of the
// architecture and the "y" bit of PowerPC before it, which 32-bit code
// still sets (the decoder prints "bc? 5,eq,29d80"), as objdump reads it:
// a relative branch without a hint ("bne 29d80"), one to the link,
// count or target register with the old form's "+" ("bnelr+"), which
// it returns to be added to the mnemonic. It leaves other instructions
// alone.
func ppcYHint(inst *ppc64asm.Inst) string {
	switch inst.Op.String() {
	case "bc", "bcl", "bca", "bcla", "bclr", "bclrl", "bcctr", "bcctrl", "bctar", "bctarl":
	default:
		return ""
	}
	bo, ok := inst.Args[0].(ppc64asm.Imm)
	if !ok {
		return ""
	}
	switch bo {
	case 5, 13: // branch if CR bit false, true
	case 17, 19: // decrement CTR, branch if not zero, zero
		if bi, ok := inst.Args[1].(ppc64asm.CondReg); ok && bi != ppc64asm.Cond0LT {
			return "" // BI set but ignored: objdump shows a .long
		}
	default:
		return ""
	}
	inst.Args[0] = bo &^ 1
	switch inst.Op.String() {
	case "bc", "bcl", "bca", "bcla":
		return ""
	}
	return "+"
}

// ppcTrap names the TO field of the trap instructions as objdump's
// extended mnemonics do ("tweq", "tdnei").
var ppcTrap = map[string]string{"1": "lgt", "2": "llt", "4": "eq", "5": "lge", "6": "lle", "8": "gt", "12": "ge", "16": "lt", "20": "le", "24": "ne"}

// ppcSPR names the special-purpose registers whose moves objdump shows
// as mtNAME and mfNAME, where the decoder shows mtspr and mfspr.
var ppcSPR = map[string]string{"256": "vrsave", "13": "uamr"}

// ppcReservedSet reports whether word, which the decoder decoded as
// inst, has a field set that the instruction does not use and objdump
// requires to be 0 (it shows such a word as ".long"): data words in
// text (jump table offsets) often decode as floating-point
// instructions. It checks the floating-point arithmetic instructions
// (FRB of fmul, FRC of the others, FRA of fsqrt; fre's and frsqrte's FRA
// objdump shows, see formatPPC64), the conversions and moves (FRA), and
// the quad-precision compares.
func ppcReservedSet(inst ppc64asm.Inst, word uint32) bool {
	fra, frb, frc := word>>16&31, word>>11&31, word>>6&31
	switch strings.TrimSuffix(inst.Op.String(), ".") {
	case "fdiv", "fdivs", "fsub", "fsubs", "fadd", "fadds", "fre", "fres", "frsqrte", "frsqrtes":
		return frc != 0
	case "fmul", "fmuls":
		return frb != 0
	case "fsqrt", "fsqrts":
		return fra != 0 || frc != 0
	case "xscmpuqp", "xscmpoqp":
		return word>>21&3 != 0 || word&1 != 0 // below BF, and the last bit
	case "sc":
		return word&0xfffff01f != 0x44000002 // only LEV may be set (text: "GI__")
	case "fcfid", "fcfids", "fcfidu", "fcfidus", "fctid", "fctidz", "fctidu", "fctiduz",
		"fctiw", "fctiwz", "fctiwu", "fctiwuz", "frsp", "fabs", "fnabs", "fneg", "fmr", "frin", "friz", "frip", "frim":
		return fra != 0
	}
	return false
}

// formatPPC64 writes the objdump text of inst at pc to b: the decoder's
// GNU syntax, with branch targets as addresses and their symbols, and
// the extended mnemonics objdump prefers ("mr", "srdi", "iseleq", ...).
func formatPPC64(b *textBuf, inst ppc64asm.Inst, pc uint64, sym Symbolizer) {
	plus := ppcYHint(&inst)
	mnem, args := gnuOperands(ppc64asm.GNUSyntax(inst, pc))
	mnem += plus
	var t branchTarget
	for _, a := range inst.Args {
		switch a := a.(type) {
		case ppc64asm.PCRel:
			t.addr = pc + uint64(int64(a))
			if a == 0 {
				t.text = fmt.Sprintf(".%+#x", int(a))
			} else {
				t.text = fmt.Sprintf("%#x", t.addr)
			}
		case ppc64asm.Label:
			t.addr = uint64(uint32(a))
			t.text = fmt.Sprintf("%#x", uint32(a))
		}
	}
	mnem, args = ppcExtended(mnem, args)
	switch strings.TrimSuffix(mnem, ".") {
	case "fre", "fres", "frsqrte", "frsqrtes":
		// A field the instruction does not use, which objdump shows
		// when it is not 0 ("frsqrte f1,f2,1").
		if fra := inst.Enc >> 16 & 31; fra != 0 && len(args) == 2 {
			args = append(args, strconv.Itoa(int(fra)))
		}
	}
	b.WriteString(mnem)
	if len(args) > 0 {
		// objdump pads the mnemonic to eight columns.
		for n := len(mnem); n < 7; n++ {
			b.WriteByte(' ')
		}
		b.WriteByte(' ')
	}
	writeOperands(b, args, t, sym)
}

// ppcExtended rewrites a mnemonic and its operands into the extended
// mnemonic objdump prints for it, where the decoder prints the base
// instruction.
func ppcExtended(mnem string, args []string) (string, []string) {
	num := func(i int) int {
		if i >= len(args) {
			return -1
		}
		n, err := strconv.Atoi(args[i])
		if err != nil {
			return -1
		}
		return n
	}
	base, dot := strings.CutSuffix(mnem, ".")
	sfx := ""
	if dot {
		sfx = "."
	}
	switch {
	case base == "or" && len(args) == 3 && args[1] == args[2]:
		return "mr" + sfx, args[:2]
	case base == "nor" && len(args) == 3 && args[1] == args[2]:
		return "not" + sfx, args[:2]
	case base == "rldicl" && len(args) == 4:
		sh, mb := num(2), num(3)
		switch {
		case sh > 0 && sh == 64-mb:
			return "srdi" + sfx, []string{args[0], args[1], args[3]}
		case mb == 0:
			return "rotldi" + sfx, args[:3]
		case sh == 0:
			return "clrldi" + sfx, []string{args[0], args[1], args[3]}
		}
	case base == "rldicr" && len(args) == 4:
		sh, me := num(2), num(3)
		switch {
		case sh >= 0 && me == 63-sh:
			return "sldi" + sfx, args[:3]
		case sh == 0:
			return "clrrdi" + sfx, []string{args[0], args[1], strconv.Itoa(63 - me)}
		}
	case base == "rlwinm" && len(args) == 5:
		sh, mb, me := num(2), num(3), num(4)
		switch {
		case mb == 0 && sh > 0 && me == 31-sh:
			return "slwi" + sfx, args[:3]
		case me == 31 && sh > 0 && sh == 32-mb:
			return "srwi" + sfx, []string{args[0], args[1], args[3]}
		case sh == 0 && me == 31:
			return "clrlwi" + sfx, []string{args[0], args[1], args[3]}
		case sh == 0 && mb == 0:
			return "clrrwi" + sfx, []string{args[0], args[1], strconv.Itoa(31 - me)}
		case mb == 0 && me == 31:
			return "rotlwi" + sfx, args[:3]
		}
	case mnem == "isel" && len(args) == 4:
		if args[1] == "r0" { // RA|0
			args[1] = "0"
		}
		switch args[3] {
		case "lt", "gt", "eq":
			return "isel" + args[3], args[:3]
		}
	case base == "vor" && len(args) == 3 && args[1] == args[2]:
		return "vmr" + sfx, args[:2]
	case mnem == "mtcrf" && len(args) == 2 && args[0] == "255":
		return "mtcr", args[1:]
	case mnem == "mtfsf" && len(args) >= 3:
		for len(args) > 2 && args[len(args)-1] == "0" { // L and W of 0
			args = args[:len(args)-1]
		}
		return mnem, args
	case mnem == "xxpermdi" && len(args) == 4:
		same := args[1] == args[2]
		switch dm := args[3]; {
		case same && dm == "0":
			return "xxspltd", []string{args[0], args[1], "0"}
		case same && dm == "3":
			return "xxspltd", []string{args[0], args[1], "1"}
		case same && dm == "2":
			return "xxswapd", args[:2]
		case dm == "0":
			return "xxmrghd", args[:3]
		case dm == "3":
			return "xxmrgld", args[:3]
		}
	case mnem == "tw" && len(args) == 3 && args[0] == "31" && args[1] == "r0" && args[2] == "r0":
		return "trap", nil
	case (mnem == "dcbt" || mnem == "dcbtst") && len(args) == 3 && args[2] == "0":
		if args[0] == "r0" {
			args[0] = "0"
		}
		return mnem + "ct", args[:2]
	case mnem == "sc" && len(args) == 1 && args[0] == "0":
		return "sc", nil
	case (mnem == "bclr" || mnem == "bclrl" || mnem == "bcctr" || mnem == "bcctrl") && len(args) == 3 && args[0] == "20" && args[1] == "lt":
		return "b" + mnem[2:], args[2:]
	case mnem == "xxlor" && len(args) == 3 && args[1] == args[2]:
		return "xxmr", args[:2]
	case (mnem == "tw" || mnem == "td" || mnem == "twi" || mnem == "tdi") && len(args) == 3 && ppcTrap[args[0]] != "":
		i := ""
		if strings.HasSuffix(mnem, "i") {
			i = "i"
		}
		return mnem[:2] + ppcTrap[args[0]] + i, args[1:]
	case mnem == "crxor" && len(args) == 3 && args[0] == args[1] && args[1] == args[2]:
		return "crclr", args[:1]
	case mnem == "creqv" && len(args) == 3 && args[0] == args[1] && args[1] == args[2]:
		return "crset", args[:1]
	case mnem == "crnor" && len(args) == 3 && args[1] == args[2]:
		return "crnot", args[:2]
	case mnem == "cror" && len(args) == 3 && args[1] == args[2]:
		return "crmove", args[:2]
	case base == "rlwnm" && len(args) == 5 && args[3] == "0" && args[4] == "31":
		return "rotlw" + sfx, args[:3]
	case mnem == "xxlnor" && len(args) == 3 && args[1] == args[2]:
		return "xxlnot", args[:2]
	case mnem == "vnor" && len(args) == 3 && args[1] == args[2]:
		return "vnot", args[:2]
	case base == "rldcl" && len(args) == 4 && args[3] == "0":
		return "rotld" + sfx, args[:3]
	case mnem == "dcbt" && len(args) == 3 && args[2] == "8":
		if args[0] == "r0" {
			args[0] = "0"
		}
		return "dcbtds", args[:2]
	case mnem == "mtspr" && len(args) == 2 && ppcSPR[args[0]] != "":
		return "mt" + ppcSPR[args[0]], args[1:]
	case mnem == "mfspr" && len(args) == 2 && ppcSPR[args[1]] != "":
		return "mf" + ppcSPR[args[1]], args[:1]
	case (mnem == "mtvsrd" || mnem == "mtvsrwz" || mnem == "mtvsrwa") && len(args) == 2:
		if fp, vr, ok := ppcVSR(args[0]); ok {
			if vr != "" {
				return "mtvr" + mnem[5:], []string{vr, args[1]}
			}
			return "mtfpr" + mnem[5:], []string{fp, args[1]}
		}
	case (mnem == "mfvsrd" || mnem == "mfvsrwz") && len(args) == 2:
		if fp, vr, ok := ppcVSR(args[1]); ok {
			if vr != "" {
				return "mfvr" + mnem[5:], []string{args[0], vr}
			}
			return "mffpr" + mnem[5:], []string{args[0], fp}
		}
	}
	// An indexed form's RA of 0 means the value 0, not r0.
	switch {
	case (strings.HasPrefix(base, "dcb") || strings.HasPrefix(base, "icb")) && len(args) >= 2 && args[0] == "r0":
		args[0] = "0"
	case len(args) >= 2 && args[len(args)-2] == "r0" && ppcIndexed(base):
		args[len(args)-2] = "0"
	}
	return mnem, args
}

// ppcVSR returns the floating-point register (vs0-vs31: f0-f31) or
// vector register (vs32-vs63: v0-v31) a VSX register operand overlays.
func ppcVSR(a string) (fp, vr string, ok bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(a, "vs"))
	if err != nil || !strings.HasPrefix(a, "vs") || n < 0 || n > 63 {
		return "", "", false
	}
	if n >= 32 {
		return "", "v" + strconv.Itoa(n-32), true
	}
	return "f" + strconv.Itoa(n), "", true
}

// ppcIndexed reports whether mnemonic (without a trailing ".") is an
// indexed load, store or cache operation, whose RA operand of 0 reads as
// the number 0.
func ppcIndexed(m string) bool {
	if m == "lvsl" || m == "lvsr" {
		return true
	}
	if !strings.HasSuffix(m, "x") {
		return false
	}
	for _, p := range []string{"l", "st", "dcb", "icb"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}
