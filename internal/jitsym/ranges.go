package jitsym

// Range list entry kinds of .debug_rnglists (DWARF 5, section 7.25).
const (
	rleEndOfList    = 0
	rleBaseAddressx = 1
	rleStartxEndx   = 2
	rleStartxLength = 3
	rleOffsetPair   = 4
	rleBaseAddress  = 5
	rleStartEnd     = 6
	rleStartLength  = 7
)

// unitInfo is what decoding addresses and ranges needs from a unit.
type unitInfo struct {
	version  int
	addrSize int
	dwarf64  bool
	dieOff   uint64 // offset of the unit's first DIE in .debug_info
	base     uint64 // DW_AT_low_pc (or DW_AT_entry_pc) of the unit DIE
	hasBase  bool
	addrBase uint64 // DW_AT_addr_base
	hasAddrs bool   // whether DW_AT_addr_base is present
	// rangesBase is added to the .debug_ranges offsets of a DWARF 4
	// split unit: its skeleton's DW_AT_GNU_ranges_base.
	rangesBase uint64
}

// appendRanges appends to dst the address ranges of the range list at
// off: in .debug_ranges for DWARF 2 to 4, in .debug_rnglists for DWARF 5.
// Like LLVM 14, it drops entries whose start (or base) is a tombstone
// address, which linkers write for discarded code.
func (b *builder) appendRanges(dst [][2]uint64, u *unitInfo, off uint64) ([][2]uint64, error) {
	if u.version < 5 {
		return b.appendRangesV4(dst, u, off)
	}
	return b.appendRangesV5(dst, u, off)
}

func (b *builder) appendRangesV4(dst [][2]uint64, u *unitInfo, off uint64) ([][2]uint64, error) {
	c := &cursor{data: b.debugRanges, bo: b.bo, sec: ".debug_ranges"}
	if off += u.rangesBase; off < u.rangesBase || off >= uint64(len(c.data)) {
		return dst, &decodeError{sec: c.sec, off: int64(off), msg: "range list offset is past the end of the section"}
	}
	c.off = int(off)
	maxAddr := ^uint64(0) >> (64 - 8*u.addrSize)
	tomb := maxAddr - 1
	base, hasBase := u.base, u.hasBase
	for {
		lo, hi := c.uintN(u.addrSize), c.uintN(u.addrSize)
		if c.err != nil {
			return dst, c.err
		}
		switch {
		case lo == 0 && hi == 0:
			return dst, nil
		case lo == maxAddr:
			base, hasBase = hi, true
			continue
		case lo == tomb:
			continue
		}
		if hasBase {
			if base == tomb {
				continue
			}
			lo, hi = lo+base, hi+base
		}
		dst = append(dst, [2]uint64{lo, hi})
	}
}

func (b *builder) appendRangesV5(dst [][2]uint64, u *unitInfo, off uint64) ([][2]uint64, error) {
	c := &cursor{data: b.debugRnglists, bo: b.bo, sec: ".debug_rnglists"}
	if off >= uint64(len(c.data)) {
		return dst, &decodeError{sec: c.sec, off: int64(off), msg: "range list offset is past the end of the section"}
	}
	c.off = int(off)
	tomb := ^uint64(0) >> (64 - 8*u.addrSize)
	base, hasBase := u.base, u.hasBase
	addrx := func(idx uint64) (uint64, bool) {
		v, ok := b.debugAddrAt(u, idx)
		if !ok && c.err == nil {
			c.fail("address index %d is outside .debug_addr", idx)
		}
		return v, ok
	}
	for c.err == nil {
		var lo, hi uint64
		switch kind := c.u8(); kind {
		case rleEndOfList:
			return dst, c.err
		case rleBaseAddressx:
			base, hasBase = addrx(c.uleb())
			continue
		case rleBaseAddress:
			base, hasBase = c.uintN(u.addrSize), true
			continue
		case rleStartxEndx:
			lo, _ = addrx(c.uleb())
			hi, _ = addrx(c.uleb())
		case rleStartxLength:
			lo, _ = addrx(c.uleb())
			hi = lo + c.uleb()
		case rleOffsetPair:
			lo, hi = c.uleb(), c.uleb()
			if lo == tomb {
				continue
			}
			if hasBase {
				if base == tomb {
					continue
				}
				lo, hi = lo+base, hi+base
			}
		case rleStartEnd:
			lo, hi = c.uintN(u.addrSize), c.uintN(u.addrSize)
		case rleStartLength:
			lo = c.uintN(u.addrSize)
			hi = lo + c.uleb()
		default:
			c.off--
			c.fail("unknown range list entry kind %#x", kind)
		}
		if c.err == nil && lo != tomb {
			dst = append(dst, [2]uint64{lo, hi})
		}
	}
	return dst, c.err
}

// debugAddrAt returns entry idx of the unit's .debug_addr table.
func (b *builder) debugAddrAt(u *unitInfo, idx uint64) (uint64, bool) {
	if !u.hasAddrs {
		return 0, false
	}
	size := uint64(u.addrSize)
	if idx > uint64(len(b.debugAddr))/size {
		return 0, false
	}
	pos := u.addrBase + idx*size
	if pos < u.addrBase || pos > uint64(len(b.debugAddr)) || uint64(len(b.debugAddr))-pos < size {
		return 0, false
	}
	c := cursor{data: b.debugAddr, off: int(pos), bo: b.bo}
	return c.uintN(u.addrSize), true
}
