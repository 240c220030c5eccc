package disasm

import (
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// This file fixes x86asm's Intel syntax for the x87 and string
// instructions, where objdump -M intel leaves out implicit operands.

// fixIntelX87 rewrites an x87 instruction's Intel operands. x86asm
// prints the implicit st(0) that the encoding leaves out ("fchs st0",
// "fld st0, ptr [rsp]"); objdump does not ("fchs", "fld TBYTE PTR
// [rsp]"), and spells the registers "st" and "st(1)".
func fixIntelX87(mnem, ops string, inst *x86asm.Inst, src []byte) (string, string) {
	if op := opcodeByte(src); op < 0xD8 || op > 0xDF {
		return mnem, ops
	}
	var args []x86asm.Arg
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		args = append(args, a)
	}
	pieces := splitArgs(ops)
	switch {
	case len(args) == 0:
		return mnem, ""
	case len(args) == 1 && len(pieces) == 2:
		// The explicit operand is the one that is not x86asm's st0.
		p := pieces[1]
		if p == "st0" {
			p = pieces[0]
		}
		if m, ok := args[0].(x86asm.Mem); ok {
			if strings.HasPrefix(p, "PTR ") || strings.HasPrefix(p, "ptr ") {
				kw := memSizeKeyword(inst.MemBytes)
				if kw == "PTR" {
					kw = "TBYTE PTR" // the 80-bit forms, for which x86asm has no size
				}
				p = kw + p[3:]
			}
			return mnem, memPiece(inst, m, src, p, true)
		}
		return mnem, x87Reg(p, false)
	case len(pieces) == 1 && len(args) == 1:
		return mnem, x87Reg(pieces[0], false)
	case len(pieces) == 2 && len(args) == 2:
		both := pieces[0] == "st0" && pieces[1] == "st0"
		return mnem, x87Reg(pieces[0], true) + "," + x87Reg(pieces[1], !both)
	}
	return mnem, ops
}

// x87Reg spells x86asm's "stN" as objdump does: "st(N)", or "st" for
// st0 beside another register (short).
func x87Reg(p string, short bool) string {
	if len(p) != 3 || !strings.HasPrefix(p, "st") {
		return p
	}
	if p == "st0" && short {
		return "st"
	}
	return "st(" + p[2:] + ")"
}

// opcodeByte returns the first byte after the legacy and REX prefixes.
func opcodeByte(src []byte) byte {
	for _, b := range src {
		switch {
		case b == 0x66 || b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3 || b == 0x2E ||
			b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65 || b&0xF0 == 0x40:
			continue
		}
		return b
	}
	return 0
}

// memSizeKeyword returns objdump's Intel size keyword for an operand of
// n bytes.
func memSizeKeyword(n int) string {
	switch n {
	case 1:
		return "BYTE PTR"
	case 2:
		return "WORD PTR"
	case 4:
		return "DWORD PTR"
	case 8:
		return "QWORD PTR"
	case 10:
		return "TBYTE PTR"
	case 16:
		return "XMMWORD PTR"
	case 32:
		return "YMMWORD PTR"
	case 64:
		return "ZMMWORD PTR"
	}
	return "PTR"
}

// stosAcc is the accumulator a STOS stores, by operation.
var stosAcc = map[x86asm.Op]string{x86asm.STOSB: "al", x86asm.STOSW: "ax", x86asm.STOSD: "eax", x86asm.STOSQ: "rax"}

// fixIntelString spells string instructions as objdump -M intel does:
// "rep stos DWORD PTR es:[rdi],eax", "movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]".
func fixIntelString(mnem, ops string, inst *x86asm.Inst) (string, string) {
	base := mnem
	if i := strings.LastIndexByte(mnem, ' '); i >= 0 {
		base = mnem[i+1:]
	}
	if base == "" {
		return mnem, ops
	}
	short := mnem[:len(mnem)-len(base)] + base[:len(base)-1] // "stosd" is "stos"
	switch inst.Op {
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ:
		if !strings.Contains(ops, "es:") {
			ops = strings.Replace(ops, "[", "es:[", 1)
		}
		if !strings.Contains(ops, ",") {
			ops += "," + stosAcc[inst.Op]
		}
		return short, ops
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ:
		if strings.Contains(ops, "[") {
			return short, ops
		}
	}
	return mnem, ops
}

// ssePred are the SSE comparison predicates objdump folds into the
// mnemonic ("cmpnlesd xmm11,xmm0" for cmpsd with predicate 6).
var ssePred = [8]string{"eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord"}

// fixIntelSSECompare rewrites x86asm's Intel "cmpsd_xmm x, y, 0x6" as
// objdump's "cmpnlesd x,y"; x86asm's GNU printer does this itself.
func fixIntelSSECompare(mnem, ops string, inst *x86asm.Inst) (string, string) {
	suffix := ""
	switch inst.Op {
	case x86asm.CMPPS:
		suffix = "ps"
	case x86asm.CMPPD:
		suffix = "pd"
	case x86asm.CMPSS:
		suffix = "ss"
	case x86asm.CMPSD_XMM:
		suffix = "sd"
	default:
		return mnem, ops
	}
	pieces := splitArgs(ops)
	v, err := strconv.ParseUint(strings.TrimPrefix(pieces[len(pieces)-1], "0x"), 16, 8)
	if len(pieces) != 3 || err != nil || v >= 8 {
		return mnem, ops
	}
	pre := ""
	if i := strings.LastIndexByte(mnem, ' '); i >= 0 {
		pre = mnem[:i+1]
	}
	return pre + "cmp" + ssePred[v] + suffix, strings.Join(pieces[:2], ",")
}
