package disasm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// neon decodes the Advanced SIMD (NEON) instruction x in its ARM
// encoding (data processing 1111 001U, element and structure loads and
// stores 1111 0100; Thumb's are the same bits under another prefix, see
// thumbNEON), which armasm (v0.33) does not decode, as objdump prints it,
// with the condition suffix c ("" outside a Thumb IT block) after the
// mnemonic. ok is false for an encoding that is not an Advanced SIMD
// instruction of ARMv7.
func neon(x uint32, c string) (text string, ok bool) {
	n := neonInst{x: x, c: c}
	switch {
	case x>>25 == 0x79:
		ok = n.dataProcessing()
	case x>>24 == 0xf4 && x&(1<<20) == 0:
		ok = n.loadStore()
	}
	if !ok {
		return "", false
	}
	return n.b.String(), true
}

// thumbNEON returns the ARM encoding of the Thumb Advanced SIMD
// instruction x (first halfword high): 111U 1111 becomes 1111 001U, 1111
// 1001 becomes 1111 0100; ok is false for other Thumb instructions.
func thumbNEON(x uint32) (arm uint32, ok bool) {
	switch {
	case x>>24&0xef == 0xef:
		return 0xf2000000 | x>>28&1<<24 | x&0x00ffffff, true
	case x>>24 == 0xf9:
		return 0xf4000000 | x&0x00ffffff, true
	}
	return 0, false
}

// neonInst is one Advanced SIMD instruction being formatted.
type neonInst struct {
	x uint32
	c string
	b textBuf
}

// The register fields: D:Vd, N:Vn and M:Vm.
func (n *neonInst) vd() uint32 { return n.x>>12&15 | n.x>>18&16 }
func (n *neonInst) vn() uint32 { return n.x>>16&15 | n.x>>3&16 }
func (n *neonInst) vm() uint32 { return n.x&15 | n.x>>1&16 }

// q reports whether the instruction works on quadwords (bit 6).
func (n *neonInst) q() bool { return n.x&(1<<6) != 0 }

// dReg names doubleword register r.
func dReg(r uint32) string { return "d" + strconv.Itoa(int(r)) }

// qReg names the quadword register whose first doubleword is r, as
// objdump does an odd one.
func qReg(r uint32) string {
	if r&1 != 0 {
		return "<illegal reg q" + strconv.Itoa(int(r>>1)) + ".5>"
	}
	return "q" + strconv.Itoa(int(r>>1))
}

// reg names r as a quadword register if q, else as a doubleword one.
func reg(r uint32, q bool) string {
	if q {
		return qReg(r)
	}
	return dReg(r)
}

// width is an element size as objdump prints it: base<<v if v is in
// [lo, hi], else "<illegal width N>".
func width(base int, v, lo, hi uint32) string {
	if v < lo || v > hi {
		return "<illegal width " + strconv.Itoa(base<<v) + ">"
	}
	return strconv.Itoa(base << v)
}

// su is "u" if bit 24 (U) is set, else "s".
func (n *neonInst) su() string {
	if n.x&(1<<24) != 0 {
		return "u"
	}
	return "s"
}

// op writes the mnemonic (the condition goes after its first part, as
// in "vaddeq.i32") and the operands.
func (n *neonInst) op(name, typ string, args ...string) { writeInst(&n.b, name+n.c+typ, args) }

// dataProcessing decodes the Advanced SIMD data-processing instructions
// (ARMv7-A manual, A7.4).
func (n *neonInst) dataProcessing() bool {
	x := n.x
	a, b, c := x>>19&31, x>>8&15, x>>4&15
	u := x>>24&1 == 1
	switch {
	case a&0x10 == 0:
		return n.threeSame()
	case c&1 == 1:
		if a&0x17 == 0x10 && c&8 == 0 {
			return n.modifiedImm()
		}
		return n.twoShift()
	case a&0x14 == 0x10 || a&0x16 == 0x14:
		if c&5 == 0 {
			return n.threeDiff()
		}
		if c&5 == 4 {
			return n.scalar()
		}
	case !u:
		n.op("vext", ".8", reg(n.vd(), n.q()), reg(n.vn(), n.q()), reg(n.vm(), n.q()), "#"+strconv.Itoa(int(b)))
		return true
	case b&8 == 0:
		return n.twoMisc()
	case b&0xc == 8:
		name := "vtbl"
		if x&(1<<6) != 0 {
			name = "vtbx"
		}
		first, cnt := n.vn(), x>>8&3
		list := "{" + dReg(first) + "}"
		switch {
		case cnt == 0:
		case first+cnt >= 32:
			list = "{" + dReg(first) + "-<overflow reg d" + strconv.Itoa(int(first+cnt)) + "}"
		default:
			list = "{" + dReg(first) + "-" + dReg(first+cnt) + "}"
		}
		n.op(name, ".8", dReg(n.vd()), list, dReg(n.vm()))
		return true
	case b == 0xc && c&9 == 0:
		imm4 := x >> 16 & 15
		var size, idx uint32
		switch {
		case imm4&1 != 0:
			size, idx = 8, imm4>>1
		case imm4&2 != 0:
			size, idx = 16, imm4>>2
		case imm4&4 != 0:
			size, idx = 32, imm4>>3
		default:
			return false
		}
		n.op("vdup", "."+strconv.Itoa(int(size)), reg(n.vd(), n.q()), dReg(n.vm())+"["+strconv.Itoa(int(idx))+"]")
		return true
	}
	return false
}

// neonSameSU are, by opcode (bits 11:8) and bit 4, the instructions on
// three registers of the same length whose type is signed or unsigned
// (by U) of a size: their name, whether 64-bit elements are allowed, and
// whether the shift comes last (vshl d, m, n).
var neonSameSU = map[uint32]struct {
	name       string
	long, swap bool
}{
	0: {"vhadd", false, false}, 1: {"vqadd", true, false}, 2: {"vrhadd", false, false},
	4: {"vhsub", false, false}, 5: {"vqsub", true, false}, 6: {"vcgt", false, false}, 7: {"vcge", false, false},
	8: {"vshl", true, true}, 9: {"vqshl", true, true}, 10: {"vrshl", true, true}, 11: {"vqrshl", true, true},
	12: {"vmax", false, false}, 13: {"vmin", false, false}, 14: {"vabd", false, false}, 15: {"vaba", false, false},
	20: {"vpmax", false, false}, 21: {"vpmin", false, false},
}

// neonSameByU are, by opcode and bit 4, the instructions on three
// registers of the same length that U chooses between (U = 0 first):
// their names, type prefixes and the element sizes allowed (8 << lo to 8
// << hi).
var neonSameByU = map[uint32][2]struct {
	name, typ string
	lo, hi    uint32
}{
	16: {{"vadd", ".i", 0, 3}, {"vsub", ".i", 0, 3}},
	17: {{"vtst", ".", 0, 2}, {"vceq", ".i", 0, 2}},
	18: {{"vmla", ".i", 0, 2}, {"vmls", ".i", 0, 2}},
	19: {{"vmul", ".i", 0, 2}, {"vmul", ".p", 0, 2}},
	22: {{"vqdmulh", ".s", 1, 2}, {"vqrdmulh", ".s", 1, 2}},
	23: {{"vpadd", ".i", 0, 2}, {}},
}

// neonSameFloat names the floating-point instructions on three
// registers of the same length, by opcode and bit 4 (from 1100:1), U and
// bit 21; "" is not one.
var neonSameFloat = [7][2][2]string{
	{{"vfma", "vfms"}, {"", ""}},
	{{"vadd", "vsub"}, {"vpadd", "vabd"}},
	{{"vmla", "vmls"}, {"vmul", ""}},
	{{"vceq", ""}, {"vcge", "vcgt"}},
	{{"", ""}, {"vacge", "vacgt"}},
	{{"vmax", "vmin"}, {"vpmax", "vpmin"}},
	{{"vrecps", "vrsqrts"}, {"", ""}},
}

// threeSame decodes the instructions on three registers of the same
// length.
func (n *neonInst) threeSame() bool {
	x := n.x
	opc, bit4, size := x>>8&15, x>>4&1, x>>20&3
	q := n.q()
	d, nn, m := reg(n.vd(), q), reg(n.vn(), q), reg(n.vm(), q)
	s2, s3 := width(8, size, 0, 2), width(8, size, 0, 3)
	f := "f32"
	if x&(1<<20) != 0 {
		f = "f16"
	}
	if e, ok := neonSameSU[opc<<1|bit4]; ok {
		s := s2
		if e.long {
			s = s3
		}
		if e.swap {
			n.op(e.name, "."+n.su()+s, d, m, nn)
		} else {
			n.op(e.name, "."+n.su()+s, d, nn, m)
		}
		return true
	}
	if e, ok := neonSameByU[opc<<1|bit4]; ok {
		ee := e[x>>24&1]
		if ee.name == "" {
			return false
		}
		n.op(ee.name, ee.typ+width(8, size, ee.lo, ee.hi), d, nn, m)
		return true
	}
	if k := opc<<1 | bit4; k >= 25 {
		name := neonSameFloat[k-25][x>>24&1][x>>21&1]
		if name == "" {
			return false
		}
		n.op(name, "."+f, d, nn, m)
		return true
	}
	if opc<<1|bit4 != 3 {
		return false
	}
	// The bitwise operations, by U and bits 21:20.
	names := [2][4]string{{"vand", "vbic", "vorr", "vorn"}, {"veor", "vbsl", "vbit", "vbif"}}
	name := names[x>>24&1][size]
	if name == "vorr" && n.vn() == n.vm() {
		n.op("vmov", "", d, m)
		return true
	}
	n.op(name, "", d, nn, m)
	return true
}

// modifiedImm decodes vmov, vmvn, vorr and vbic with an immediate, and
// writes the value's hex as objdump does.
func (n *neonInst) modifiedImm() bool {
	x := n.x
	cmode, op := x>>8&15, x>>5&1
	bits := x>>24&1<<7 | x>>16&7<<4 | x&15
	d := reg(n.vd(), n.q())
	var name, typ, imm string
	switch {
	case cmode < 8 || cmode >= 12 && cmode < 14:
		var v uint32
		if cmode < 8 {
			v = bits << (8 * (cmode >> 1 & 3))
		} else {
			sh := cmode&1 + 1
			v = bits<<(8*sh) | (1<<(8*sh) - 1)
		}
		name, typ = "vmov", ".i32"
		switch {
		case cmode < 8 && cmode&1 == 1 && op == 0:
			name = "vorr"
		case cmode < 8 && cmode&1 == 1:
			name = "vbic"
		case op == 1:
			name = "vmvn"
		}
		imm = fmt.Sprintf("#%d\t@ 0x%08x", int32(v), v)
	case cmode < 12:
		v := bits << (8 * (cmode >> 1 & 1))
		name, typ = "vmov", ".i16"
		switch {
		case cmode&1 == 1 && op == 0:
			name = "vorr"
		case cmode&1 == 1:
			name = "vbic"
		case op == 1:
			name = "vmvn"
		}
		imm = fmt.Sprintf("#%d\t@ 0x%04x", v, v)
	case cmode == 14 && op == 0:
		name, typ = "vmov", ".i8"
		imm = fmt.Sprintf("#%d\t@ 0x%02x", bits, bits)
	case cmode == 14:
		var lo, hi uint32
		for i := 7; i >= 0; i-- {
			var m uint32
			if bits>>i&1 != 0 {
				m = 0xff
			}
			if i <= 3 {
				lo = lo<<8 | m
			} else {
				hi = hi<<8 | m
			}
		}
		name, typ = "vmov", ".i64"
		imm = fmt.Sprintf("#0x%08x%08x", hi, lo)
	case op == 0:
		v := (bits&0x7f)<<19 | (bits&0x80)<<24
		if bits&0x40 != 0 {
			v |= 0x3c << 24
		} else {
			v |= 0x40 << 24
		}
		name, typ = "vmov", ".f32"
		imm = fmt.Sprintf("#%.7g\t@ 0x%08x", math.Float32frombits(v), v)
	default:
		return false
	}
	n.op(name, typ, d, imm)
	return true
}

// twoShift decodes the instructions on two registers and a shift amount.
func (n *neonInst) twoShift() bool {
	x := n.x
	imm6, opc := x>>16&63, x>>8&15
	l, bit6 := x>>7&1, x>>6&1
	u := x>>24&1 == 1
	// The element size and the field that holds the shift: 8, 16 or 32
	// bits by the top set bit of imm6, 64 if L.
	var esize, field uint32
	switch {
	case l == 1:
		esize, field = 64, imm6
	case imm6>>3 == 1:
		esize, field = 8, imm6&7
	case imm6>>4 == 1:
		esize, field = 16, imm6&15
	default:
		esize, field = 32, imm6&31
	}
	right := "#" + strconv.Itoa(int(esize-field))
	left := "#" + strconv.Itoa(int(field))
	q := n.q()
	d, m := reg(n.vd(), q), reg(n.vm(), q)
	es := strconv.Itoa(int(esize))
	switch opc {
	case 0, 1, 2, 3:
		names := [4]string{"vshr", "vsra", "vrshr", "vrsra"}
		n.op(names[opc], "."+n.su()+es, d, m, right)
	case 4:
		if !u {
			return false
		}
		n.op("vsri", "."+es, d, m, right)
	case 5:
		if u {
			n.op("vsli", "."+es, d, m, left)
		} else {
			n.op("vshl", "."+n.su()+es, d, m, left) // objdump 2.40 says s, not i
		}
	case 6:
		if !u {
			return false
		}
		n.op("vqshlu", ".s"+es, d, m, left)
	case 7:
		n.op("vqshl", "."+n.su()+es, d, m, left)
	case 8, 9:
		if l == 1 {
			return false
		}
		dd, mq := dReg(n.vd()), qReg(n.vm())
		wide := strconv.Itoa(int(esize * 2))
		var name, typ string
		switch {
		case opc == 8 && !u:
			name, typ = "vshrn", ".i"
			if bit6 == 1 {
				name = "vrshrn"
			}
		case opc == 8:
			name, typ = "vqshrun", ".s"
			if bit6 == 1 {
				name = "vqrshrun"
			}
		default:
			name, typ = "vqshrn", "."+n.su()
			if bit6 == 1 {
				name = "vqrshrn"
			}
		}
		n.op(name, typ+wide, dd, mq, right)
	case 10:
		if l == 1 || bit6 == 1 {
			return false
		}
		if field == 0 {
			n.op("vmovl", "."+n.su()+es, qReg(n.vd()), dReg(n.vm()))
		} else {
			n.op("vshll", "."+n.su()+es, qReg(n.vd()), dReg(n.vm()), left)
		}
	case 14, 15:
		if l == 1 || imm6&0x20 == 0 {
			return false
		}
		to := [2]string{"f32.s32", "f32.u32"}
		if opc == 15 {
			to = [2]string{"s32.f32", "u32.f32"}
		}
		n.op("vcvt", "."+to[x>>24&1], d, m, "#"+strconv.Itoa(int(64-imm6)))
	default:
		return false
	}
	if opc >= 5 && opc <= 7 { // the left shifts of one element size
		n.b.WriteString(armValueComment(int64(field)))
	}
	return true
}

// neonLong are, by opcode (bits 11:8), the instructions on three
// registers of different lengths whose type is signed or unsigned of a
// size: long ones (Q, D, D) and wide ones (Q, Q, D).
var neonLong = map[uint32]struct {
	name string
	wide bool
}{
	0: {"vaddl", false}, 1: {"vaddw", true}, 2: {"vsubl", false}, 3: {"vsubw", true},
	5: {"vabal", false}, 7: {"vabdl", false}, 8: {"vmlal", false}, 10: {"vmlsl", false}, 12: {"vmull", false},
}

// neonSaturatingLong and neonSaturatingScalar name the saturating
// doubling long multiplies by opcode, on three registers of different
// lengths and on a scalar.
var (
	neonSaturatingLong   = [16]string{9: "vqdmlal", 11: "vqdmlsl", 13: "vqdmull"}
	neonSaturatingScalar = [16]string{3: "vqdmlal", 7: "vqdmlsl", 11: "vqdmull"}
)

// threeDiff decodes the instructions on three registers of different
// lengths (long, wide and narrow).
func (n *neonInst) threeDiff() bool {
	x := n.x
	size := x >> 20 & 3
	u := x>>24&1 == 1
	qd, dd := qReg(n.vd()), dReg(n.vd())
	qn, dn := qReg(n.vn()), dReg(n.vn())
	qm, dm := qReg(n.vm()), dReg(n.vm())
	s2, s6, t2 := width(8, size, 0, 2), width(8, size, 1, 2), width(16, size, 0, 2)
	if e, ok := neonLong[x>>8&15]; ok {
		if e.wide {
			n.op(e.name, "."+n.su()+s2, qd, qn, dm)
		} else {
			n.op(e.name, "."+n.su()+s2, qd, dn, dm)
		}
		return true
	}
	switch x >> 8 & 15 {
	case 4:
		name := "vaddhn"
		if u {
			name = "vraddhn"
		}
		n.op(name, ".i"+t2, dd, qn, qm)
	case 6:
		name := "vsubhn"
		if u {
			name = "vrsubhn"
		}
		n.op(name, ".i"+t2, dd, qn, qm)
	case 9, 11, 13:
		if u {
			return false
		}
		n.op(neonSaturatingLong[x>>8&15], ".s"+s6, qd, dn, dm)
	case 14:
		n.op("vmull", ".p"+width(8, size, 0, 0), qd, dn, dm)
	default:
		return false
	}
	return true
}

// scalar decodes the instructions on two registers and a scalar.
func (n *neonInst) scalar() bool {
	x := n.x
	size := x >> 20 & 3
	u := x>>24&1 == 1
	raw := n.vm()
	sc := dReg(raw&(4<<size-1)) + "[" + strconv.Itoa(int(raw>>size>>2)) + "]"
	s6, sa := width(8, size, 1, 2), width(8, size, 2, 2)
	opc := x >> 8 & 15
	// The multiplies that keep the element size have a Q register form,
	// chosen by U; the long ones write a Q register from a D one.
	same := func(name, typ string) {
		n.op(name, typ, reg(n.vd(), u), reg(n.vn(), u), sc)
	}
	long := func(name, typ string) {
		n.op(name, typ, qReg(n.vd()), dReg(n.vn()), sc)
	}
	switch opc {
	case 0:
		same("vmla", ".i"+s6)
	case 1:
		same("vmla", ".f"+sa)
	case 4:
		same("vmls", ".i"+s6)
	case 5:
		same("vmls", ".f"+sa)
	case 8:
		same("vmul", ".i"+s6)
	case 9:
		same("vmul", ".f"+sa)
	case 12:
		same("vqdmulh", ".s"+s6)
	case 13:
		same("vqrdmulh", ".s"+s6)
	case 2:
		long("vmlal", "."+n.su()+s6)
	case 6:
		long("vmlsl", "."+n.su()+s6)
	case 10:
		long("vmull", "."+n.su()+s6)
	case 3, 7, 11:
		if u {
			return false
		}
		long(neonSaturatingScalar[opc], ".s"+s6)
	default:
		return false
	}
	return true
}

// twoMisc decodes the miscellaneous instructions on two registers.
func (n *neonInst) twoMisc() bool {
	x := n.x
	size := x >> 18 & 3
	q := n.q()
	d, m := reg(n.vd(), q), reg(n.vm(), q)
	s2 := width(8, size, 0, 2)
	b := x >> 6 & 31
	switch x >> 16 & 3 {
	case 0:
		switch {
		case b>>1 < 3:
			names := [3]string{"vrev64", "vrev32", "vrev16"}
			n.op(names[b>>1], "."+s2, d, m)
		case b>>2 == 2:
			n.op("vpaddl", "."+"su"[b>>1&1:b>>1&1+1]+s2, d, m)
		case b>>1 == 8:
			n.op("vcls", ".s"+s2, d, m)
		case b>>1 == 9:
			n.op("vclz", ".i"+s2, d, m)
		case b>>1 == 10:
			n.op("vcnt", ".8", d, m)
		case b>>1 == 11:
			n.op("vmvn", "", d, m)
		case b>>2 == 6:
			n.op("vpadal", "."+"su"[b>>1&1:b>>1&1+1]+s2, d, m)
		case b>>1 == 14:
			n.op("vqabs", ".s"+s2, d, m)
		case b>>1 == 15:
			n.op("vqneg", ".s"+s2, d, m)
		default:
			return false
		}
	case 1:
		typ := "s"
		if b&0x10 != 0 {
			typ = "f"
		}
		switch b >> 1 & 7 {
		case 0:
			n.op("vcgt", "."+typ+s2, d, m, "#0")
		case 1:
			n.op("vcge", "."+typ+s2, d, m, "#0")
		case 2:
			if typ == "s" {
				typ = "i"
			}
			n.op("vceq", "."+typ+s2, d, m, "#0")
		case 3:
			n.op("vcle", "."+typ+s2, d, m, "#0")
		case 4:
			n.op("vclt", "."+typ+s2, d, m, "#0")
		case 6:
			n.op("vabs", "."+typ+s2, d, m)
		case 7:
			n.op("vneg", "."+typ+s2, d, m)
		default:
			return false
		}
	case 2:
		t2 := width(16, size, 0, 2)
		switch {
		case b>>1 == 0:
			n.op("vswp", "", d, m)
		case b>>1 < 4:
			names := [4]string{"", "vtrn", "vuzp", "vzip"}
			n.op(names[b>>1], "."+s2, d, m)
		case b == 8:
			n.op("vmovn", ".i"+t2, dReg(n.vd()), qReg(n.vm()))
		case b == 9:
			n.op("vqmovun", ".s"+t2, dReg(n.vd()), qReg(n.vm()))
		case b == 10 || b == 11:
			n.op("vqmovn", "."+"su"[b&1:b&1+1]+t2, dReg(n.vd()), qReg(n.vm()))
		case b == 12:
			n.op("vshll", ".i"+s2, qReg(n.vd()), dReg(n.vm()), "#"+width(8, size, 0, 2))
		case b == 0x18 && size == 1:
			n.op("vcvt", ".f16.f32", dReg(n.vd()), qReg(n.vm()))
		case b == 0x1c && size == 1:
			n.op("vcvt", ".f32.f16", qReg(n.vd()), dReg(n.vm()))
		default:
			return false
		}
	case 3:
		sa := width(8, size, 2, 2)
		switch {
		case b&0x18 == 0x10:
			name := "vrecpe"
			if b&2 != 0 {
				name = "vrsqrte"
			}
			typ := "u"
			if b&4 != 0 {
				typ = "f"
			}
			n.op(name, "."+typ+s2, d, m)
		case b&0x18 == 0x18:
			names := [4]string{"f32.s32", "f32.u32", "s32.f32", "u32.f32"}
			if sa != "32" {
				names = [4]string{"f" + sa + ".s" + sa, "f" + sa + ".u" + sa, "s" + sa + ".f" + sa, "u" + sa + ".f" + sa}
			}
			n.op("vcvt", "."+names[b>>1&3], d, m)
		default:
			return false
		}
	}
	return true
}

// neonStructs are, by the type field of a load or store of multiple
// structures, its number (1 to 4, as in vld1) and how many registers it
// lists, one or two apart.
var neonStructs = [11]struct{ num, regs, stride uint32 }{
	{4, 4, 1}, {4, 4, 2}, {1, 4, 1}, {2, 4, 1}, {3, 3, 1}, {3, 3, 2}, {1, 3, 1}, {1, 1, 1}, {2, 2, 1}, {2, 2, 2}, {1, 2, 1},
}

// loadStore decodes the element and structure loads and stores: vld1 to
// vld4 and vst1 to vst4, of multiple structures, of one lane, and (loads)
// to all lanes.
func (n *neonInst) loadStore() bool {
	x := n.x
	name := "vst"
	if x&(1<<21) != 0 {
		name = "vld"
	}
	rd, rn, rm := n.vd(), x>>16&15, x&15
	var list, align string
	var num uint32
	var size string
	switch {
	case x&(1<<23) == 0:
		typ := x >> 8 & 15
		if typ > 10 {
			return false
		}
		s := neonStructs[typ]
		num = s.num
		if num == 1 {
			size = width(8, x>>6&3, 0, 3)
		} else {
			size = width(8, x>>6&3, 0, 2)
		}
		switch {
		case s.stride > 1:
			regs := make([]string, s.regs)
			for i := range regs {
				regs[i] = dReg(rd + uint32(i)*s.stride)
			}
			list = strings.Join(regs, ",")
		case s.regs == 1:
			list = dReg(rd)
		default:
			list = dReg(rd) + "-" + dReg(rd+s.regs-1)
		}
		if a := x >> 4 & 3; a != 0 {
			align = " :" + strconv.Itoa(32<<a)
		}
	case x>>10&3 == 3:
		// To all lanes: loads only.
		if name != "vld" {
			return false
		}
		sz, typ := x>>6&3, x>>8&3
		num = typ + 1
		size = width(8, sz, 0, 2)
		if num == 4 && sz == 3 {
			size = "32" // vld4.32 with 128-bit alignment
		}
		cnt, stride := num, uint32(1)
		if x&(1<<5) != 0 {
			if cnt == 1 {
				cnt++
			} else {
				stride = 2
			}
		}
		switch {
		case stride > 1:
			regs := make([]string, cnt)
			for i := range regs {
				regs[i] = dReg(rd+uint32(i)*stride) + "[]"
			}
			list = strings.Join(regs, ",")
		case cnt == 1:
			list = dReg(rd) + "[]"
		default:
			list = dReg(rd) + "[]-" + dReg(rd+cnt-1) + "[]"
		}
		if x&(1<<4) != 0 {
			al := 8 * (typ + 1) << sz
			if typ == 3 && sz > 1 {
				al >>= 1
			}
			if typ == 2 || typ == 0 && sz == 0 {
				align = " :<bad align " + strconv.Itoa(int(al)) + ">"
			} else {
				align = " :" + strconv.Itoa(int(al))
			}
		}
	default:
		// One lane.
		sz, ia := x>>10&3, x>>4&15
		num = x>>8&3 + 1
		size = width(8, sz, 0, 2)
		idx := ia >> (sz + 1)
		stride := uint32(1)
		if num > 1 && sz > 0 && ia&(1<<sz) != 0 {
			stride = 2
		}
		var al uint32
		switch num {
		case 1:
			mask := uint32(1)<<sz - 1
			if ia&(1<<sz) != 0 {
				return false
			}
			if sz > 0 {
				switch ia & mask {
				case mask:
					al = 8 << sz
				case 0:
				default:
					return false
				}
			}
		case 2:
			if sz == 2 && ia&2 != 0 {
				return false
			}
			if ia&1 != 0 {
				al = 16 << sz
			}
		case 3:
			if sz == 2 && ia&3 != 0 || ia&1 != 0 {
				return false
			}
		case 4:
			if sz == 2 {
				if ia&3 == 3 {
					return false
				}
				al = (ia & 3) * 64
			} else if ia&1 != 0 {
				al = 32 << sz
			}
		}
		regs := make([]string, num)
		for i := range regs {
			regs[i] = dReg(rd+uint32(i)*stride) + "[" + strconv.Itoa(int(idx)) + "]"
		}
		list = strings.Join(regs, ",")
		if al != 0 {
			align = " :" + strconv.Itoa(int(al))
		}
	}
	addr := "[" + armRegName(rn) + align + "]"
	switch rm {
	case 13:
		addr += "!"
	case 15:
	default:
		addr += ", " + armRegName(rm)
	}
	n.op(name+strconv.Itoa(int(num)), "."+size, "{"+list+"}", addr)
	return true
}

// neonTransfer decodes the moves between a core register and a scalar
// (vmov.32 r0, d1[1]; vmov.8 d4[3], r7) and vdup from a core register,
// ARM encoding x (cond 1110 ... 1011 ...1 0000) with condition suffix c.
func neonTransfer(x uint32, c string) (string, bool) {
	if x&0x0f000f10 != 0x0e000b10 {
		return "", false // bits 3:0 are 0, but objdump does not check
	}
	if c == "al" {
		c = ""
	}
	rt := armRegName(x >> 12 & 15)
	d := x>>16&15 | x>>3&16
	if x&(1<<23) != 0 && x&(1<<20) == 0 {
		// vdup: B (bit 22) and E (bit 5) give the size; bit 6 is 0.
		if x&(1<<6) != 0 {
			return "", false
		}
		sizes := [4]string{"32", "16", "8", ""}
		s := sizes[x>>21&2|x>>5&1]
		if s == "" {
			return "", false
		}
		return "vdup" + c + "." + s + "\t" + reg(d, x&(1<<21) != 0) + ", " + rt, true
	}
	opc := x>>19&12 | x>>5&3 // opc1:opc2
	var size string
	var idx uint32
	switch {
	case opc&8 != 0:
		size, idx = "8", opc&7
	case opc&1 != 0:
		size, idx = "16", opc>>1&3
	case opc&2 == 0:
		size, idx = "32", opc>>2&1
	default:
		return "", false
	}
	sc := dReg(d) + "[" + strconv.Itoa(int(idx)) + "]"
	if x&(1<<20) == 0 {
		if x&(1<<23) != 0 {
			return "", false
		}
		return "vmov" + c + "." + size + "\t" + sc + ", " + rt, true
	}
	typ := size
	if size != "32" {
		typ = "s" + size
		if x&(1<<23) != 0 {
			typ = "u" + size
		}
	}
	return "vmov" + c + "." + typ + "\t" + rt + ", " + sc, true
}
