package disasm

import (
	"strconv"
	"strings"
)

// arm64asm decodes the Armv8.0 instruction set; the large-system
// extension's atomics (Armv8.1 LSE: ldadd, ldclr, ldeor, ldset, ld[su]max,
// ld[su]min, swp, cas), which GCC, clang and Go emit for atomic
// operations, are decoded here.

// lseOps are the load-and-op names by opc (o3 = 0).
var lseOps = [8]string{"add", "clr", "eor", "set", "smax", "smin", "umax", "umin"}

// lseARM64 writes objdump's text for an LSE atomic and reports whether
// word is one.
func lseARM64(b *strings.Builder, word uint32) bool {
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
		return false
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

func xreg(r uint32) string {
	if r == 31 {
		return "xzr"
	}
	return "x" + strconv.Itoa(int(r))
}

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
