package jitsym

import (
	"encoding/binary"
	"errors"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// builder holds the state of one index build.
type builder struct {
	s    *Symbolizer
	file string
	bo   binary.ByteOrder

	debugInfo, debugAbbrev, debugLine, debugStr, debugLineStr []byte
	debugStrOffsets, debugRanges, debugRnglists, debugAddr    []byte

	abbrevs      map[uint64]*abbrevTable
	abbrevBudget int64            // bytes parseAbbrevs may still decode
	tables       []lineTable      // becomes Symbolizer.tables
	tableAt      map[uint64]int32 // line table index by .debug_line offset
	lineBudget   int64            // bytes of line programs that may still be decoded
	rangeBudget  int64            // address ranges that may still be collected
	qualBudget   int64            // bytes of qualified names that may still be built
	pathBudget   int64            // bytes of file paths that may still be built
	fileIDs      map[string]int32
	strs         map[strRef]string // copied strings, by location

	dies     []dieInfo // subprogram and inlined subroutine DIEs, by offset
	scopes   []scope
	nodeDie  []int32    // dies index of each node
	unitRaw  []rawSpan  // spans of the current unit, before flattening
	cuRaw    []rawSpan  // compile unit ranges; node is the unit index
	spans    []span     // per unit, sorted, disjoint: innermost subroutine at each address
	unitSpan [][2]int32 // spans[unitSpan[u][0]:unitSpan[u][1]] are unit u's
	rangeBuf [][2]uint64
}

// build fills s from the relocated DWARF sections in d.
func build(s *Symbolizer, f *elfrel.File, d *elfrel.Debug) error {
	b := &builder{
		s:               s,
		file:            f.Name,
		bo:              f.ByteOrder,
		debugInfo:       d.Section(".debug_info"),
		debugAbbrev:     d.Section(".debug_abbrev"),
		debugLine:       d.Section(".debug_line"),
		debugStr:        d.Section(".debug_str"),
		debugLineStr:    d.Section(".debug_line_str"),
		debugStrOffsets: d.Section(".debug_str_offsets"),
		debugRanges:     d.Section(".debug_ranges"),
		debugRnglists:   d.Section(".debug_rnglists"),
		debugAddr:       d.Section(".debug_addr"),
		abbrevs:         make(map[uint64]*abbrevTable),
		tableAt:         make(map[uint64]int32),
		fileIDs:         make(map[string]int32),
		strs:            make(map[strRef]string),
	}
	// Capacity hints from the section sizes, measured on GCC and Clang
	// objects, spare most of the copying of growing slices.
	b.dies = make([]dieInfo, 0, len(b.debugInfo)/64)
	b.unitRaw = make([]rawSpan, 0, len(b.debugInfo)/40)
	s.nodes = make([]node, 0, len(b.debugInfo)/64)
	b.spans = make([]span, 0, len(b.debugInfo)/36)
	s.rows = make([]row, 0, len(b.debugLine)/10)
	b.abbrevBudget = 2*int64(len(b.debugAbbrev)) + 4096
	b.lineBudget = 2*int64(len(b.debugLine)) + 4096
	b.rangeBudget = int64(len(b.debugInfo)+len(b.debugRanges)+len(b.debugRnglists))/2 + 1024
	b.pathBudget = 4*int64(len(b.debugLine)+len(b.debugLineStr)+len(b.debugStr)+len(b.debugInfo)) + 1<<20
	if err := b.walk(); err != nil {
		return b.wrap(err)
	}
	if err := b.nameNodes(); err != nil {
		return b.wrap(err)
	}
	s.segHi, s.segs = segments(flattenUnits(b.cuRaw), b.spans, b.unitSpan)
	s.tables = b.tables
	s.seqHi = make([]uint64, len(s.seqs))
	for i := range s.seqs {
		s.seqHi[i] = s.seqs[i].hi
	}
	return nil
}

// wrap turns a decoding error into an *elfrel.FormatError naming the file.
func (b *builder) wrap(err error) error {
	var de *decodeError
	if errors.As(err, &de) {
		return &elfrel.FormatError{File: b.file, Section: de.sec, Off: de.off, Msg: de.msg}
	}
	return err
}

// internFile returns the Symbolizer.files index of path.
func (b *builder) internFile(path string) int32 {
	if id, ok := b.fileIDs[path]; ok {
		return id
	}
	id := int32(len(b.s.files))
	b.s.files = append(b.s.files, path)
	b.fileIDs[path] = id
	return id
}

// str returns the string r refers to ("" if it cannot be read), copying
// each distinct string once.
func (b *builder) str(r strRef) string {
	if r == 0 {
		return ""
	}
	if s, ok := b.strs[r]; ok {
		return s
	}
	var sec []byte
	switch r.kind() {
	case strInfo:
		sec = b.debugInfo
	case strStr:
		sec = b.debugStr
	case strLineStr:
		sec = b.debugLineStr
	}
	s, _ := strAt(sec, r.off())
	b.strs[r] = s
	return s
}

// resolveStr turns a DW_FORM_strx reference into a .debug_str one using
// the unit's string offsets base; it returns strNone if it cannot.
func (b *builder) resolveStr(r strRef, u *unitInfo, strOffBase uint64, hasBase bool) strRef {
	if r.kind() != strIndex {
		return r
	}
	if !hasBase {
		return 0
	}
	size := uint64(4)
	if u.dwarf64 {
		size = 8
	}
	so := b.debugStrOffsets
	if r.off() > uint64(len(so))/size {
		return 0
	}
	pos := strOffBase + r.off()*size
	if pos < strOffBase || pos > uint64(len(so)) || uint64(len(so))-pos < size {
		return 0
	}
	c := cursor{data: so, off: int(pos), bo: b.bo}
	return mkStrRef(strStr, c.uintN(int(size)))
}

// resolveAddr returns the address a refers to.
func (b *builder) resolveAddr(a addrVal, u *unitInfo) (uint64, bool) {
	if !a.ok {
		return 0, false
	}
	if !a.isIndex {
		return a.v, true
	}
	return b.debugAddrAt(u, a.v)
}

// entryRanges appends the address ranges of e to b.rangeBuf[:0], as
// LLVM's DWARFDie::getAddressRanges: DW_AT_low_pc with DW_AT_high_pc, or
// else DW_AT_ranges.
func (b *builder) entryRanges(e *entry, u *unitInfo, rnglistsBase uint64, hasRnglistsBase bool) ([][2]uint64, error) {
	out := b.rangeBuf[:0]
	defer func() { b.rangeBuf = out[:0] }()
	if lo, ok := b.resolveAddr(e.lowPC, u); ok {
		if hi, ok := b.resolveAddr(e.highPC, u); ok {
			if e.highIsOffset {
				hi = lo + e.highPC.v
			}
			out = append(out, [2]uint64{lo, hi})
			return b.charge(out)
		}
	}
	off := e.ranges
	switch e.rangesKind {
	case 0:
		return out, nil
	case 2: // DW_FORM_rnglistx: an index into the offsets after the header
		if !hasRnglistsBase {
			return out, nil
		}
		size := uint64(4)
		if u.dwarf64 {
			size = 8
		}
		pos := rnglistsBase + off*size
		if off > uint64(len(b.debugRnglists))/size || pos < rnglistsBase || pos > uint64(len(b.debugRnglists)) || uint64(len(b.debugRnglists))-pos < size {
			return out, &decodeError{sec: ".debug_rnglists", off: int64(rnglistsBase), msg: "range list index out of range"}
		}
		c := cursor{data: b.debugRnglists, off: int(pos), bo: b.bo}
		off = rnglistsBase + c.uintN(int(size))
	}
	var err error
	if out, err = b.appendRanges(out, u, off); err != nil {
		return out, err
	}
	return b.charge(out)
}

// charge counts ranges against the budget that keeps the index size
// proportional to the debug sections even when many entries share one
// long range list.
func (b *builder) charge(r [][2]uint64) ([][2]uint64, error) {
	b.rangeBudget -= int64(len(r))
	if b.rangeBudget < 0 {
		return r, &decodeError{sec: ".debug_info", off: -1, msg: "more address ranges than the debug sections can describe"}
	}
	return r, nil
}
