package jitsym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// A large file asked about a few addresses (a profile's frames in libc,
// whose debug file has 2,000 units and 6 MB of .debug_info, compressed
// to 2 MB) is indexed a unit at a time: [Links.Lazy]. The index then
// holds only where each unit's code is, from .debug_aranges (or,
// without it, from the units' root entries), and the first lookup of an
// address in a unit builds an index of that unit alone, by the same
// build as the whole file's (builder.pick), from .debug_info read as
// far as that unit's end (a compressed section is decompressed up to
// there, see elfrel.Prefix) and the other sections read whole. The
// answers are those of the whole index: a unit's frames, lines and
// names come from its own entries and line table. The first address
// found in no unit completes the map (see resolve). Where the units'
// code may overlap (an address that two units claim), a unit has
// entries that refer to others or is split, or the file has few units,
// a unit is large, many units or addresses are asked about (see the
// constants below), the whole index is built, once, and answers from
// then on.

// lazyMinInfo is the size of .debug_info from which [Links.Lazy] indexes
// units as they are needed: below it, the whole index costs little.
const lazyMinInfo = 64 << 10

// lazyMaxUnits is how many units are indexed one at a time before the
// whole index is built instead: past it, a profile asks about much of
// the file, and the whole build, on every CPU, is not much dearer than
// the units still to come. Measured on libc's debug file (2,063 units),
// in CPU time: 13 addresses in 11 units, 0.13 s against 0.34 s for the
// whole index; 200 in 152 units, 0.15 s against 0.26 s; 400 in 264,
// 0.23 s against 0.33 s; 3,000 in 862, 0.26 s against 0.21 s.
const lazyMaxUnits = 128

// lazyMinUnits is the fewest units with code a file indexed lazily has:
// with fewer (bench/native.sh's executable of 32 MB in one unit), an
// address needs much of the file, and the whole index, built on every
// CPU while the profile is read (objtool's Warm), costs no more.
const lazyMinUnits = 16

// lazyMaxAsked is how many lookups are answered a unit at a time before
// the whole index is built instead: a profile that asks about that many
// addresses (objtool's Prefetch asks about them all at once) is served
// better by the whole index, built on every CPU.
const lazyMaxAsked = 1024

// lazyBigUnit: a unit of more than 1/lazyBigUnit of .debug_info is
// indexed with the whole file, whose build reads the line tables and
// names on other CPUs while it walks the entries.
const lazyBigUnit = 4

// errFewUnits says that a file has fewer than lazyMinUnits units.
var errFewUnits = errors.New("too few units to index them one at a time")

// unitRange says that unit (its .debug_info offset) has code in [lo, hi).
type unitRange struct {
	lo, hi, unit uint64
}

// lazyIndex is what a Symbolizer indexed a unit at a time keeps.
type lazyIndex struct {
	file  string
	bo    binary.ByteOrder
	l     *elfrel.DebugLoader
	dwo   *DWO
	warn  func(string)
	tune  tuning
	asked int // lookups so far

	cover    []unitRange // by lo
	maxHi    []uint64    // maxHi[i] is the largest hi of cover[:i+1]
	complete bool        // every unit with code has its ranges in cover, once resolved
	listed   bool        // cover is .debug_aranges's, without the units it leaves out
	// unresolved is set until an address is not found: cover may then
	// lack the units .debug_aranges leaves out (if listed) and the
	// ranges of the units whose root entries give none (rangeless), and
	// resolve adds them.
	unresolved bool
	rangeless  []uint64 // units with entries but no ranges of their own
	extra      int      // units indexed alone by resolve, not for an address

	full atomic.Pointer[Symbolizer] // the whole index, once built

	mu     sync.Mutex
	info   *elfrel.Prefix         // .debug_info, as far as read
	secs   map[string][]byte      // the other sections, once read
	units  map[uint64]*Symbolizer // each unit's index, by offset; nil: it cannot be indexed alone
	failed bool                   // the whole index failed: no DWARF
}

// newLazy makes s index the DWARF that l loads a unit at a time.
func newLazy(s *Symbolizer, bo binary.ByteOrder, l *elfrel.DebugLoader, links Links, tune tuning) (*lazyIndex, error) {
	z := &lazyIndex{file: s.name, bo: bo, l: l, dwo: links.DWO, warn: links.Warn, tune: tune,
		secs: make(map[string][]byte), units: make(map[uint64]*Symbolizer)}
	var err error
	if l.Has(".debug_aranges") {
		data, err := l.Section(".debug_aranges")
		if err != nil {
			return nil, err
		}
		if z.cover, err = parseAranges(data, bo); err != nil {
			return nil, wrapDecode(s.name, err)
		}
		if z.fewUnits() {
			return nil, errFewUnits
		}
		z.complete, z.listed, z.unresolved = true, true, true
		if z.info, err = l.Prefix(".debug_info"); err != nil {
			return nil, err
		}
	} else {
		if z.info, err = l.Prefix(".debug_info"); err != nil {
			return nil, err
		}
		z.complete = true
		if err := z.rootCover(nil); err != nil {
			return nil, err
		}
		z.unresolved = len(z.rangeless) > 0
		if z.fewUnits() {
			return z, errFewUnits // whose sections the whole build reads (see wholeSections)
		}
	}
	z.sortCover()
	// Every unit's build reads these sections whole: read them now, on
	// the goroutine that makes the index (objtool's Warm runs it while
	// the profile is read), rather than at the first lookup. What
	// cannot be read is left to the build that needs it, to report.
	if len(z.cover) > 0 {
		for _, name := range []string{".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
			".debug_str_offsets", ".debug_addr", ".debug_rnglists", ".debug_ranges"} {
			_, _ = z.section(name)
		}
	}
	s.lazy = z
	s.hasDWARF = len(z.cover) > 0 || !z.complete
	return z, nil
}

// fewUnits reports whether fewer than tune.minUnits units have ranges in
// z.cover.
func (z *lazyIndex) fewUnits() bool {
	units := make(map[uint64]bool)
	for _, r := range z.cover {
		units[r.unit] = true
	}
	return len(units) < z.tune.minUnits
}

// wholeSections returns the sections of z for a build of the whole
// index: what z read already is not read again.
func (z *lazyIndex) wholeSections() (Sections, error) {
	info, err := z.info.Read(z.info.Size())
	if err != nil {
		return nil, err
	}
	return lazySections{z: z, info: info}, nil
}

// sortCover sorts z.cover and computes z.maxHi.
func (z *lazyIndex) sortCover() {
	slices.SortFunc(z.cover, func(a, b unitRange) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	z.maxHi = make([]uint64, len(z.cover))
	var hi uint64
	for i, r := range z.cover {
		hi = max(hi, r.hi)
		z.maxHi[i] = hi
	}
}

// parseAranges returns the address ranges of .debug_aranges, data.
func parseAranges(data []byte, bo binary.ByteOrder) ([]unitRange, error) {
	var out []unitRange
	c := &cursor{data: data, bo: bo, sec: ".debug_aranges"}
	for c.off < len(c.data) && c.err == nil {
		start := c.off
		n, dwarf64 := c.unitLength()
		if c.err != nil {
			break
		}
		if n > uint64(len(c.data)-c.off) {
			c.fail("set length %#x exceeds the section", n)
			break
		}
		end := c.off + int(n)
		sub := &cursor{data: c.data[:end], off: c.off, bo: bo, sec: c.sec}
		version := sub.u16()
		unit := sub.offsetSized(dwarf64)
		addrSize, segSize := int(sub.u8()), int(sub.u8())
		if sub.err == nil && (version != 2 || segSize != 0 || (addrSize != 4 && addrSize != 8)) {
			sub.fail("unsupported address range set: version %d, %d-byte addresses, %d-byte segments", version, addrSize, segSize)
		}
		// The tuples start at a multiple of their size from the set.
		if rem := (sub.off - start) % (2 * addrSize); sub.err == nil && rem != 0 {
			sub.skip(2*addrSize - rem)
		}
		for sub.err == nil && sub.off < end {
			lo, size := sub.uintN(addrSize), sub.uintN(addrSize)
			if sub.err != nil || lo == 0 && size == 0 {
				break
			}
			if size > 0 && lo+size > lo {
				out = append(out, unitRange{lo: lo, hi: lo + size, unit: unit})
			}
		}
		if sub.err != nil {
			return nil, sub.err
		}
		c.off = end
	}
	return out, c.err
}

// rootCover adds to z.cover the ranges of the units not in skip, from
// their root entries: the whole of .debug_info is read, but only those
// entries decoded. Units with entries but no ranges go to z.rangeless;
// if a unit header cannot be read, z.complete is cleared.
func (z *lazyIndex) rootCover(skip map[uint64]bool) error {
	info, err := z.info.Read(z.info.Size())
	if err != nil {
		return err
	}
	b := z.builder(&Symbolizer{name: z.file}, info)
	if err := b.budgets(); err != nil {
		return err
	}
	for _, sec := range []struct {
		dst  *[]byte
		name string
	}{
		{&b.debugAbbrev, ".debug_abbrev"}, {&b.debugStr, ".debug_str"}, {&b.debugStrOffsets, ".debug_str_offsets"},
		{&b.debugAddr, ".debug_addr"}, {&b.debugRanges, ".debug_ranges"}, {&b.debugRnglists, ".debug_rnglists"},
	} {
		if *sec.dst, err = z.section(sec.name); err != nil {
			return err
		}
	}
	b.debugInfo = info
	hs, headerErr := b.unitHeaders()
	if headerErr != nil {
		z.complete = false
	}
	var e entry
	for i := range hs {
		h := &hs[i]
		if skip[h.off] {
			continue
		}
		_, w, ok, err := b.unitRoot(h, &e)
		if err != nil {
			return b.wrap(err)
		}
		if !ok {
			continue
		}
		cu := e
		u, rb, hasRB := b.rootInfo(h, &cu, &w)
		rs, err := b.entryRanges(&cu, &u, rb, hasRB)
		if err != nil {
			return b.wrap(err)
		}
		if len(rs) == 0 && cu.children {
			z.rangeless = append(z.rangeless, h.off) // its functions' ranges stand for the unit's (see walkUnit)
		}
		for _, r := range rs {
			if r[0] < r[1] {
				z.cover = append(z.cover, unitRange{lo: r[0], hi: r[1], unit: h.off})
			}
		}
	}
	return nil
}

// resolve completes z.cover: with the ranges of the units that
// .debug_aranges leaves out (a Go program linked by the system linker
// lists its C units alone), from their root entries, as LLVM adds them;
// and with the code of the units whose root entries give no ranges
// (those of data alone, most often), each indexed alone for it. What
// cannot be read clears z.complete: the whole index then answers the
// addresses not found.
func (z *lazyIndex) resolve() {
	z.unresolved = false
	if z.listed {
		z.listed = false
		listed := make(map[uint64]bool)
		for _, r := range z.cover {
			listed[r.unit] = true
		}
		if err := z.rootCover(listed); err != nil {
			z.complete = false
			return
		}
	}
	for _, off := range z.rangeless {
		idx, err := z.buildUnit(off)
		if err != nil || idx == nil {
			z.complete = false
			continue
		}
		z.units[off] = idx
		z.extra++
		lo := idx.segLo
		for i, hi := range idx.segHi {
			if idx.segCode[i] != segHole && lo < hi {
				z.cover = append(z.cover, unitRange{lo: lo, hi: hi, unit: off})
			}
			lo = hi
		}
	}
	z.rangeless = nil
	z.sortCover()
}

// builder returns a builder of s from z's sections, .debug_info being
// info.
func (z *lazyIndex) builder(s *Symbolizer, info []byte) *builder {
	return newBuilder(s, z.bo, lazySections{z: z, info: info}, false, 1, minWalkBytes)
}

// lazySections are the sections a build of z reads: .debug_info as far
// as read, the others whole.
type lazySections struct {
	z    *lazyIndex
	info []byte
}

func (v lazySections) Size(name string) uint64 { return v.z.l.Size(name) }

func (v lazySections) Section(name string) ([]byte, error) {
	if name == ".debug_info" {
		return v.info, nil
	}
	return v.z.section(name)
}

// section returns the named section, whole, reading it the first time.
// The builds read it, never write it.
func (z *lazyIndex) section(name string) ([]byte, error) {
	if data, ok := z.secs[name]; ok {
		return data, nil
	}
	data, err := z.l.Section(name)
	if err != nil {
		return nil, err
	}
	z.secs[name] = data
	return data, nil
}

// indexFor returns the index that answers addr: a unit's, the whole
// file's, or nil if no unit has code there.
func (z *lazyIndex) indexFor(addr uint64) *Symbolizer {
	if full := z.full.Load(); full != nil {
		return full
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if full := z.full.Load(); full != nil {
		return full // built while this lookup waited for the lock
	}
	if z.failed {
		return nil
	}
	if z.asked++; z.asked > z.tune.maxAsked {
		return z.buildFull()
	}
	unit, found, alone := z.unitAt(addr)
	if !found && z.unresolved {
		z.resolve()
		unit, found, alone = z.unitAt(addr)
	}
	switch {
	case !alone:
		return z.buildFull()
	case !found:
		return nil
	}
	if idx, ok := z.units[unit]; ok {
		if idx == nil {
			return z.buildFull()
		}
		return idx
	}
	if len(z.units)-z.extra >= z.tune.maxUnits {
		return z.buildFull()
	}
	idx, err := z.buildUnit(unit)
	if err != nil {
		return z.buildFull() // which says what is wrong
	}
	z.units[unit] = idx
	if idx == nil {
		return z.buildFull()
	}
	return idx
}

// maxScan bounds the ranges unitAt looks back over for ranges that
// cover an address: past it, the units' code is taken to overlap.
const maxScan = 64

// unitAt returns the unit whose code holds addr. found is false if
// none; alone is false if more than one unit may (or, where the ranges
// of some units are not known, none is found): the whole index decides.
func (z *lazyIndex) unitAt(addr uint64) (unit uint64, found, alone bool) {
	i := searchHi(z.maxHi, addr) // the first range that may hold addr
	for k := i; k < len(z.cover) && z.cover[k].lo <= addr; k++ {
		if k-i >= maxScan {
			return 0, false, false
		}
		if r := &z.cover[k]; addr < r.hi {
			if found && r.unit != unit {
				return 0, false, false
			}
			unit, found = r.unit, true
		}
	}
	return unit, found, found || z.complete
}

// buildUnit returns the index of the unit at off alone, or nil if it
// cannot be indexed alone (a split or partial unit; one whose entries
// refer to other units').
func (z *lazyIndex) buildUnit(off uint64) (*Symbolizer, error) {
	head, err := z.info.Read(off + 32)
	if err != nil {
		return nil, err
	}
	c := &cursor{data: head, off: int(min(off, uint64(len(head)))), bo: z.bo, sec: ".debug_info"}
	n, _ := c.unitLength()
	if c.err != nil || n > z.info.Size()-uint64(c.off) {
		return nil, nil // the whole build says what is wrong
	}
	end := uint64(c.off) + n
	if z.tune.bigUnit > 0 && n > z.info.Size()/z.tune.bigUnit {
		return nil, nil
	}
	if v := c.u16(); c.err != nil || v < 2 || v > 5 {
		return nil, nil
	}
	info, err := z.info.Read(end)
	if err != nil {
		return nil, err
	}
	h, err := parseUnitHeader(&cursor{data: info, off: int(off), bo: z.bo, sec: ".debug_info"})
	if err != nil || h.unitType != utCompile {
		return nil, err
	}
	abbrev, err := z.section(".debug_abbrev")
	if err != nil {
		return nil, err
	}
	if within, err := refersWithin(abbrev, z.bo, h.abbrevOff); err != nil || !within {
		return nil, nil
	}
	s := &Symbolizer{name: z.file}
	b := z.builder(s, info)
	b.pick = []uint64{off}
	if err := b.run(); err != nil {
		return nil, err
	}
	if len(b.walked) != 1 || b.walked[0].split.dwoName != 0 || len(s.warnings) > 0 {
		return nil, nil
	}
	s.hasDWARF = true
	return s, nil
}

// refersWithin reports whether the entries of a unit with the
// abbreviation table at off of .debug_abbrev, data, can refer only to
// entries of their own unit.
func refersWithin(data []byte, bo binary.ByteOrder, off uint64) (bool, error) {
	ac := &abbrevCache{tables: make(map[uint64]*abbrevTable), budget: 2*int64(len(data)) + 4096}
	t, err := parseAbbrevs(ac, data, bo, off)
	if err != nil {
		return false, err
	}
	ok := func(a *abbrev) bool {
		for _, at := range a.attrs {
			switch at.form {
			case formRefAddr, formRefSup4, formRefSup8, formGNURefAlt, formIndirect:
				return false
			}
		}
		return true
	}
	for i := range t.dense {
		if !ok(&t.dense[i]) {
			return false, nil
		}
	}
	for _, a := range t.sparse {
		if !ok(a) {
			return false, nil
		}
	}
	return true, nil
}

// buildFull builds the whole index, once, and returns it (nil if it
// failed: what went wrong is passed to warn, and the symbols answer
// alone). z.mu is held.
func (z *lazyIndex) buildFull() *Symbolizer {
	if z.failed {
		return nil
	}
	if full := z.full.Load(); full != nil {
		return full
	}
	info, err := z.info.Read(z.info.Size())
	var s *Symbolizer
	if err == nil {
		s = &Symbolizer{name: z.file}
		b := newBuilder(s, z.bo, lazySections{z: z, info: info}, false, runtime.GOMAXPROCS(0), minWalkBytes)
		b.dwo = z.dwo
		err = b.run()
	}
	if err == nil {
		s.hasDWARF = len(s.units) > 0
		for _, w := range s.warnings {
			z.say(w)
		}
		z.full.Store(s)
	} else {
		z.failed = true
		z.say(fmt.Sprintf("%s; its DWARF is not used, its symbols are", wrapDecode(z.file, err)))
	}
	z.secs, z.units, z.info, z.cover, z.maxHi = nil, nil, nil, nil, nil
	return z.full.Load()
}

// say passes a message about z's file to warn.
func (z *lazyIndex) say(msg string) {
	if z.warn != nil {
		z.warn(msg)
	}
}

// close lets go of what z holds.
func (z *lazyIndex) close() {
	z.mu.Lock()
	defer z.mu.Unlock()
	if full := z.full.Load(); full != nil {
		full.Close()
	}
	z.secs, z.units, z.info, z.cover, z.maxHi = nil, nil, nil, nil, nil
	z.failed = true
}
