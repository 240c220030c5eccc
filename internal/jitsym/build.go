package jitsym

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/safename"
)

// builder holds the state of one index build.
//
// The build runs in phases, each reading the DWARF sections it needs and
// dropping them (and its own tables) when it ends, so that what is live at
// any time is about the largest sections and the index built so far:
//
//  1. walk: .debug_info (with .debug_abbrev, .debug_str, ranges and
//     addresses) gives the units, the subroutine nodes, their address
//     spans, flattened function by function, and the extents of the
//     namespaces and classes. At the same time, on its own goroutine,
//     lineTables reads the line tables from .debug_line (the tables,
//     sequences, rows and files) of the units whose root entries
//     unitRoots read first: an object of one unit, as a JIT's is, is
//     walked on one CPU, and the line tables take the other;
//  2. two steps at the same time, sharing only what they read: nameNodes,
//     the nodes' names, decoding again the entries they refer to while
//     .debug_info is still loaded (it writes the names and the nodes'
//     names); and segments, the spans and the units' ranges made
//     Symbolizer.segHi (then dropped);
//  3. callFiles: the call files of the nodes, kept as file numbers until
//     then, become paths.
//
// With the synthetic object of BenchmarkSynthetic (56 MiB, an 8.6 MiB
// .debug_info), the live heap peaks at about 32 MiB (its
// open-peak-live-MiB), and the index keeps 11 MiB.
type builder struct {
	s       *Symbolizer
	file    string
	qualify bool // qualify short names with their scopes (see nameNodes)
	bo      binary.ByteOrder
	l       Sections

	// Sections, each loaded for the phases that read it, nil otherwise.
	debugInfo, debugAbbrev, debugLine, debugStr, debugLineStr []byte
	debugStrOffsets, debugRanges, debugRnglists, debugAddr    []byte

	abbrevs     *abbrevCache
	tableAt     map[uint64]int32 // line table index by .debug_line offset
	lineBudget  int64            // bytes of line programs that may still be decoded
	rowBudget   int64            // line table rows that may still be kept (see bytesPerRow)
	rangeBudget int64            // address ranges that may still be collected
	rangePool   *atomic.Int64    // while walkers run, what they take their rangeBudget from
	qualBudget  int64            // bytes of qualified names that may still be built
	pathBudget  int64            // bytes of file paths that may still be built
	fileIDs     map[string]int32
	strs        map[strRef]string // copied strings (unit directories, scope names), by location

	// Walk phase: what the later phases need of each unit, beside
	// Symbolizer.units, and what name resolution needs.
	walked  []walkedUnit
	subDies []uint32    // .debug_info offsets of the subroutine entries walked, ascending
	scopes  []scope     // in walk order: ascending start
	nodeDie []nodeEntry // the entry of each node

	// Walk phase: address spans. A tree is a subroutine entry outside any
	// other with everything inside it; its ranges are flattened when it
	// ends, and units are assembled from their trees' spans.
	treeRaw  []rawSpan // ranges of the current tree
	order    int32     // subroutine entries walked: rawSpan.order
	flat     flattener
	cuRaw    []rawSpan  // compile unit ranges; node is the unit index
	spans    spanList   // per unit, sorted, disjoint: innermost subroutine at each address
	unitSpan [][2]int32 // spans.spans[unitSpan[u][0]:unitSpan[u][1]] are unit u's
	spanBuf  []span     // scratch space for sorting spans
	rangeBuf [][2]uint64

	// Naming phase.
	names       *interner // of Symbolizer.names
	scratch     []byte
	summaries   []dieSummary // a cache: see summary
	summaryBits int          // len(summaries) is 1<<summaryBits
	oneSummary  dieSummary   // of an entry not cached
	findWork    [maxRefHops]uint64
	findSeen    [maxRefHops]uint64 // find's scratch

	// Line phase.
	seqRows []row // the rows of the sequence being read

	// pick, if not nil, are the .debug_info offsets of the only units
	// indexed (see lazy.go).
	pick []uint64

	tooDeep int    // subroutine entries cut at maxInlineDepth
	walkers int    // the most builders that walk .debug_info (see walk)
	walkMin uint64 // the least .debug_info bytes each gets

	// Split DWARF: dwo finds the split files of the skeleton units (nil:
	// the skeletons are indexed alone, as when their files are missing),
	// and inherit is set when the build is of such a file: the skeleton
	// units it may complete, by unit ID; its units of other IDs are left
	// out.
	dwo     *DWO
	inherit map[uint64]*splitUnit

	// sup is the supplementary file that entries and strings may refer
	// to (nil: such references are not followed, as llvm-symbolizer does
	// not); supSums caches the summaries of its entries that find
	// visited, and supErr is the first of them that could not be read.
	sup     *Sup
	supSums map[uint64]*dieSummary
	supErr  error
}

// walkedUnit is what the phases after the walk need of a compile unit.
type walkedUnit struct {
	hdr         unitHeader
	abbrevs     *abbrevTable
	strOffBase  uint64 // DW_AT_str_offsets_base, if hasStrOff
	hasStrOff   bool
	stmtList    uint64 // DW_AT_stmt_list, if hasStmtList
	hasStmtList bool
	compDir     string
	split       splitRoot  // what split DWARF adds to its root entry
	from        *splitUnit // in a split file, the skeleton unit it completes
}

// buildWith fills s from the DWARF sections l loads, walking
// .debug_info on up to walkers goroutines, each given at least walkMin
// bytes of it.
func buildWith(s *Symbolizer, bo binary.ByteOrder, l Sections, qualify bool, walkers int, walkMin uint64) error {
	return newBuilder(s, bo, l, qualify, walkers, walkMin).run()
}

// newBuilder returns the builder buildWith runs.
func newBuilder(s *Symbolizer, bo binary.ByteOrder, l Sections, qualify bool, walkers int, walkMin uint64) *builder {
	return &builder{
		walkers: walkers,
		walkMin: max(walkMin, 1),
		qualify: qualify,
		s:       s,
		file:    s.name,
		bo:      bo,
		l:       l,
		tableAt: make(map[uint64]int32),
		fileIDs: make(map[string]int32),
		strs:    make(map[strRef]string),
	}
}

// run builds the index.
func (b *builder) run() error {
	s := b.s
	if err := b.budgets(); err != nil {
		return err
	}
	if err := b.infoPhase(); err != nil {
		return b.wrap(err)
	}
	b.callFiles()
	if msg := b.supWarning(); msg != "" {
		s.warnings = append(s.warnings, msg)
	}
	if b.tooDeep > 0 {
		s.warnings = append(s.warnings, fmt.Sprintf("%s: %d subroutine entries nested deeper than %d were left out; "+
			"their code counts for the deepest caller kept", safename.String(b.file), b.tooDeep, maxInlineDepth))
	}
	return nil
}

// budgets sets the bounds of the build's work and memory from the sizes
// of the sections.
func (b *builder) budgets() error {
	l := b.l
	size := func(name string) int64 { return int64(min(l.Size(name), math.MaxInt64/8)) }
	info, line, str := size(".debug_info"), size(".debug_line"), size(".debug_str")
	if info > math.MaxUint32 {
		return &elfrel.UnsupportedError{File: b.file, Section: ".debug_info", Msg: "section of 4 GiB or more"}
	}
	b.abbrevs = &abbrevCache{tables: make(map[uint64]*abbrevTable), budget: 2*size(".debug_abbrev") + 4096}
	b.lineBudget = 2*line + 4096
	b.rowBudget = line/bytesPerRow + 4096
	b.rangeBudget = (info+size(".debug_ranges")+size(".debug_rnglists"))/2 + 1024
	b.pathBudget = 4*(line+size(".debug_line_str")+str+info) + 1<<20
	b.qualBudget = 4*(str+info) + 1<<20
	return nil
}

// load reads the named section into *dst.
func (b *builder) load(dst *[]byte, name string) error {
	data, err := b.l.Section(name)
	*dst = data
	return err
}

// infoPhase walks .debug_info while the line tables are read, then
// names the nodes while the segments are built, and drops what only
// those steps use.
func (b *builder) infoPhase() error {
	for _, sec := range []struct {
		dst  *[]byte
		name string
	}{
		{&b.debugAbbrev, ".debug_abbrev"},
		{&b.debugStr, ".debug_str"},
		{&b.debugStrOffsets, ".debug_str_offsets"},
		{&b.debugLineStr, ".debug_line_str"},
		{&b.debugAddr, ".debug_addr"},
		{&b.debugRanges, ".debug_ranges"},
		{&b.debugRnglists, ".debug_rnglists"},
		{&b.debugInfo, ".debug_info"},
	} {
		if err := b.load(sec.dst, sec.name); err != nil {
			return err
		}
	}
	// Capacity hints from the size of .debug_info, measured on GCC and
	// Clang objects (a subroutine entry every 50 bytes or so, a node every
	// 70), spare most of the copying of growing slices without reserving
	// much more than needed.
	hs, headerErr := b.unitHeaders()
	n := len(b.debugInfo)
	if b.pick != nil {
		n = 0
		for i := range hs {
			n += int(hs[i].end - hs[i].off)
		}
	}
	b.subDies = make([]uint32, 0, n/48)
	b.nodeDie = make([]nodeEntry, 0, n/72)
	b.s.nodes = make([]node, 0, n/72)
	b.spans.spans = make([]span, 0, n/48)
	// The line tables are read while .debug_info is walked: they need
	// only the units' root entries. (A single unit is walked on one CPU.)
	roots := b.unitRoots(hs)
	lineLoadErr := b.load(&b.debugLine, ".debug_line")
	var debugLine []byte // what keepSplitUnits keeps of it: the line goroutine drops b.debugLine
	if b.dwo != nil && slices.ContainsFunc(roots, func(w walkedUnit) bool { return w.split.dwoName != 0 }) {
		debugLine = b.debugLine
	}
	lines := make(chan lineResult, 1)
	if lineLoadErr == nil {
		go func() { lines <- b.lineTables(roots) }()
	} else {
		lines <- lineResult{}
	}
	// Errors are returned as the phases would meet them one after the
	// other: the walk's, .debug_line's, the names', the line tables'.
	if err := b.walk(hs, headerErr); err != nil {
		<-lines
		return err
	}
	if lineLoadErr != nil {
		return lineLoadErr
	}
	b.keepSplitUnits(debugLine)
	// Names need .debug_info and the string sections, not the others.
	b.debugAddr, b.debugRanges, b.debugRnglists, b.rangeBuf, b.spanBuf = nil, nil, nil, nil, nil
	segs := make(chan struct{})
	go func() { b.segments(); close(segs) }()
	nameErr := b.nameNodes()
	<-segs
	lr := <-lines
	switch {
	case nameErr != nil:
		return nameErr
	case lr.err != nil:
		return lr.err
	case len(lr.tables) != len(b.s.units):
		// unitRoots and the walk read the same root entries.
		return fmt.Errorf("internal error: %d units walked, %d line table entries", len(b.s.units), len(lr.tables))
	}
	for u, ti := range lr.tables {
		b.s.units[u].table = ti
	}
	b.debugLine, b.debugStr, b.debugLineStr, b.debugStrOffsets = nil, nil, nil, nil
	b.debugInfo, b.debugAbbrev = nil, nil
	for i := range b.walked {
		b.walked[i].abbrevs = nil
	}
	b.abbrevs, b.subDies, b.scopes, b.nodeDie, b.names, b.summaries = nil, nil, nil, nil, nil, nil
	b.treeRaw, b.flat, b.scratch = nil, flattener{}, nil
	b.s.nodes, b.s.names = clip(b.s.nodes), clip(b.s.names)
	return nil
}

// A lineResult is what lineTables read: the line table of each unit
// (an index into Symbolizer.tables, or -1 for none), or an error.
type lineResult struct {
	tables []int32
	err    error
}

// lineTables reads the line table of each unit of roots. It runs at the
// same time as the walk, nameNodes and segments (see builder), touching
// only the line tables' own state, and drops .debug_line when done.
func (b *builder) lineTables(roots []walkedUnit) lineResult {
	s := b.s
	// With one section per function, a unit has a range and its line
	// table a sequence for each: about one per 80 bytes of the
	// section.
	hint := len(b.debugLine)
	if b.pick != nil {
		hint = 0 // a few units of many: their tables are a small part
	}
	s.seqs = make([]sequence, 0, hint/80)
	s.seqHi = make([]uint64, 0, hint/80)
	s.lines = make([]byte, 0, hint/2) // GCC's programs take 12 bytes a row, these 5
	tables := make([]int32, len(roots))
	for u := range roots {
		tables[u] = -1
		w := &roots[u]
		if w.hasStmtList {
			ti, err := b.lineTable(w.stmtList, lineUnit{compDir: w.compDir, strOffBase: w.strOffBase, dwarf64: w.hdr.dwarf64})
			if err != nil {
				return lineResult{err: err}
			}
			tables[u] = ti
		}
	}
	b.seqRows, b.debugLine = nil, nil
	s.seqs, s.seqHi, s.files, s.lines = clip(s.seqs), clip(s.seqHi), clip(s.files), clip(s.lines)
	return lineResult{tables: tables}
}

// callFiles turns the nodes' call files, file numbers of their unit's
// line table until then, into Symbolizer.files indexes.
func (b *builder) callFiles() {
	s := b.s
	for u := range s.units {
		var files []int32
		if ti := s.units[u].table; ti >= 0 {
			files = s.tables[ti].files
		}
		hi := len(s.nodes)
		if u+1 < len(s.units) {
			hi = int(s.units[u+1].nodeLo)
		}
		for i := int(s.units[u].nodeLo); i < hi; i++ {
			n := &s.nodes[i]
			if n.callFile >= 0 && int(n.callFile) < len(files) {
				n.callFile = files[n.callFile]
			} else {
				n.callFile = -1
			}
		}
	}
}

// segments builds Symbolizer.segHi from the units' ranges and spans.
func (b *builder) segments() {
	s := b.s
	s.segLo, s.segHi, s.segCode = segments(flattenUnits(b.cuRaw, len(s.units)), &b.spans, b.unitSpan)
	b.cuRaw, b.spans, b.unitSpan = nil, spanList{}, nil
}

// clip returns s, or a copy of it without the spare capacity if that is
// more than an eighth of its length.
func clip[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/8 {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// wrap turns a decoding error into an *elfrel.FormatError naming the file.
func (b *builder) wrap(err error) error { return wrapDecode(b.file, err) }

// wrapDecode turns a decoding error into an *elfrel.FormatError naming
// file.
func wrapDecode(file string, err error) error {
	var de *decodeError
	if errors.As(err, &de) {
		return &elfrel.FormatError{File: file, Section: de.sec, Off: de.off, Msg: de.msg}
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

// strBytes returns the bytes of the string r refers to, in its section
// (nil if it cannot be read).
func (b *builder) strBytes(r strRef) []byte {
	var sec []byte
	switch r.kind() {
	case strInfo:
		sec = b.debugInfo
	case strStr:
		sec = b.debugStr
	case strLineStr:
		sec = b.debugLineStr
	case strSupStr, strSupInfo, strSupLineStr:
		if b.sup == nil {
			return nil
		}
		sec = [...][]byte{strSupStr: b.sup.str, strSupInfo: b.sup.info, strSupLineStr: b.sup.lineStr}[r.kind()]
	default:
		return nil
	}
	off := r.off()
	if off >= uint64(len(sec)) {
		return nil
	}
	for i := off; i < uint64(len(sec)); i++ {
		if sec[i] == 0 {
			return sec[off:i]
		}
	}
	return nil
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
	s := string(b.strBytes(r))
	b.strs[r] = s
	return s
}

// resolveStr turns a DW_FORM_strx reference into a .debug_str one using
// the string offsets base of unit w; it returns strNone if it cannot.
func (b *builder) resolveStr(r strRef, w *walkedUnit) strRef {
	if r.kind() != strIndex {
		return r
	}
	if !w.hasStrOff {
		return 0
	}
	size := uint64(4)
	if w.hdr.dwarf64 {
		size = 8
	}
	so := b.debugStrOffsets
	if r.off() > uint64(len(so))/size {
		return 0
	}
	pos := w.strOffBase + r.off()*size
	if pos < w.strOffBase || pos > uint64(len(so)) || uint64(len(so))-pos < size {
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
// long range list. A walker of several takes its budget from the shared
// pool rangeChunk ranges at a time.
func (b *builder) charge(r [][2]uint64) ([][2]uint64, error) {
	n := int64(len(r))
	for b.rangeBudget < n && b.rangePool != nil {
		left := b.rangePool.Add(-rangeChunk) + rangeChunk // what the pool held
		if left <= 0 {
			break
		}
		b.rangeBudget += min(left, rangeChunk)
	}
	b.rangeBudget -= n
	if b.rangeBudget < 0 {
		return r, errTooManyRanges
	}
	return r, nil
}

// errTooManyRanges is the error of an index that would hold more address
// ranges than rangeBudget allows.
var errTooManyRanges = &decodeError{sec: ".debug_info", off: -1, msg: "more address ranges than the debug sections can describe"}
