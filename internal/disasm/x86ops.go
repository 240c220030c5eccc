package disasm

import (
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// This file rewrites x86asm's operands the way objdump 2.40 prints them.
// x86asm's GNU and Intel printers follow an older libopcodes; the
// differences measured on libc (doc/disasm.md) are in memory operands
// (explicit zero displacements, scale 1, %riz, sign of 32-bit
// displacements, Intel's "ds:" absolute form) and in immediates (objdump
// prints them unsigned at the operand size). Registers and branch
// targets keep x86asm's text.

// splitArgs splits an operand list at the commas outside (), [] and {}.
func splitArgs(ops string) []string {
	return appendArgs(make([]string, 0, 4), ops)
}

// appendArgs appends the operands of ops to out, as splitArgs splits them.
func appendArgs(out []string, ops string) []string {
	depth, start := 0, 0
	for i := 0; i < len(ops); i++ {
		switch ops[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(ops[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(ops[start:]))
}

// regName returns the name of a base or index register without "%".
func regName(r x86asm.Reg) string {
	switch {
	case r >= x86asm.R8L && r <= x86asm.R15L:
		return "r" + strconv.Itoa(int(r-x86asm.R8L)+8) + "d"
	case r >= x86asm.R8W && r <= x86asm.R15W:
		return "r" + strconv.Itoa(int(r-x86asm.R8W)+8) + "w"
	case r >= x86asm.R8B && r <= x86asm.R15B:
		return "r" + strconv.Itoa(int(r-x86asm.R8B)+8) + "b"
	case r >= x86asm.X0 && r <= x86asm.X31:
		return "xmm" + strconv.Itoa(int(r-x86asm.X0))
	case r >= x86asm.Y0 && r <= x86asm.Y31:
		return "ymm" + strconv.Itoa(int(r-x86asm.Y0))
	case r >= x86asm.Z0 && r <= x86asm.Z31:
		return "zmm" + strconv.Itoa(int(r-x86asm.Z0))
	}
	return strings.ToLower(r.String())
}

// hex formats v as objdump does: "0x" and lower-case hex digits.
func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// signedHex formats v as "0x10" or "-0x10".
func signedHex(v int64) string {
	if v < 0 {
		return "-" + hex(uint64(-v))
	}
	return hex(uint64(v))
}

// modrm returns the instruction's ModRM byte, found by skipping the
// prefixes and the opcode bytes of src.
func modrm(src []byte, mode int) (byte, bool) {
	i := 0
	for i < len(src) {
		switch b := src[i]; {
		case b == 0x66 || b == 0x67 || b == 0xF0 || b == 0xF2 || b == 0xF3 ||
			b == 0x2E || b == 0x36 || b == 0x3E || b == 0x26 || b == 0x64 || b == 0x65:
			i++
			continue
		case mode == 64 && b&0xF0 == 0x40:
			i++
			continue
		}
		break
	}
	if i >= len(src) {
		return 0, false
	}
	switch src[i] {
	case 0xC5: // two-byte VEX, map 0F
		i += 3
	case 0xC4: // three-byte VEX
		i += 4
	case 0x62: // EVEX
		i += 5
	case 0x0F:
		if i+1 < len(src) && (src[i+1] == 0x38 || src[i+1] == 0x3A) {
			i += 3
		} else {
			i += 2
		}
	default:
		i++
	}
	if i >= len(src) {
		return 0, false
	}
	return src[i], true
}

// memOperand formats a memory operand. explicitDisp says the encoding
// carries a displacement even when it is zero (objdump prints "0x0").
func memOperand(inst *x86asm.Inst, m x86asm.Mem, explicitDisp, intel bool) string {
	disp := m.Disp
	if inst.AddrSize != 16 && (m.Base != 0 || m.Index != 0) {
		// x86asm keeps some 32-bit displacements zero-extended.
		disp = int64(int32(disp))
	}
	seg := ""
	if m.Segment != 0 && !(inst.Mode == 64 && m.Segment != x86asm.FS && m.Segment != x86asm.GS && stringSegment(inst.Op, m.Base) == 0) {
		seg = strings.ToLower(m.Segment.String()) + ":"
	}
	noIndex := m.Index == 0 && (m.Scale <= 1) && (m.Base == x86asm.RSP || m.Base == x86asm.ESP || m.Base == x86asm.R12 || m.Base == x86asm.R12L || m.Scale == 0)
	if intel {
		if m.Base == 0 && m.Index == 0 {
			if seg == "" {
				seg = "ds:"
			}
			return seg + absDisp(inst, disp)
		}
		var b strings.Builder
		b.WriteString(seg)
		b.WriteByte('[')
		if m.Base != 0 {
			b.WriteString(regName(m.Base))
		}
		if !noIndex {
			if m.Base != 0 {
				b.WriteByte('+')
			}
			idx := "riz"
			if m.Index != 0 {
				idx = regName(m.Index)
			} else if inst.AddrSize == 32 {
				idx = "eiz"
			}
			b.WriteString(idx)
			b.WriteByte('*')
			b.WriteString(strconv.Itoa(int(max(m.Scale, 1))))
		}
		if disp != 0 || explicitDisp || m.Base == 0 {
			if m.Base == x86asm.RIP && m.Index == 0 {
				// objdump prints RIP offsets unsigned in Intel syntax.
				b.WriteByte('+')
				b.WriteString(hex(uint64(disp)))
			} else if disp < 0 {
				b.WriteString(signedHex(disp))
			} else {
				b.WriteByte('+')
				b.WriteString(hex(uint64(disp)))
			}
		}
		b.WriteByte(']')
		return b.String()
	}
	var b strings.Builder
	b.WriteString("%" + seg)
	if seg == "" {
		b.Reset()
	}
	if m.Base == 0 && m.Index == 0 {
		return b.String() + absDisp(inst, disp)
	}
	if disp != 0 || explicitDisp || m.Base == 0 {
		b.WriteString(signedHex(disp))
	}
	b.WriteByte('(')
	if m.Base != 0 {
		b.WriteString("%" + regName(m.Base))
	}
	if !noIndex {
		idx := "riz"
		if m.Index != 0 {
			idx = regName(m.Index)
		} else if inst.AddrSize == 32 {
			idx = "eiz"
		}
		b.WriteString(",%" + idx + "," + strconv.Itoa(int(max(m.Scale, 1))))
	}
	b.WriteByte(')')
	return b.String()
}

// absDisp formats an absolute address operand, unsigned at the address size.
func absDisp(inst *x86asm.Inst, disp int64) string {
	if inst.AddrSize == 32 {
		return hex(uint64(uint32(disp)))
	}
	if inst.AddrSize == 16 {
		return hex(uint64(uint16(disp)))
	}
	if !movabs(inst) && disp == int64(uint32(disp)) {
		// A disp32 is sign-extended to 64 bits; x86asm keeps it unsigned.
		disp = int64(int32(disp))
	}
	return hex(uint64(disp))
}

// regBytes returns the width in bytes of a general-purpose register, or 0.
func regBytes(r x86asm.Reg) int {
	switch {
	case r >= x86asm.AL && r <= x86asm.R15B:
		return 1
	case r >= x86asm.AX && r <= x86asm.R15W:
		return 2
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return 4
	case r >= x86asm.RAX && r <= x86asm.R15:
		return 8
	}
	return 0
}

// immOperand formats an immediate unsigned at the operand's size, as
// objdump does ("$0xffffffff" for -1 in a 32-bit operation).
func immOperand(inst *x86asm.Inst, v x86asm.Imm, intel bool) string {
	size := 0
	for _, a := range inst.Args {
		switch a := a.(type) {
		case x86asm.Reg:
			if size == 0 {
				size = regBytes(a)
			}
		case x86asm.Mem:
			if size == 0 {
				size = inst.MemBytes
			}
		}
	}
	if size == 0 || size > 8 {
		size = inst.DataSize / 8
	}
	if inst.Op == x86asm.PUSH && inst.Mode == 64 && inst.DataSize != 16 {
		size = 8 // pushed sign-extended to 64 bits: "push $0xffffffffffffffff"
	}
	u := uint64(v)
	switch size {
	case 1:
		u = uint64(uint8(u))
	case 2:
		u = uint64(uint16(u))
	case 4:
		u = uint64(uint32(u))
	}
	if intel {
		return hex(u)
	}
	return "$" + hex(u)
}

// stringSegment returns the segment objdump always prints for a string
// instruction's memory operand with base register base ("%es:(%rdi)"),
// or 0.
func stringSegment(op x86asm.Op, base x86asm.Reg) x86asm.Reg {
	switch op {
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ,
		x86asm.INSB, x86asm.INSW, x86asm.INSD,
		x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ,
		x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ,
		x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
		x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD:
	default:
		return 0
	}
	switch base {
	case x86asm.RDI, x86asm.EDI, x86asm.DI:
		return x86asm.ES
	case x86asm.RSI, x86asm.ESI, x86asm.SI:
		return x86asm.DS
	}
	return 0
}
