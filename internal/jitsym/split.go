package jitsym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/regfile"
	"github.com/jitpprof/pprof/internal/safename"
)

// Split DWARF (GCC's and clang's -gsplit-dwarf) leaves in the binary a
// skeleton unit for each compile unit: its address ranges, its line
// table and the name of the file (a .dwo) that holds the rest of its
// entries, the subprograms and inlined subroutines among them. As
// llvm-symbolizer does, an address in a skeleton unit is symbolized from
// its .dwo when there is one with the same unit ID, and from the
// skeleton's line table alone otherwise.
//
// A .dwo is indexed the first time an address needs it, by a build of
// its own (see splitState.index), whose units inherit from the skeleton
// what the binary keeps for them: the line table, the compilation
// directory and the base of their entries in .debug_addr (and, for
// DWARF 4's GNU extension, in .debug_ranges).

// Attributes of split DWARF, DWARF 5's and GNU's for DWARF 4.
const (
	atDWOName       = 0x76
	atGNUDWOName    = 0x2130
	atGNUDWOID      = 0x2131
	atGNURangesBase = 0x2132
	atGNUAddrBase   = 0x2133
)

// A SplitUnit is a skeleton unit whose entries live in a split DWARF
// file.
type SplitUnit struct {
	// DWOName is the file's name as the skeleton gives it
	// (DW_AT_dwo_name or DW_AT_GNU_dwo_name): a path, absolute or
	// relative to CompDir.
	DWOName string
	// CompDir is the skeleton's DW_AT_comp_dir.
	CompDir string
	// ID is the unit ID that the skeleton and its unit in the file share.
	ID uint64
}

// DWO says how an index finds the split DWARF files of its skeleton
// units; see [Links].
type DWO struct {
	// Open opens the split DWARF file of u, a regular file, or returns
	// nil and no error if there is none; an error is passed to Warn. It
	// is called at most once per skeleton unit, from any goroutine. A
	// file that several skeletons name, by whatever names, is read once
	// (see [regfile.IDOf]).
	Open func(u SplitUnit) (*os.File, error)
	// Package, if not nil, opens the binary's DWARF package (.dwp), or
	// returns nil and no error if there is none. It is called once, the
	// first time a split unit is needed; with a package, as with
	// llvm-symbolizer, every split unit is looked for there, and Open
	// is not called.
	Package func() (*elfrel.File, error)
	// Warn, if not nil, is told why a split DWARF file cannot be used
	// (an error of Open, a file that cannot be read, one of another
	// unit; its skeleton then answers alone), or what of one was left
	// out of its index, naming the file.
	Warn func(msg string)
}

// NewWithDWO is [NewWithDebug] for a binary built with split DWARF: the
// entries of each skeleton unit are read from the split DWARF file that
// dwo opens for it, the first time an address of the unit is looked up.
func NewWithDWO(f, debug *elfrel.File, dwo *DWO) (*Symbolizer, error) {
	return NewWithLinks(f, debug, Links{DWO: dwo})
}

// splitRoot is what split DWARF adds to a unit's root entry.
type splitRoot struct {
	dwoName        strRef
	dwoID          uint64
	hasDWOID       bool
	gnuAddrBase    uint64
	hasGNUAddrBase bool
	gnuRangesBase  uint64
}

// readSplitRoot reads, from the root entry of unit h at c.off, the split
// DWARF attributes that readEntry does not keep. The unit ID is the
// header's (DWARF 5) or DW_AT_GNU_dwo_id's.
func readSplitRoot(c *cursor, h *unitHeader, t *abbrevTable) (splitRoot, error) {
	r := splitRoot{dwoID: h.dwoID, hasDWOID: h.hasDWOID}
	code := c.uleb()
	a := t.get(code)
	if c.err != nil || a == nil {
		return r, c.err // readEntry read this entry: it does not happen
	}
	for i := range a.attrs {
		attr := &a.attrs[i]
		form := attr.form
		if form == formIndirect {
			if form = c.uleb(); form == formIndirect || form == formImplicit {
				c.fail("invalid indirect form %#x", form)
			}
		}
		v, s := readForm(c, h, form, attr.implicit)
		if c.err != nil {
			return r, c.err
		}
		switch attr.attr {
		case atDWOName, atGNUDWOName:
			if r.dwoName == 0 {
				r.dwoName = s
			}
		case atGNUDWOID:
			if isConst(form) {
				r.dwoID, r.hasDWOID = v, true
			}
		case atGNUAddrBase:
			r.gnuAddrBase, r.hasGNUAddrBase = v, true
		case atGNURangesBase:
			r.gnuRangesBase = v
		}
	}
	return r, nil
}

// splitState is what a Symbolizer keeps to index its split units.
type splitState struct {
	binary  string // the binary's name, for messages
	dwo     *DWO
	qualify bool
	// main holds the binary's sections that the split units read:
	// .debug_addr, .debug_line, .debug_line_str and .debug_ranges.
	main  map[string][]byte
	of    []int32 // of[u] is unit u's index in units, or -1
	units []*splitUnit
	byID  map[uint64]*splitUnit // the first of units with each ID

	filesMu sync.Mutex
	files   map[regfile.ID]*dwoFile // the .dwo files opened, by identity

	pkgOnce sync.Once
	pkg     *dwpPackage // the binary's DWARF package, or nil
}

// openPackage returns the binary's DWARF package, opening it the first
// time; nil if there is none or it cannot be used (said once).
func (st *splitState) openPackage() *dwpPackage {
	st.pkgOnce.Do(func() {
		if st.dwo.Package == nil {
			return
		}
		f, err := st.dwo.Package()
		if err == nil && f != nil {
			if st.pkg, err = openPackage(f); err != nil {
				f.Close()
			}
		}
		if err != nil && st.dwo.Warn != nil {
			st.dwo.Warn(err.Error() + "; the .dwo files are read instead")
		}
	})
	return st.pkg
}

// close closes the package, if one was opened.
func (st *splitState) close() {
	st.pkgOnce.Do(func() {}) // none is opened after this
	if st.pkg != nil {
		st.pkg.f.Close()
	}
}

// dwoFile is a .dwo file that one or more skeleton units name.
type dwoFile struct {
	fd    *os.File // the first opened, until it is indexed
	name  string   // its name
	once  sync.Once
	index *Symbolizer     // of the file, or nil if it could not be used
	err   error           // why not
	ids   map[uint64]bool // the IDs of the units indexed
}

// splitUnit is one skeleton unit with a split DWARF file, and what its
// file's units inherit from it.
type splitUnit struct {
	SplitUnit
	addrBase    uint64
	hasAddrBase bool
	base        uint64 // the skeleton's base address, if hasBase
	hasBase     bool
	rangesBase  uint64
	stmtList    uint64
	hasStmtList bool

	once  sync.Once
	index *Symbolizer // the file's, or nil if it could not be used
}

// keepSplitUnits records the skeleton units the walk found, if b was
// given a DWO, with the binary's sections they read (debugLine is
// .debug_line, which the line tables drop).
func (b *builder) keepSplitUnits(debugLine []byte) {
	if b.dwo == nil || b.dwo.Open == nil {
		return
	}
	var st *splitState
	for u := range b.walked {
		w := &b.walked[u]
		if w.split.dwoName == 0 || !w.split.hasDWOID {
			continue // LLVM needs both
		}
		if st == nil {
			st = &splitState{binary: b.file, dwo: b.dwo, qualify: b.qualify, of: make([]int32, len(b.walked)),
				byID: map[uint64]*splitUnit{}, files: map[regfile.ID]*dwoFile{},
				main: map[string][]byte{".debug_addr": b.debugAddr, ".debug_line": debugLine,
					".debug_line_str": b.debugLineStr, ".debug_ranges": b.debugRanges}}
			for i := range st.of {
				st.of[i] = -1
			}
		}
		st.of[u] = int32(len(st.units))
		su := &splitUnit{
			SplitUnit: SplitUnit{DWOName: b.str(b.resolveStr(w.split.dwoName, w)), CompDir: w.compDir, ID: w.split.dwoID},
			stmtList:  w.stmtList, hasStmtList: w.hasStmtList,
			rangesBase: w.split.gnuRangesBase,
		}
		b.skeletonBases(w, su)
		st.units = append(st.units, su)
		if st.byID[su.ID] == nil {
			st.byID[su.ID] = su
		}
	}
	b.s.split = st
}

// skeletonBases sets the bases that su's units inherit from the
// skeleton's root entry, which is read again here (the walk keeps them
// in no table): its DW_AT_addr_base (or DW_AT_GNU_addr_base), and its
// DW_AT_low_pc (or DW_AT_entry_pc), the base address of range lists, as
// LLVM's DWARFUnit::getBaseAddress takes a split unit's from its skeleton.
func (b *builder) skeletonBases(w *walkedUnit, su *splitUnit) {
	var e entry
	c := &cursor{data: b.debugInfo[:w.hdr.end], off: int(w.hdr.dieOff), bo: b.bo, sec: ".debug_info"}
	if _, err := readEntry(c, &w.hdr, w.abbrevs, &e); err != nil {
		return // the walk read it: it does not happen
	}
	u := unitInfo{version: w.hdr.version, addrSize: w.hdr.addrSize, dwarf64: w.hdr.dwarf64, addrBase: e.addrBase, hasAddrs: e.hasAddrBase}
	if !u.hasAddrs {
		u.addrBase, u.hasAddrs = w.split.gnuAddrBase, w.split.hasGNUAddrBase
	}
	su.addrBase, su.hasAddrBase = u.addrBase, u.hasAddrs
	if su.base, su.hasBase = b.resolveAddr(e.lowPC, &u); !su.hasBase {
		su.base, su.hasBase = b.resolveAddr(e.entryPC, &u)
	}
}

// inherit gives the root of a unit of the split file what the skeleton
// keeps for it: the line table and the compilation directory; and the
// string offsets base LLVM assumes for a .dwo (after the header of
// .debug_str_offsets.dwo in DWARF 5, none in DWARF 4) unless it has one.
func (su *splitUnit) inherit(w *walkedUnit) {
	w.from = su
	w.compDir = su.CompDir
	w.stmtList, w.hasStmtList = su.stmtList, su.hasStmtList
	if !w.hasStrOff {
		w.hasStrOff = true
		switch {
		case w.hdr.version < 5:
			w.strOffBase = 0
		case w.hdr.dwarf64:
			w.strOffBase = 16
		default:
			w.strOffBase = 8
		}
	}
}

// indexOf returns the index of unit u's split file, or nil if it is not
// a skeleton unit or its file cannot be used.
func (st *splitState) indexOf(u int32) *Symbolizer {
	if int(u) >= len(st.of) || st.of[u] < 0 {
		return nil
	}
	return st.index(st.of[u])
}

// index returns the index of split unit k's file, building it the first
// time; nil if it cannot be used.
func (st *splitState) index(k int32) *Symbolizer {
	su := st.units[k]
	su.once.Do(func() {
		var err error
		if su.index, err = st.build(su); err != nil && st.dwo.Warn != nil {
			st.dwo.Warn(err.Error() + "; the code it describes is symbolized from the binary's skeleton units alone")
		}
	})
	return su.index
}

// build indexes the split file of su: its unit in the binary's DWARF
// package if it has one, else its .dwo file.
func (st *splitState) build(su *splitUnit) (*Symbolizer, error) {
	if p := st.openPackage(); p != nil {
		secs := p.unit(su.ID)
		if secs == nil {
			return nil, st.notFound(p.f.Name, su)
		}
		s, ids, err := st.buildFrom(map[uint64]*splitUnit{su.ID: su}, p.f.Name, p.f.ByteOrder, secs)
		if err == nil && !ids[su.ID] {
			err = st.notFound(p.f.Name, su)
		}
		return s, err
	}
	fd, err := st.dwo.Open(su.SplitUnit)
	if fd == nil || err != nil {
		return nil, err
	}
	df, err := st.file(fd)
	if err != nil {
		return nil, err
	}
	df.once.Do(func() {
		df.name = df.fd.Name()
		df.index, df.ids, df.err = st.buildFile(df.fd)
		df.fd = nil
	})
	if df.err != nil {
		return nil, df.err
	}
	if !df.ids[su.ID] {
		return nil, st.notFound(df.name, su)
	}
	return df.index, nil
}

// file returns the .dwo file open in fd, keeping fd if the file is new
// and closing it if not.
func (st *splitState) file(fd *os.File) (*dwoFile, error) {
	id, err := regfile.IDOf(fd)
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("%s: %w", safename.String(fd.Name()), err)
	}
	st.filesMu.Lock()
	defer st.filesMu.Unlock()
	df := st.files[id]
	if df == nil {
		df = &dwoFile{fd: fd}
		st.files[id] = df
	} else {
		fd.Close()
	}
	return df, nil
}

// buildFile indexes the .dwo file open in fd, and closes it: its units
// that complete the binary's skeleton units, each with what its own
// skeleton gives it. It returns the IDs of the units indexed: several
// skeletons name one .dwo only in odd or hostile binaries, but then the
// file is read and walked once, not once per skeleton.
func (st *splitState) buildFile(fd *os.File) (*Symbolizer, map[uint64]bool, error) {
	f, err := elfrel.OpenFile(fd)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	l, err := f.DWOLoader()
	if err != nil {
		if errors.Is(err, elfrel.ErrNoDWARF) {
			return nil, nil, fmt.Errorf("%s: no .debug_info.dwo: not a split DWARF file", safename.String(f.Name))
		}
		return nil, nil, err
	}
	return st.buildFrom(st.byID, f.Name, f.ByteOrder, l)
}

// buildFrom indexes, from the sections secs of the split file called
// name, its units that complete the skeleton units inherit (by unit ID):
// nil if there are none. It returns the IDs of the units indexed.
func (st *splitState) buildFrom(inherit map[uint64]*splitUnit, name string, bo binary.ByteOrder, secs Sections) (*Symbolizer, map[uint64]bool, error) {
	s := &Symbolizer{name: name}
	b := newBuilder(s, bo, dwoSections{dwo: secs, main: st.main}, st.qualify, 1, minWalkBytes)
	b.inherit = inherit
	if err := b.run(); err != nil {
		return nil, nil, b.wrap(err)
	}
	if len(b.walked) == 0 {
		return nil, nil, nil
	}
	ids := make(map[uint64]bool, len(b.walked))
	for _, w := range b.walked {
		ids[w.from.ID] = true
	}
	if st.dwo.Warn != nil {
		for _, w := range s.warnings { // what of the file was left out
			st.dwo.Warn(w)
		}
	}
	s.hasDWARF = true
	return s, ids, nil
}

// notFound is the error of a split file without su's unit.
func (st *splitState) notFound(name string, su *splitUnit) error {
	return fmt.Errorf("%s: no unit with ID %#x, which its skeleton unit in %s names; the file belongs to another build",
		safename.String(name), su.ID, safename.String(st.binary))
}

// dwoSections gives a split file's build its sections: the file's
// (loaded by elfrel.File.DWOLoader), and the binary's that its units
// read.
type dwoSections struct {
	dwo  Sections
	main map[string][]byte
}

func (d dwoSections) Size(name string) uint64 {
	if b, ok := d.main[name]; ok {
		return uint64(len(b))
	}
	return d.dwo.Size(name)
}

func (d dwoSections) Section(name string) ([]byte, error) {
	if b, ok := d.main[name]; ok {
		return b, nil
	}
	return d.dwo.Section(name)
}
