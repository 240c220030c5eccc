package elfrel

import (
	"debug/elf"
	"fmt"
)

// relocKind says how a relocation's value is computed.
type relocKind uint8

const (
	relocNone    relocKind = iota // nothing to write
	relocAbs                      // S + A
	relocPC                       // S + A - P
	relocAdd                      // the word + (S + A): RISC-V and LoongArch ADD*
	relocSub                      // the word - (S + A): RISC-V and LoongArch SUB*
	relocSet6                     // S + A into the low 6 bits of the byte
	relocAdd6                     // the low 6 bits of the byte + (S + A), into them
	relocSub6                     // the low 6 bits of the byte - (S + A), into them
	relocSetULEB                  // S + A into the ULEB128 there, of the same length
	relocAddULEB                  // the ULEB128 there + (S + A)
	relocSubULEB                  // the ULEB128 there - (S + A)
)

// howto describes one relocation type: how to compute the value and how
// many bytes to write (0 for a ULEB128: as many as the one there); signed
// says whether an implicit (SHT_REL) addend is sign-extended.
type howto struct {
	kind   relocKind
	width  int
	signed bool
	bias   int64 // added to S + A (PowerPC's and MIPS64's TLS offsets)
}

// inPlace reports whether the relocation computes its value from the word
// it writes: such a type has no implicit addend to read from the word.
func (h howto) inPlace() bool { return h.kind >= relocAdd }

// howtoFor returns how to apply relocation type t on machine m: the types
// compilers emit in debug sections, which are also the ones LLVM's
// object::RelocationResolver handles for DWARF (and with its meaning of
// each). ok is false for any other type. Linker relaxation on RISC-V and
// LoongArch makes code sizes unknown until link time, so their compilers
// write a length or an address advance as the difference of two labels:
// an ADD and a SUB relocation on the same word.
func howtoFor(m elf.Machine, t uint32) (h howto, ok bool) {
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(t) {
		case elf.R_X86_64_NONE:
			return howto{kind: relocNone}, true
		case elf.R_X86_64_64, elf.R_X86_64_DTPOFF64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_X86_64_32, elf.R_X86_64_DTPOFF32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_X86_64_32S:
			return howto{kind: relocAbs, width: 4, signed: true}, true
		case elf.R_X86_64_PC32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		case elf.R_X86_64_PC64:
			return howto{kind: relocPC, width: 8}, true
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(t) {
		case elf.R_AARCH64_NONE, elf.R_AARCH64_NULL:
			return howto{kind: relocNone}, true
		case elf.R_AARCH64_ABS64, elf.R_AARCH64_TLS_DTPREL64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_AARCH64_ABS32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_AARCH64_ABS16:
			return howto{kind: relocAbs, width: 2}, true
		case elf.R_AARCH64_PREL64:
			return howto{kind: relocPC, width: 8}, true
		case elf.R_AARCH64_PREL32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		case elf.R_AARCH64_PREL16:
			return howto{kind: relocPC, width: 2, signed: true}, true
		}
	case elf.EM_PPC64:
		switch elf.R_PPC64(t) {
		case elf.R_PPC64_NONE:
			return howto{kind: relocNone}, true
		case elf.R_PPC64_ADDR64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_PPC64_DTPREL64:
			// Which LLVM's resolver does not apply: the ABI's S + A - 0x8000
			// (the offset from a DTP biased by 0x8000, as binutils gives it).
			return howto{kind: relocAbs, width: 8, bias: -0x8000}, true
		case elf.R_PPC64_ADDR32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_PPC64_REL64:
			return howto{kind: relocPC, width: 8}, true
		case elf.R_PPC64_REL32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		}
	case elf.EM_PPC:
		switch elf.R_PPC(t) {
		case elf.R_PPC_NONE:
			return howto{kind: relocNone}, true
		case elf.R_PPC_ADDR32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_PPC_DTPREL32: // as R_PPC64_DTPREL64
			return howto{kind: relocAbs, width: 4, bias: -0x8000}, true
		case elf.R_PPC_REL32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		}
	case elf.EM_MIPS:
		// LLVM's resolver as for MIPS32 and MIPS64 (for MIPS64, with the
		// second and third types of the entry R_MIPS_NONE: see mipsInfo).
		switch elf.R_MIPS(t) {
		case elf.R_MIPS_NONE:
			return howto{kind: relocNone}, true
		case elf.R_MIPS_32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_MIPS_64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_MIPS_PC32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		// The TLS ones: the ABI's S + A - 0x8000, the offset from a DTP
		// biased by 0x8000, as LLVM resolves MIPS64's (its MIPS32 one
		// leaves the bias in: a FIXME there).
		case elf.R_MIPS_TLS_DTPREL32:
			return howto{kind: relocAbs, width: 4, bias: -0x8000}, true
		case elf.R_MIPS_TLS_DTPREL64:
			return howto{kind: relocAbs, width: 8, bias: -0x8000}, true
		}
	case elf.EM_S390:
		switch elf.R_390(t) {
		case elf.R_390_NONE:
			return howto{kind: relocNone}, true
		case elf.R_390_64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_390_32:
			return howto{kind: relocAbs, width: 4}, true
		}
	case elf.EM_RISCV:
		switch elf.R_RISCV(t) {
		case elf.R_RISCV_NONE:
			return howto{kind: relocNone}, true
		case elf.R_RISCV_64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_RISCV_32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_RISCV_32_PCREL:
			return howto{kind: relocPC, width: 4, signed: true}, true
		case elf.R_RISCV_SET6:
			return howto{kind: relocSet6, width: 1}, true
		case elf.R_RISCV_SUB6:
			return howto{kind: relocSub6, width: 1}, true
		case elf.R_RISCV_SET8:
			return howto{kind: relocAbs, width: 1}, true
		case elf.R_RISCV_SET16:
			return howto{kind: relocAbs, width: 2}, true
		case elf.R_RISCV_SET32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_RISCV_ADD8:
			return howto{kind: relocAdd, width: 1}, true
		case elf.R_RISCV_ADD16:
			return howto{kind: relocAdd, width: 2}, true
		case elf.R_RISCV_ADD32:
			return howto{kind: relocAdd, width: 4}, true
		case elf.R_RISCV_ADD64:
			return howto{kind: relocAdd, width: 8}, true
		case elf.R_RISCV_SUB8:
			return howto{kind: relocSub, width: 1}, true
		case elf.R_RISCV_SUB16:
			return howto{kind: relocSub, width: 2}, true
		case elf.R_RISCV_SUB32:
			return howto{kind: relocSub, width: 4}, true
		case elf.R_RISCV_SUB64:
			return howto{kind: relocSub, width: 8}, true
		case rRISCVSetULEB128:
			return howto{kind: relocSetULEB}, true
		case rRISCVSubULEB128:
			return howto{kind: relocSubULEB}, true
		}
	case elf.EM_386:
		switch elf.R_386(t) {
		case elf.R_386_NONE:
			return howto{kind: relocNone}, true
		case elf.R_386_32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_386_PC32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		}
	case elf.EM_ARM:
		switch elf.R_ARM(t) {
		case elf.R_ARM_NONE:
			return howto{kind: relocNone}, true
		case elf.R_ARM_ABS32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_ARM_REL32:
			return howto{kind: relocPC, width: 4, signed: true}, true
		}
	case elf.EM_LOONGARCH:
		switch elf.R_LARCH(t) {
		case elf.R_LARCH_NONE:
			return howto{kind: relocNone}, true
		case elf.R_LARCH_64:
			return howto{kind: relocAbs, width: 8}, true
		case elf.R_LARCH_32:
			return howto{kind: relocAbs, width: 4}, true
		case elf.R_LARCH_32_PCREL:
			return howto{kind: relocPC, width: 4, signed: true}, true
		case elf.R_LARCH_64_PCREL:
			return howto{kind: relocPC, width: 8}, true
		case elf.R_LARCH_ADD6:
			return howto{kind: relocAdd6, width: 1}, true
		case elf.R_LARCH_SUB6:
			return howto{kind: relocSub6, width: 1}, true
		case elf.R_LARCH_ADD8:
			return howto{kind: relocAdd, width: 1}, true
		case elf.R_LARCH_ADD16:
			return howto{kind: relocAdd, width: 2}, true
		case elf.R_LARCH_ADD32:
			return howto{kind: relocAdd, width: 4}, true
		case elf.R_LARCH_ADD64:
			return howto{kind: relocAdd, width: 8}, true
		case elf.R_LARCH_SUB8:
			return howto{kind: relocSub, width: 1}, true
		case elf.R_LARCH_SUB16:
			return howto{kind: relocSub, width: 2}, true
		case elf.R_LARCH_SUB32:
			return howto{kind: relocSub, width: 4}, true
		case elf.R_LARCH_SUB64:
			return howto{kind: relocSub, width: 8}, true
		case elf.R_LARCH_ADD_ULEB128:
			return howto{kind: relocAddULEB}, true
		case elf.R_LARCH_SUB_ULEB128:
			return howto{kind: relocSubULEB}, true
		}
	}
	return howto{}, false
}

// The RISC-V relocations for differences of labels in ULEB128 fields
// (DWARF 5 range lists from LLVM 18 on), which debug/elf does not name.
const (
	rRISCVSetULEB128 elf.R_RISCV = 60
	rRISCVSubULEB128 elf.R_RISCV = 61
)

// Relocatable reports whether relocatable objects (ET_REL) of machine m
// can be read: whether their debug sections' relocations are understood.
func Relocatable(m elf.Machine) bool {
	switch m {
	case elf.EM_X86_64, elf.EM_AARCH64, elf.EM_PPC64, elf.EM_S390, elf.EM_RISCV, elf.EM_LOONGARCH, elf.EM_386, elf.EM_ARM, elf.EM_PPC, elf.EM_MIPS:
		return true
	}
	return false
}

// relocName names relocation type t for machine m in errors.
func relocName(m elf.Machine, t uint32) string {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64(t).String()
	case elf.EM_AARCH64:
		return elf.R_AARCH64(t).String()
	case elf.EM_PPC64:
		return elf.R_PPC64(t).String()
	case elf.EM_PPC:
		return elf.R_PPC(t).String()
	case elf.EM_MIPS:
		if t > 0xff { // MIPS64's second or third type (see mipsInfo)
			return fmt.Sprintf("%v/%v/%v", elf.R_MIPS(t&0xff), elf.R_MIPS(t>>8&0xff), elf.R_MIPS(t>>16&0xff))
		}
		return elf.R_MIPS(t).String()
	case elf.EM_S390:
		return elf.R_390(t).String()
	case elf.EM_RISCV:
		switch elf.R_RISCV(t) {
		case rRISCVSetULEB128:
			return "R_RISCV_SET_ULEB128"
		case rRISCVSubULEB128:
			return "R_RISCV_SUB_ULEB128"
		}
		return elf.R_RISCV(t).String()
	case elf.EM_LOONGARCH:
		return elf.R_LARCH(t).String()
	case elf.EM_386:
		return elf.R_386(t).String()
	case elf.EM_ARM:
		return elf.R_ARM(t).String()
	}
	return fmt.Sprintf("type %d", t)
}

// relocTarget is a section whose contents receive relocations: dst is the
// section's contents, and the section occupies [base, base+len(dst)) of
// the buffer its name's contents are gathered in (see File.DebugLoader).
type relocTarget struct {
	name string // section name, for errors
	dst  []byte
	base uint64
}

// applyRelocs applies the entries in data, which start at byte base of
// relocation section rs, to t.
func (l *DebugLoader) applyRelocs(rs *relocSection, data []byte, base uint64, t relocTarget) error {
	entSize := l.lay.rela
	if rs.rel {
		entSize = l.lay.rel
	}
	bo, symAddrs, w := l.byteOrder, rs.symAddrs, l.lay.word
	for k := uint64(0); k+entSize <= uint64(len(data)); k += entSize {
		e, off := data[k:], base+k
		var where, symIdx uint64
		var typ uint32
		if w == 4 { // Elf32_Rel(a): r_info holds the symbol above an 8-bit type
			where = uint64(bo.Uint32(e))
			info := bo.Uint32(e[4:])
			symIdx, typ = uint64(info>>8), info&0xff
		} else if l.machine == elf.EM_MIPS {
			where = bo.Uint64(e)
			symIdx, typ = mipsInfo(bo, e[8:16])
		} else {
			where = bo.Uint64(e)
			info := bo.Uint64(e[8:])
			symIdx, typ = info>>32, uint32(info)
		}
		h, ok := howtoFor(l.machine, typ)
		if !ok {
			return &UnsupportedError{File: l.file, Section: rs.name, Msg: fmt.Sprintf("relocation %s at entry offset %#x", relocName(l.machine, typ), off)}
		}
		if h.kind == relocNone {
			continue
		}
		if symIdx >= uint64(len(symAddrs)) {
			return l.formatErr(rs.name, int64(off), "relocation symbol index %d out of range (%d symbols)", symIdx, len(symAddrs))
		}
		width := uint64(h.width)
		if width == 0 {
			if width = ulebLen(t.dst, where); width == 0 {
				return l.formatErr(rs.name, int64(off), "ULEB128 relocation at %#x finds no ULEB128 there in the %d-byte target section %s", where, len(t.dst), t.name)
			}
		}
		if where > uint64(len(t.dst)) || uint64(len(t.dst))-where < width {
			return l.formatErr(rs.name, int64(off), "%d-byte relocation at %#x is outside the %d-byte target section %s", width, where, len(t.dst), t.name)
		}
		loc := t.dst[where : where+width]
		var addend uint64
		switch {
		case !rs.rel && w == 4:
			addend = uint64(int64(int32(bo.Uint32(e[8:]))))
		case !rs.rel:
			addend = bo.Uint64(e[16:])
		case h.inPlace():
			return &UnsupportedError{File: l.file, Section: rs.name, Msg: fmt.Sprintf("relocation %s in a section without addends, at entry offset %#x", relocName(l.machine, typ), off)}
		default:
			addend = readWord(bo, loc, h.signed)
		}
		v := symAddrs[symIdx] + addend + uint64(h.bias)
		switch h.kind {
		case relocPC:
			v -= t.base + where
		case relocAdd:
			v = readWord(bo, loc, false) + v
		case relocSub:
			v = readWord(bo, loc, false) - v
		case relocSet6:
			v = uint64(loc[0]&0xc0) | v&0x3f
		case relocAdd6:
			v = uint64(loc[0]&0xc0) | (uint64(loc[0])+v)&0x3f
		case relocSub6:
			v = uint64(loc[0]&0xc0) | (uint64(loc[0])-v)&0x3f
		case relocSetULEB:
			writeULEB(loc, v)
			continue
		case relocAddULEB:
			writeULEB(loc, readULEB(loc)+v)
			continue
		case relocSubULEB:
			writeULEB(loc, readULEB(loc)-v)
			continue
		}
		writeWord(bo, loc, v)
	}
	return nil
}

func (l *DebugLoader) formatErr(sec string, off int64, format string, args ...any) error {
	return &FormatError{File: l.file, Section: sec, Off: off, Msg: fmt.Sprintf(format, args...)}
}

// byteOrder is the subset of binary.ByteOrder used here.
type byteOrder interface {
	Uint16([]byte) uint16
	Uint32([]byte) uint32
	Uint64([]byte) uint64
	PutUint16([]byte, uint16)
	PutUint32([]byte, uint32)
	PutUint64([]byte, uint64)
}

// readWord reads the len(b)-byte word in b, sign-extending it if signed.
func readWord(bo byteOrder, b []byte, signed bool) uint64 {
	switch len(b) {
	case 1:
		if signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	case 2:
		if signed {
			return uint64(int64(int16(bo.Uint16(b))))
		}
		return uint64(bo.Uint16(b))
	case 4:
		if signed {
			return uint64(int64(int32(bo.Uint32(b))))
		}
		return uint64(bo.Uint32(b))
	}
	return bo.Uint64(b)
}

// writeWord stores v truncated to len(b) bytes, as LLVM's resolver does.
func writeWord(bo byteOrder, b []byte, v uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(v)
	case 2:
		bo.PutUint16(b, uint16(v))
	case 4:
		bo.PutUint32(b, uint32(v))
	default:
		bo.PutUint64(b, v)
	}
}

// ulebLen returns the length of the ULEB128 at b[at:], or 0 if there is
// none there: no terminating byte within the section or within the 10
// bytes a 64-bit value takes.
func ulebLen(b []byte, at uint64) uint64 {
	for i := at; i < uint64(len(b)) && i-at < 10; i++ {
		if b[i]&0x80 == 0 {
			return i - at + 1
		}
	}
	return 0
}

// readULEB decodes the ULEB128 that is all of b.
func readULEB(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		v |= uint64(c&0x7f) << (7 * i)
	}
	return v
}

// writeULEB encodes v as a ULEB128 of len(b) bytes, padded with
// continuation bytes, into b, truncating it to the bits they hold: a
// linker keeps a relocated ULEB128 at the length the assembler chose.
func writeULEB(b []byte, v uint64) {
	for i := range b {
		c := byte(v & 0x7f)
		v >>= 7
		if i < len(b)-1 {
			c |= 0x80
		}
		b[i] = c
	}
}

// mipsInfo decodes the r_info of a MIPS64 relocation entry, which is not
// ELF64's symbol above a 32-bit type but a 32-bit symbol index followed
// by four bytes: a special symbol (r_ssym), and the third, second and
// first of three types applied in turn (in the file's byte order, so on
// mips64el the bytes do not read as one little-endian word). Debug
// sections use the first type alone: typ holds the others above it (as
// LLVM's getRelocationType does), so that howtoFor refuses an entry that
// has them.
func mipsInfo(bo byteOrder, info []byte) (symIdx uint64, typ uint32) {
	return uint64(bo.Uint32(info)), uint32(info[7]) | uint32(info[6])<<8 | uint32(info[5])<<16
}
