package disasm

import (
	"fmt"
	"strconv"
	"strings"
)

// arm64asm decodes the Armv8.0 instruction set. Extensions that
// compilers and C libraries emit are decoded here: the large-system
// extension's atomics (Armv8.1 LSE: ldadd, ldclr, ldeor, ldset,
// ld[su]max, ld[su]min, swp, cas), the SHA-512 and SHA-3 instructions
// (Armv8.2) of crypto code, the names of the hints that pointer
// authentication and branch target identification (Armv8.3, 8.5) give
// (paciasp, bti c), and the memory tagging extension's instructions
// (Armv8.5 MTE: irg, gmi, ldg, stg, st2g, stzg, stz2g, subp, addg, ...),
// which glibc's tagged allocator and string functions hold.

// lseOps are the load-and-op names by opc (o3 = 0).
var lseOps = [8]string{"add", "clr", "eor", "set", "smax", "smin", "umax", "umin"}

// extARM64 writes objdump's text for an LSE atomic or a SHA-512/SHA-3
// instruction and reports whether word is one.
func extARM64(b *textBuf, word uint32) bool {
	size := word >> 30
	rs, rn, rt := word>>16&31, word>>5&31, word&31
	reg := func(r uint32) string {
		if size == 3 {
			return xreg(r)
		}
		return wreg(r)
	}
	sizeSuffix := [4]string{"b", "h", "", ""}[size]
	switch {
	case word&0x3F200C00 == 0x38200000: // LD<op>, SWP
		acq, rel := word>>23&1 == 1, word>>22&1 == 1
		o3, opc := word>>15&1, word>>12&7
		var name string
		switch {
		case o3 == 0:
			name = "ld" + lseOps[opc]
			if rt == 31 && !acq {
				// ST<op> is LD<op> without a result and acquire.
				name = "st" + lseOps[opc]
			}
		case opc == 0:
			name = "swp"
		default:
			return false
		}
		name += ordering(acq, rel) + sizeSuffix
		b.WriteString(name)
		b.WriteByte('\t')
		b.WriteString(reg(rs))
		if !strings.HasPrefix(name, "st") {
			b.WriteString(", ")
			b.WriteString(reg(rt))
		}
	case word&0x3FA07C00 == 0x08A07C00: // CAS
		acq, rel := word>>22&1 == 1, word>>15&1 == 1
		b.WriteString("cas" + ordering(acq, rel) + sizeSuffix)
		b.WriteByte('\t')
		b.WriteString(reg(rs))
		b.WriteString(", ")
		b.WriteString(reg(rt))
	default:
		return hintARM64(b, word) || pstateARM64(b, word) || mteARM64(b, word) || cryptoARM64(b, word)
	}
	b.WriteString(", [")
	b.WriteString(spreg(rn))
	b.WriteByte(']')
	return true
}

// ordering returns the memory-ordering suffix: "a", "l", "al" or "".
func ordering(acq, rel bool) string {
	s := ""
	if acq {
		s += "a"
	}
	if rel {
		s += "l"
	}
	return s
}

// xreg names a 64-bit register, where 31 is xzr.
func xreg(r uint32) string {
	if r == 31 {
		return "xzr"
	}
	return "x" + strconv.Itoa(int(r))
}

// wreg names a 32-bit register, where 31 is wzr.
func wreg(r uint32) string {
	if r == 31 {
		return "wzr"
	}
	return "w" + strconv.Itoa(int(r))
}

// spreg names a base register, where 31 is the stack pointer.
func spreg(r uint32) string {
	if r == 31 {
		return "sp"
	}
	return "x" + strconv.Itoa(int(r))
}

// arm64Hints are objdump's names of the hint instructions (HINT #imm)
// that arm64asm shows by number.
var arm64Hints = map[uint32]string{
	7: "xpaclri", 8: "pacia1716", 10: "pacib1716", 12: "autia1716", 14: "autib1716",
	16: "esb", 17: "psb\tcsync", 18: "tsb\tcsync", 20: "csdb", 22: "clearbhb",
	24: "paciaz", 25: "paciasp", 26: "pacibz", 27: "pacibsp", 28: "autiaz", 29: "autiasp", 30: "autibz", 31: "autibsp",
	32: "bti", 34: "bti\tc", 36: "bti\tj", 38: "bti\tjc",
}

// pstateFields are the PSTATE fields MSR (immediate) writes, by op1<<3 |
// op2, with whether the immediate is one bit (objdump shows the others'
// words as the system register move they alias).
var pstateFields = map[uint32]struct {
	name string
	bit  bool
}{
	3: {"uao", true}, 4: {"pan", true}, 5: {"spsel", true}, 1 << 3: {"allint", true},
	3<<3 | 1: {"ssbs", true}, 3<<3 | 2: {"dit", true}, 3<<3 | 4: {"tco", true}, 3<<3 | 6: {"daifset", false}, 3<<3 | 7: {"daifclr", false},
}

// pstateARM64 writes objdump's text for an MSR (immediate) of a PSTATE
// field ("msr dit, #0x1", which Go's crypto code uses; arm64asm knows
// spsel and the DAIF fields only), the flag manipulation instructions
// in its encoding space (cfinv, xaflag, axflag) and SME's smstart and
// smstop, and reports whether word is one of that space.
func pstateARM64(b *textBuf, word uint32) bool {
	if word&0xfff8f01f != 0xd500401f {
		return false
	}
	op1, crm, op2 := word>>16&7, word>>8&15, word>>5&7
	switch f, ok := pstateFields[op1<<3|op2]; {
	case op1 == 0 && crm == 0 && op2 <= 2:
		b.WriteString([]string{"cfinv", "xaflag", "axflag"}[op2])
	case ok && (!f.bit || crm <= 1):
		b.WriteString("msr\t" + f.name + ", #0x" + strconv.FormatUint(uint64(crm), 16))
	case op1 == 3 && op2 == 3 && crm >= 2 && crm <= 7:
		name := []string{"smstop", "smstart"}[crm&1]
		if op := []string{"", "sm", "za", ""}[crm>>1]; op != "" {
			name += "\t" + op
		}
		b.WriteString(name)
	default:
		b.WriteString(fmt.Sprintf("msr\ts0_%d_c4_c%d_%d, xzr", op1, crm, op2))
	}
	return true
}

// hintARM64 writes objdump's name of a hint instruction that arm64asm
// shows by number, and reports whether word is one.
func hintARM64(b *textBuf, word uint32) bool {
	if word&^(0x7f<<5) != 0xd503201f {
		return false
	}
	name, ok := arm64Hints[word>>5&0x7f]
	if ok {
		b.WriteString(name)
	}
	return ok
}

// mteARM64 writes objdump's text for an instruction of the memory
// tagging extension and reports whether word is one.
func mteARM64(b *textBuf, word uint32) bool {
	rd, rn, rm := word&31, word>>5&31, word>>16&31
	ops := func(name string, args ...string) bool {
		b.WriteString(name)
		b.WriteByte('\t')
		b.WriteString(strings.Join(args, ", "))
		return true
	}
	switch {
	case word&0xffe0fc00 == 0x9ac01000: // IRG Xd|SP, Xn|SP{, Xm}
		if rm == 31 {
			return ops("irg", spreg(rd), spreg(rn))
		}
		return ops("irg", spreg(rd), spreg(rn), xreg(rm))
	case word&0xffe0fc00 == 0x9ac01400: // GMI Xd, Xn|SP, Xm
		return ops("gmi", xreg(rd), spreg(rn), xreg(rm))
	case word&0xffe0fc00 == 0x9ac00000: // SUBP Xd, Xn|SP, Xm|SP
		return ops("subp", xreg(rd), spreg(rn), spreg(rm))
	case word&0xffe0fc00 == 0xbac00000: // SUBPS, CMPP without a result
		if rd == 31 {
			return ops("cmpp", spreg(rn), spreg(rm))
		}
		return ops("subps", xreg(rd), spreg(rn), spreg(rm))
	case word&0xbfc0c000 == 0x91800000: // ADDG, SUBG Xd|SP, Xn|SP, #uimm6*16, #uimm4
		name := "addg"
		if word&(1<<30) != 0 {
			name = "subg"
		}
		return ops(name, spreg(rd), spreg(rn), "#0x"+strconv.FormatUint(uint64(word>>16&0x3f)*16, 16), "#0x"+strconv.FormatUint(uint64(word>>10&0xf), 16))
	case word&0xff200000 == 0xd9200000: // the tag loads and stores
		opc, op2 := word>>22&3, word>>10&3
		imm := int64(int32(word<<11)>>23) * 16 // simm9, in granules of 16 bytes
		if op2 == 0 {
			if opc == 1 { // LDG Xt, [Xn|SP, #simm]
				if imm == 0 {
					return ops("ldg", xreg(rd), "["+spreg(rn)+"]")
				}
				return ops("ldg", xreg(rd), "["+spreg(rn)+", #"+strconv.FormatInt(imm, 10)+"]")
			}
			if imm != 0 {
				return false // STZGM, STGM, LDGM take no offset
			}
			return ops([4]string{"stzgm", "", "stgm", "ldgm"}[opc], xreg(rd), "["+spreg(rn)+"]")
		}
		name := [4]string{"stg", "stzg", "st2g", "stz2g"}[opc]
		off := ", #" + strconv.FormatInt(imm, 10)
		switch op2 {
		case 1: // post-index
			return ops(name, spreg(rd), "["+spreg(rn)+"]"+off)
		case 3: // pre-index
			return ops(name, spreg(rd), "["+spreg(rn)+off+"]!")
		}
		if imm == 0 {
			off = ""
		}
		return ops(name, spreg(rd), "["+spreg(rn)+off+"]")
	}
	return false
}

// cryptoARM64 writes objdump's text for a SHA-512 or SHA-3 instruction
// and reports whether word is one.
func cryptoARM64(b *textBuf, word uint32) bool {
	rd, rn, rm, ra := word&31, word>>5&31, word>>16&31, word>>10&31
	v := func(r uint32, arr string) string { return "v" + strconv.Itoa(int(r)) + "." + arr }
	q := func(r uint32) string { return "q" + strconv.Itoa(int(r)) }
	var name string
	var ops []string
	switch {
	case word&0xFFE0FC00 == 0xCE608000:
		name, ops = "sha512h", []string{q(rd), q(rn), v(rm, "2d")}
	case word&0xFFE0FC00 == 0xCE608400:
		name, ops = "sha512h2", []string{q(rd), q(rn), v(rm, "2d")}
	case word&0xFFE0FC00 == 0xCE608800:
		name, ops = "sha512su1", []string{v(rd, "2d"), v(rn, "2d"), v(rm, "2d")}
	case word&0xFFE0FC00 == 0xCE608C00:
		name, ops = "rax1", []string{v(rd, "2d"), v(rn, "2d"), v(rm, "2d")}
	case word&0xFFFFFC00 == 0xCEC08000:
		name, ops = "sha512su0", []string{v(rd, "2d"), v(rn, "2d")}
	case word&0xFFE08000 == 0xCE000000:
		name, ops = "eor3", []string{v(rd, "16b"), v(rn, "16b"), v(rm, "16b"), v(ra, "16b")}
	case word&0xFFE08000 == 0xCE200000:
		name, ops = "bcax", []string{v(rd, "16b"), v(rn, "16b"), v(rm, "16b"), v(ra, "16b")}
	case word&0xFFE00000 == 0xCE800000:
		name, ops = "xar", []string{v(rd, "2d"), v(rn, "2d"), v(rm, "2d"), "#" + strconv.Itoa(int(word>>10&63))}
	default:
		return false
	}
	b.WriteString(name)
	b.WriteByte('\t')
	b.WriteString(strings.Join(ops, ", "))
	return true
}
