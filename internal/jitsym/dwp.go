package jitsym

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/safename"
)

// A DWARF package (.dwp, from dwp or llvm-dwp) gathers the split DWARF
// files of a binary: their sections concatenated, and an index,
// .debug_cu_index, that gives for each unit ID where the unit's parts
// of .debug_info.dwo, .debug_abbrev.dwo, .debug_str_offsets.dwo and
// .debug_rnglists.dwo are (DWARF 5, section 7.3.5; GNU's version 2 of
// the index for DWARF 4). .debug_str.dwo is shared. A unit's parts, read
// alone, make up what its .dwo file held, and it is indexed as that file
// would be.

// Section identifiers of the index's columns. Versions 2 and 5 share
// these; 5 adds the range lists (8 is DW_SECT_MACRO in version 2).
const (
	sectInfo       = 1
	sectAbbrev     = 3
	sectStrOffsets = 6
	sectRnglists   = 8
)

// dwpIndex is a parsed .debug_cu_index.
type dwpIndex struct {
	version int
	cols    []uint32          // the section identifier of each column
	rows    map[uint64]uint32 // unit ID to row, 0-based
	offs    []uint32          // offs[row*len(cols)+col]
	sizes   []uint32
}

// parseCUIndex parses a .debug_cu_index section.
func parseCUIndex(data []byte, bo binary.ByteOrder) (*dwpIndex, error) {
	c := &cursor{data: data, bo: bo, sec: ".debug_cu_index"}
	x := &dwpIndex{}
	// Version 5 is a 2-byte version and 2 bytes of padding, version 2 a
	// 4-byte version.
	switch v := c.u16(); {
	case v == 5:
		x.version = 5
		c.u16()
	default:
		c.off = 0
		if v := c.u32(); v == 2 && c.err == nil {
			x.version = 2
			break
		}
		c.off = 0
		c.fail("unsupported index version")
		return nil, c.err
	}
	ncols, nunits, nslots := uint64(c.u32()), uint64(c.u32()), uint64(c.u32())
	if c.err != nil {
		return nil, c.err
	}
	// Every count is checked against what the section holds before
	// anything is allocated: 12 bytes a slot, 4 a column, 8 a cell.
	// Each unit has a slot (the index is a hash table of them).
	left := uint64(len(data) - c.off)
	if nslots > left/12 || nunits > nslots || ncols > (left-nslots*12)/4 || ncols > 0 && nunits > (left-nslots*12-ncols*4)/(8*ncols) {
		c.fail("%d columns, %d units and %d slots do not fit in the section", ncols, nunits, nslots)
		return nil, c.err
	}
	sigs := c.off
	rowsAt := sigs + int(nslots)*8
	x.rows = make(map[uint64]uint32, nunits)
	for i := range int(nslots) {
		sig := bo.Uint64(data[sigs+8*i:])
		row := bo.Uint32(data[rowsAt+4*i:])
		if row == 0 {
			continue // an empty slot
		}
		if uint64(row) > nunits {
			c.off = rowsAt + 4*i
			c.fail("slot %d names row %d of %d", i, row, nunits)
			return nil, c.err
		}
		x.rows[sig] = row - 1
	}
	c.off = rowsAt + int(nslots)*4
	x.cols = make([]uint32, ncols)
	for i := range x.cols {
		x.cols[i] = c.u32()
	}
	cells := int(nunits * ncols)
	x.offs, x.sizes = make([]uint32, cells), make([]uint32, cells)
	for i := range x.offs {
		x.offs[i] = c.u32()
	}
	for i := range x.sizes {
		x.sizes[i] = c.u32()
	}
	return x, c.err
}

// contribution returns where unit row's part of the section with
// identifier sect is, and whether it has one.
func (x *dwpIndex) contribution(row uint32, sect uint32) (off, size uint64, ok bool) {
	for i, id := range x.cols {
		if id == sect {
			k := int(row)*len(x.cols) + i
			return uint64(x.offs[k]), uint64(x.sizes[k]), true
		}
	}
	return 0, 0, false
}

// dwpPackage is a binary's DWARF package, opened once.
type dwpPackage struct {
	f     *elfrel.File // open until the Symbolizer is closed
	l     *elfrel.DebugLoader
	index *dwpIndex

	mu    sync.Mutex
	whole map[string][]byte // compressed sections, read whole once

	limit  int64        // what units may read in all (see readRange)
	budget atomic.Int64 // what they may still read
}

// openPackage opens and indexes the package f.
func openPackage(f *elfrel.File) (*dwpPackage, error) {
	l, err := f.DWOLoader()
	if err != nil {
		return nil, err
	}
	data, err := l.Section(".debug_cu_index")
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("%s: a DWARF package without .debug_cu_index", safename.String(f.Name))
	}
	x, err := parseCUIndex(data, f.ByteOrder)
	if err != nil {
		return nil, wrapDecode(f.Name, err)
	}
	p := &dwpPackage{f: f, l: l, index: x, whole: map[string][]byte{}}
	var size int64
	for _, name := range []string{".debug_info", ".debug_abbrev", ".debug_str", ".debug_str_offsets", ".debug_rnglists"} {
		size += int64(min(l.Size(name), 1<<40)) // no real section is larger
	}
	p.limit = dwpReadFactor*size + dwpReadSlack
	p.budget.Store(p.limit)
	return p, nil
}

// unit returns the sections of the unit with the given ID, as its .dwo
// file would have them, or nil if the package has no such unit.
func (p *dwpPackage) unit(id uint64) Sections {
	row, ok := p.index.rows[id]
	if !ok {
		return nil
	}
	u := &dwpUnit{p: p, parts: map[string][2]uint64{}}
	for name, sect := range map[string]uint32{".debug_info": sectInfo, ".debug_abbrev": sectAbbrev, ".debug_str_offsets": sectStrOffsets, ".debug_rnglists": sectRnglists} {
		if sect == sectRnglists && p.index.version < 5 {
			continue
		}
		if off, size, ok := p.index.contribution(row, sect); ok {
			u.parts[name] = [2]uint64{off, size}
		}
	}
	return u
}

// dwpUnit is one unit's sections in a package. Its .debug_str is not
// the package's, which all units share and which can be far larger than
// one unit needs: the strings its .debug_str_offsets part names are
// read alone, into a table of its own, and the offsets rewritten to
// point there (unless .debug_str.dwo is compressed: then it is read
// whole, once).
type dwpUnit struct {
	p     *dwpPackage
	parts map[string][2]uint64 // offset and size, by section

	strOnce sync.Once
	strOffs []byte // its .debug_str_offsets part, rewritten
	str     []byte // the strings it names
	strErr  error
}

// maxDWPString bounds the length of one string read from a package's
// .debug_str.dwo: a longer one (none is, in real DWARF) reads as "".
const maxDWPString = 1 << 20

func (u *dwpUnit) Size(name string) uint64 {
	if name == ".debug_str" {
		return u.p.l.Size(name) // an upper bound, for the build's budgets
	}
	return u.parts[name][1]
}

func (u *dwpUnit) Section(name string) ([]byte, error) {
	switch name {
	case ".debug_str", ".debug_str_offsets":
		u.strOnce.Do(u.readStrings)
		if name == ".debug_str" {
			return u.str, u.strErr
		}
		return u.strOffs, u.strErr
	}
	part, ok := u.parts[name]
	if !ok {
		return nil, nil
	}
	return u.p.read(name, part)
}

// read returns part (offset and size) of the named section.
func (p *dwpPackage) read(name string, part [2]uint64) ([]byte, error) {
	if !p.l.Compressed(name) {
		return p.readRange(name, part[0], part[1])
	}
	data, err := p.wholeSection(name)
	if err != nil {
		return nil, err
	}
	if part[0] > uint64(len(data)) || part[1] > uint64(len(data))-part[0] {
		return nil, &elfrel.FormatError{File: p.f.Name, Section: name, Off: int64(min(part[0], 1<<62)),
			Msg: fmt.Sprintf("a unit's %d bytes at %#x are not within the section", part[1], part[0])}
	}
	return data[part[0] : part[0]+part[1]], nil
}

// readRange reads size bytes at off of the named section, which is not
// compressed, and counts them against the package's budget: its index
// can give every unit the same bytes, and the units' strings, those of
// one string, which would otherwise be read once per unit looked up.
func (p *dwpPackage) readRange(name string, off, size uint64) ([]byte, error) {
	if n := p.l.Size(name); off <= n && size <= n-off && p.budget.Add(-int64(size)) < 0 {
		return nil, fmt.Errorf("%s: the units looked up so far read more than %d bytes of it, %d times its DWARF and %d MiB: "+
			"its index gives units the same contributions, or their string offsets the same strings; the other units are not read",
			safename.String(p.f.Name), p.limit, dwpReadFactor, dwpReadSlack>>20)
	}
	return p.l.SectionRange(name, off, size)
}

// What the units of a package may read of it in all: dwpReadFactor times
// its sections' size, and dwpReadSlack. Units read their own parts and
// the strings they name, so that real packages read at most about their
// size: llvm-dwp writes the parts one after the other, and the strings
// of .debug_str.dwo once.
const (
	dwpReadFactor = 4
	dwpReadSlack  = 64 << 20
)

// wholeSection returns the named section, read once.
func (p *dwpPackage) wholeSection(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, ok := p.whole[name]
	if !ok {
		var err error
		if data, err = p.l.Section(name); err != nil {
			return nil, err
		}
		p.whole[name] = data
	}
	return data, nil
}

// readStrings reads the unit's string offsets and the strings they name
// (see dwpUnit). The strings are found in the order of their offsets,
// each byte of .debug_str.dwo read at most once for the unit, and the
// strings that end at the same NUL (each a suffix of the one before) are
// kept once: what an offsets part that names the same long string at
// every byte costs is the string's length, not its square.
func (u *dwpUnit) readStrings() {
	part, ok := u.parts[".debug_str_offsets"]
	if !ok {
		return
	}
	offs, err := u.p.read(".debug_str_offsets", part)
	if err != nil {
		u.strErr = err
		return
	}
	if u.p.l.Compressed(".debug_str") {
		u.strOffs = offs
		u.str, u.strErr = u.p.wholeSection(".debug_str")
		return
	}
	// The entries follow a header in version 5 (unit_length, version,
	// padding), none in GNU's version 2; 8 bytes each in 64-bit DWARF.
	bo := u.p.f.ByteOrder
	start, size := 0, 4
	if u.p.index.version >= 5 && len(offs) >= 4 {
		start = 8
		if bo.Uint32(offs) == 0xffffffff {
			start, size = 16, 8
		}
	}
	entry := func(i int) uint64 {
		if size == 4 {
			return uint64(bo.Uint32(offs[i:]))
		}
		return bo.Uint64(offs[i:])
	}
	var olds []uint64
	for i := start; i+size <= len(offs); i += size {
		olds = append(olds, entry(i))
	}
	slices.Sort(olds)
	olds = slices.Compact(olds)

	str := []byte{0} // offset 0: the empty string, for what cannot be read
	at := make(map[uint64]uint64, len(olds))
	sc := strScan{p: u.p, size: u.p.l.Size(".debug_str")}
	for i := 0; i < len(olds); {
		nul, ok, err := sc.find(olds[i])
		if err != nil {
			u.strErr = err
			return
		}
		if !ok {
			break // no NUL from here to the end: these read as ""
		}
		// The strings at olds[i:j] end at nul; those within maxDWPString
		// bytes of it are suffixes of the first of them.
		j := i
		for j < len(olds) && olds[j] <= nul {
			j++
		}
		k := i
		for k < j && nul-olds[k] > maxDWPString {
			k++
		}
		if k < j {
			base := uint64(len(str)) - olds[k]
			str = append(append(str, sc.bytes(olds[k], nul)...), 0)
			for _, o := range olds[k:j] {
				at[o] = base + o
			}
		}
		i = j
	}
	out := bytes.Clone(offs)
	for i := start; i+size <= len(out); i += size {
		off := at[entry(i)] // 0, "", if it was not found
		if size == 4 {
			bo.PutUint32(out[i:], uint32(off))
		} else {
			bo.PutUint64(out[i:], off)
		}
	}
	u.strOffs, u.str = out, str
}

// strScan reads a package's .debug_str.dwo forward, for one unit's
// strings in the order of their offsets: it keeps the bytes it last read,
// at most about maxDWPString of them, so that no byte is read twice.
type strScan struct {
	p    *dwpPackage
	size uint64 // the section's
	buf  []byte // the section's bytes at [at, at+len(buf))
	at   uint64
}

// find returns the offset of the first NUL at or after o, and whether
// there is one; the bytes from o, or from maxDWPString bytes before the
// NUL if that is later, up to it are then in s.buf.
func (s *strScan) find(o uint64) (nul uint64, ok bool, err error) {
	if o < s.at || o > s.at+uint64(len(s.buf)) {
		s.buf, s.at = s.buf[:0], o
	}
	from := o // where the NUL is looked for
	for n := uint64(64); ; n = min(4*n, maxDWPString) {
		if i := bytes.IndexByte(s.buf[from-s.at:], 0); i >= 0 {
			return from + uint64(i), true, nil
		}
		end := s.at + uint64(len(s.buf))
		if end >= s.size {
			return 0, false, nil
		}
		// Neither a byte before o nor one more than maxDWPString before
		// the NUL, which is at or after end, is of use.
		if keep := max(o, end-min(end, maxDWPString)); keep > s.at {
			s.buf = s.buf[:copy(s.buf, s.buf[keep-s.at:])]
			s.at = keep
		}
		b, err := s.p.readRange(".debug_str", end, min(n, s.size-end))
		if err != nil {
			return 0, false, err
		}
		s.buf, from = append(s.buf, b...), end
	}
}

// bytes returns the section's bytes [lo, hi), which find left in s.buf.
func (s *strScan) bytes(lo, hi uint64) []byte { return s.buf[lo-s.at : hi-s.at] }
