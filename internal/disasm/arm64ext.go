package disasm

import (
	"strconv"
	"strings"
)

// arm64asm decodes the Armv8.0 instruction set. Two extensions that
// compilers and Go's standard library emit are decoded here: the
// large-system extension's atomics (Armv8.1 LSE: ldadd, ldclr, ldeor,
// ldset, ld[su]max, ld[su]min, swp, cas), and the SHA-512 and SHA-3
// instructions (Armv8.2) of crypto code.

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
		return cryptoARM64(b, word)
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
