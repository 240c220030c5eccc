package elfrel

import (
	"debug/elf"
	"fmt"
)

// relocKind says how a relocation's value is computed.
type relocKind uint8

const (
	relocNone relocKind = iota // nothing to write
	relocAbs                   // S + A
	relocPC                    // S + A - P
)

// howto describes one relocation type: how to compute the value and how
// many bytes to write; signed says whether an implicit (SHT_REL) addend is
// sign-extended.
type howto struct {
	kind   relocKind
	width  int
	signed bool
}

// howtoFor returns how to apply relocation type t on machine m: the types
// LLVM and GCC emit in debug sections, which are also the ones LLVM's
// object::RelocationResolver handles for DWARF. ok is false for any other
// type.
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
	}
	return howto{}, false
}

// relocName names relocation type t for machine m in errors.
func relocName(m elf.Machine, t uint32) string {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64(t).String()
	case elf.EM_AARCH64:
		return elf.R_AARCH64(t).String()
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
	entSize := uint64(relaSize)
	if rs.rel {
		entSize = relSize
	}
	bo, symAddrs := l.byteOrder, rs.symAddrs
	for k := uint64(0); k+entSize <= uint64(len(data)); k += entSize {
		e, off := data[k:], base+k
		where := bo.Uint64(e)
		info := bo.Uint64(e[8:])
		symIdx, typ := info>>32, uint32(info)
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
		if where > uint64(len(t.dst)) || uint64(len(t.dst))-where < uint64(h.width) {
			return l.formatErr(rs.name, int64(off), "%d-byte relocation at %#x is outside the %d-byte target section %s", h.width, where, len(t.dst), t.name)
		}
		loc := t.dst[where : where+uint64(h.width)]
		var addend uint64
		if !rs.rel {
			addend = bo.Uint64(e[16:])
		} else {
			addend = readWord(bo, loc, h.signed)
		}
		v := symAddrs[symIdx] + addend
		if h.kind == relocPC {
			v -= t.base + where
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
	case 2:
		bo.PutUint16(b, uint16(v))
	case 4:
		bo.PutUint32(b, uint32(v))
	default:
		bo.PutUint64(b, v)
	}
}
