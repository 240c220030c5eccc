package jitsym

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// scope is a namespace, class, structure, union, interface or module
// that functions are declared in: the entries in [start, end) of
// .debug_info.
type scope struct {
	start, end uint32
	parent     int32
	name       string
	unnamed    bool   // a type without a name: qualification stops here
	qual       string // qualified name, once computed; "" if it cannot be
	done       bool
}

// frame is the walker's state for one entry whose children it reads.
type frame struct {
	scope     int32     // innermost scope
	opened    int32     // 1 + the scope this entry is, or 0
	sub       int       // stack index of the innermost subroutine frame, or -1
	parentSub int       // for a subroutine frame: the sub of its parent
	skip      bool      // the children are of no interest
	cut       bool      // skipped below a subroutine nested too deep: its subroutines count as cut
	inlined   bool      // DW_TAG_inlined_subroutine
	die       nodeEntry // for a subroutine frame
	node      int32     // node index once created, or -1
	callFile  int32     // DW_AT_call_file (a file number of the unit's line table), or -1
	callLine  uint32
	callCol   uint32
	depth     int32 // subroutine entries this one is in, itself included
}

// maxInlineDepth bounds the nesting of subroutine entries indexed: deeper
// inlined subroutines are cut, their code attributed to the deepest
// caller kept, so that a frame chain (and the memory of the flattened
// spans) stays bounded whatever the DWARF nests. Real code stays within a
// few dozen levels.
const maxInlineDepth = 256

// rawSpan is a subroutine's (or, in cuRaw, a unit's) address range before
// flattening; order is the entry's position in a depth-first walk.
type rawSpan struct {
	lo, hi uint64
	node   int32
	order  int32
}

// minWalkBytes is the least .debug_info each walker of a build gets: a
// smaller section is walked on one goroutine.
const minWalkBytes = 1 << 20

// rangeChunk is how many ranges of the budget a walker of several takes
// from the shared pool at a time (see charge). The pool holds that many
// more per walker, so that what the others hold unused never fails one;
// whether all of them used more than the budget is checked at the end.
const rangeChunk = 1024

// walk reads every compile unit of .debug_info. A large section is split
// into runs of units, walked at the same time by as many builders as
// there are CPUs (see walkers), and their results are joined in order:
// the index is the same as from one walk.
//
// hs are the headers of the units (see unitHeaders), and headerErr what
// was wrong with the header after them, if anything: it is returned
// once they are walked, as one walk would.
func (b *builder) walk(hs []unitHeader, headerErr error) error {
	runs := splitUnits(hs, b.walkers, b.walkMin)
	if len(runs) <= 1 {
		for i := range hs {
			if err := b.walkUnit(&hs[i]); err != nil {
				return err
			}
		}
		return headerErr
	}

	slack := int64(len(runs)) * rangeChunk
	pool := &atomic.Int64{}
	pool.Store(b.rangeBudget + slack)
	b.rangeBudget, b.rangePool = 0, pool
	ws := make([]*builder, len(runs))
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		w := b
		if i > 0 {
			w = b.fork(run)
		}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range run {
				if errs[i] = w.walkUnit(&run[k]); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return err
		}
		if i > 0 {
			b.join(ws[i])
		}
	}
	b.rangeBudget, b.rangePool = b.rangeBudget+max(pool.Load(), 0)-slack, nil
	if b.rangeBudget < 0 {
		return errTooManyRanges // as one walk would have found
	}
	return headerErr
}

// unitHeaders reads the headers of the compile, partial, skeleton and
// split compile units (a .dwo's) of .debug_info, up to the first header
// that cannot be read, and returns what was wrong with it.
func (b *builder) unitHeaders() (hs []unitHeader, headerErr error) {
	c := &cursor{data: b.debugInfo, bo: b.bo, sec: ".debug_info"}
	if b.pick != nil {
		for _, off := range b.pick {
			c.off = int(min(off, uint64(len(c.data))))
			h, err := parseUnitHeader(c)
			if err != nil {
				return hs, err
			}
			hs = append(hs, h)
		}
		return hs, nil
	}
	for c.off < len(c.data) {
		h, err := parseUnitHeader(c)
		if err != nil {
			return hs, err
		}
		if h.version == 0 {
			continue // zero-length padding
		}
		switch h.unitType {
		case utCompile, utPartial, utSkeleton, utSplitCompile:
			hs = append(hs, h)
		}
	}
	return hs, nil
}

// unitRoots returns what the walk will find of the units hs, from their
// root entries alone: one walkedUnit per unit it indexes, in order, up to
// the first whose root entry cannot be read (the walk fails there).
// The line tables are read from it while the walk runs.
func (b *builder) unitRoots(hs []unitHeader) []walkedUnit {
	var roots []walkedUnit
	var e entry
	for i := range hs {
		_, w, ok, err := b.unitRoot(&hs[i], &e)
		if err != nil {
			break
		}
		if ok {
			roots = append(roots, w)
		}
	}
	return roots
}

// unitRoot reads the root entry of the unit h into e. It returns a cursor
// after it and what the phases after the walk need of the unit; ok is
// false, with no error, for a unit the walk passes over (no root entry,
// or one that is not a unit's).
func (b *builder) unitRoot(h *unitHeader, e *entry) (c *cursor, w walkedUnit, ok bool, err error) {
	t, err := b.parseAbbrevs(h.abbrevOff)
	if err != nil {
		return nil, walkedUnit{}, false, err
	}
	c = &cursor{data: b.debugInfo[:h.end], off: int(h.dieOff), bo: b.bo, sec: ".debug_info"}
	cu, err := readEntry(c, h, t, e)
	if err != nil || cu == nil {
		return nil, walkedUnit{}, false, err
	}
	switch cu.tag {
	case tagCompileUnit, tagPartialUnit, tagSkeletonUnit:
	default:
		return nil, walkedUnit{}, false, nil
	}
	w = walkedUnit{hdr: *h, abbrevs: t, strOffBase: cu.strOffBase, hasStrOff: cu.hasStrOffB,
		stmtList: cu.stmtList, hasStmtList: cu.hasStmtList}
	sc := &cursor{data: c.data, off: int(h.dieOff), bo: b.bo, sec: ".debug_info"}
	if w.split, err = readSplitRoot(sc, h, t); err != nil {
		return nil, walkedUnit{}, false, err
	}
	if b.inherit != nil {
		in := b.inherit[w.split.dwoID]
		if !w.split.hasDWOID || in == nil {
			return nil, walkedUnit{}, false, nil // as LLVM, only the skeletons' own units
		}
		in.inherit(&w)
	} else {
		w.compDir = b.str(b.resolveStr(cu.compDir, &w))
	}
	return c, w, true, nil
}

// splitUnits splits the units hs into runs of neighbours, each cut once
// it reaches its share of their bytes of .debug_info: at most n runs, and
// at most one per minBytes.
func splitUnits(hs []unitHeader, n int, minBytes uint64) [][]unitHeader {
	if len(hs) == 0 {
		return nil
	}
	total := hs[len(hs)-1].end - hs[0].off
	n = max(1, min(n, int(min(total/minBytes, uint64(len(hs))))))
	var runs [][]unitHeader
	start := 0
	for i := range hs {
		// Cut after unit i once the run reaches its share of the bytes.
		share := total * uint64(len(runs)+1) / uint64(n)
		if len(runs) < n-1 && hs[i].end-hs[0].off >= share {
			runs = append(runs, hs[start:i+1])
			start = i + 1
		}
	}
	if start < len(hs) {
		runs = append(runs, hs[start:])
	}
	return runs
}

// fork returns a builder that walks the units run for b, at the same time
// as b: it reads b's sections and shares its abbreviation tables and
// range budget, and gathers its own units, nodes, spans and scopes,
// which join then appends to b's.
func (b *builder) fork(run []unitHeader) *builder {
	w := &builder{
		s:       &Symbolizer{name: b.s.name},
		file:    b.file,
		qualify: b.qualify,
		bo:      b.bo,
		l:       b.l,

		debugInfo: b.debugInfo, debugAbbrev: b.debugAbbrev, debugStr: b.debugStr, debugLineStr: b.debugLineStr,
		debugStrOffsets: b.debugStrOffsets, debugRanges: b.debugRanges, debugRnglists: b.debugRnglists, debugAddr: b.debugAddr,

		abbrevs:   b.abbrevs,
		rangePool: b.rangePool,
		inherit:   b.inherit,
		strs:      make(map[strRef]string),
	}
	n := run[len(run)-1].end - run[0].off // the capacity hints of infoPhase
	w.subDies = make([]uint32, 0, n/48)
	w.nodeDie = make([]nodeEntry, 0, n/72)
	w.s.nodes = make([]node, 0, n/72)
	w.spans.spans = make([]span, 0, n/48)
	return w
}

// join appends what w walked, after b's own units, to b: indexes of
// units, nodes, scopes, spans and long spans move by what b has.
func (b *builder) join(w *builder) {
	unitBase, nodeBase, scopeBase := int32(len(b.s.units)), int32(len(b.s.nodes)), int32(len(b.scopes))
	spanBase, longBase := int32(len(b.spans.spans)), uint32(len(b.spans.long))
	b.walked = append(b.walked, w.walked...)
	for _, u := range w.s.units {
		u.nodeLo += nodeBase
		b.s.units = append(b.s.units, u)
	}
	for _, n := range w.s.nodes {
		if n.parent >= 0 {
			n.parent += nodeBase
		}
		b.s.nodes = append(b.s.nodes, n)
	}
	b.nodeDie = append(b.nodeDie, w.nodeDie...)
	b.subDies = append(b.subDies, w.subDies...)
	for _, sc := range w.scopes {
		if sc.parent >= 0 {
			sc.parent += scopeBase
		}
		b.scopes = append(b.scopes, sc)
	}
	for _, sp := range w.spans.spans {
		sp.node += nodeBase
		if sp.size&longSpan != 0 {
			sp.size = longSpan | (sp.size&^longSpan + longBase)
		}
		b.spans.spans = append(b.spans.spans, sp)
	}
	b.spans.long = append(b.spans.long, w.spans.long...)
	for _, us := range w.unitSpan {
		b.unitSpan = append(b.unitSpan, [2]int32{us[0] + spanBase, us[1] + spanBase})
	}
	for _, r := range w.cuRaw {
		r.node += unitBase
		b.cuRaw = append(b.cuRaw, r)
	}
	b.tooDeep += w.tooDeep
	b.rangeBudget += w.rangeBudget // what w took from the pool and left
}

// walkUnit indexes one unit: its address ranges, where its line table
// is, and the subroutine entries in its tree.
func (b *builder) walkUnit(h *unitHeader) error {
	var e entry
	c, root, ok, err := b.unitRoot(h, &e)
	if !ok {
		return err
	}
	cu, t := e, root.abbrevs // e is reused for the children
	u, rnglistsBase, hasRnglistsBase := b.rootInfo(h, &cu, &root)
	b.walked = append(b.walked, root)
	w := &b.walked[len(b.walked)-1]

	unitIdx := int32(len(b.s.units))
	b.s.units = append(b.s.units, unit{table: -1, nodeLo: int32(len(b.s.nodes))})
	rs, err := b.entryRanges(&cu, &u, rnglistsBase, hasRnglistsBase)
	if err != nil {
		return err
	}
	cuRanges := len(rs)
	b.cuRaw = slices.Grow(b.cuRaw, len(rs))
	for _, r := range rs {
		b.cuRaw = append(b.cuRaw, rawSpan{lo: r[0], hi: r[1], node: unitIdx})
	}

	lo := int32(len(b.spans.spans))
	stack := []frame{{scope: -1, sub: -1, parentSub: -1, node: -1}}
	if !cu.children {
		stack = nil
	}
	for len(stack) > 0 && c.off < len(c.data) {
		en, err := readEntry(c, h, t, &e)
		if err != nil {
			return err
		}
		if en == nil {
			if sc := stack[len(stack)-1].opened; sc > 0 {
				b.scopes[sc-1].end = uint32(c.off)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		top := stack[len(stack)-1]
		sub := e.tag == tagSubprogram || e.tag == tagInlinedSubroutine
		switch {
		case top.skip:
			if top.cut && sub {
				b.tooDeep++ // one of the subroutines below a cut one
			}
			if e.children {
				stack = append(stack, frame{skip: true, cut: top.cut})
			}
		case sub && top.depth >= maxInlineDepth:
			b.tooDeep++
			if e.children {
				stack = append(stack, frame{skip: true, cut: true})
			}
		case e.tag == tagSubprogram || e.tag == tagInlinedSubroutine:
			fr, err := b.subroutine(&e, stack, &u, w, rnglistsBase, hasRnglistsBase)
			if err != nil {
				return err
			}
			if e.children {
				stack = append(stack, fr)
			}
		case !e.children:
		case e.tag == tagNamespace || e.tag == tagClassType || e.tag == tagStructType ||
			e.tag == tagUnionType || e.tag == tagInterfaceType || e.tag == tagModule ||
			e.tag == tagEnumerationType: // Rust declares an enum's methods in it
			sc := b.newScope(top.scope, e.tag, uint32(e.off), b.resolveStr(e.name, w))
			stack = append(stack, frame{scope: sc, opened: sc + 1, sub: top.sub, parentSub: -1, node: -1, depth: top.depth})
		case e.tag == tagFormalParameter || e.tag == tagVariable ||
			e.tag == tagArrayType || e.tag == tagSubroutineType || e.tag == tagCallSite || e.tag == tagGNUCallSite:
			// Nothing below these has code: jump over the children.
			if e.sibling >= uint64(c.off) && e.sibling <= h.end {
				c.off = int(e.sibling)
			} else {
				stack = append(stack, frame{skip: true})
			}
		default: // lexical blocks and the like: transparent
			stack = append(stack, frame{scope: top.scope, sub: top.sub, parentSub: -1, node: -1, depth: top.depth})
		}
	}
	for _, fr := range stack { // a unit cut short: its open scopes end with it
		if fr.opened > 0 {
			b.scopes[fr.opened-1].end = uint32(h.end)
		}
	}

	b.flushTree()
	b.unitSpans(int(lo))
	b.unitSpan = append(b.unitSpan, [2]int32{lo, int32(len(b.spans.spans))})
	if cuRanges == 0 {
		// No DW_AT_low_pc/high_pc or DW_AT_ranges on the unit: llvm-
		// symbolizer finds nothing in it; use its functions' ranges.
		for i := range b.spans.spans[lo:] {
			sp := &b.spans.spans[int(lo)+i]
			b.cuRaw = append(b.cuRaw, rawSpan{lo: sp.lo, hi: b.spans.hi(sp), node: unitIdx})
		}
	}
	return nil
}

// rootInfo returns what reading the address ranges of unit h's entries
// needs of its root entry cu: the unit's bases.
func (b *builder) rootInfo(h *unitHeader, cu *entry, root *walkedUnit) (u unitInfo, rnglistsBase uint64, hasRnglistsBase bool) {
	u = unitInfo{version: h.version, addrSize: h.addrSize, dwarf64: h.dwarf64, dieOff: h.dieOff,
		addrBase: cu.addrBase, hasAddrs: cu.hasAddrBase}
	if !u.hasAddrs && root.split.hasGNUAddrBase {
		u.addrBase, u.hasAddrs = root.split.gnuAddrBase, true
	}
	rnglistsBase, hasRnglistsBase = cu.rnglistsBase, cu.hasRnglistsBase
	if in := root.from; in != nil {
		if !u.hasAddrs {
			u.addrBase, u.hasAddrs = in.addrBase, in.hasAddrBase
		}
		u.rangesBase = in.rangesBase
		if !hasRnglistsBase && h.version >= 5 {
			// As LLVM reads a .dwo: the range list offsets follow the
			// header at the start of .debug_rnglists.dwo.
			rnglistsBase, hasRnglistsBase = 12, true
			if h.dwarf64 {
				rnglistsBase = 20
			}
		}
	}
	if u.base, u.hasBase = b.resolveAddr(cu.lowPC, &u); !u.hasBase {
		u.base, u.hasBase = b.resolveAddr(cu.entryPC, &u)
	}
	if in := root.from; in != nil {
		u.base, u.hasBase = in.base, in.hasBase // LLVM takes the skeleton's
	}
	return u, rnglistsBase, hasRnglistsBase
}

// subroutine records a DW_TAG_subprogram or DW_TAG_inlined_subroutine
// entry and its address ranges, and returns its frame.
func (b *builder) subroutine(e *entry, stack []frame, u *unitInfo, w *walkedUnit, rnglistsBase uint64, hasRnglistsBase bool) (frame, error) {
	top := &stack[len(stack)-1]
	if top.sub < 0 {
		b.flushTree() // a new tree: the last one is complete
	}
	b.subDies = append(b.subDies, uint32(e.off))
	order := b.order
	b.order++
	fr := frame{scope: top.scope, sub: len(stack), parentSub: top.sub, die: b.nodeEntry(e, w), node: -1,
		inlined: e.tag == tagInlinedSubroutine, callFile: -1, callLine: uint32(e.callLine), callCol: uint32(e.callCol),
		depth: top.depth + 1}
	if e.hasCallFile && e.callFile <= math.MaxInt32 {
		fr.callFile = int32(e.callFile) // resolved with the line table (linePhase)
	}
	rs, err := b.entryRanges(e, u, rnglistsBase, hasRnglistsBase)
	if err != nil {
		return fr, err
	}
	for _, r := range rs {
		if r[0] >= r[1] {
			continue // LLVM ignores empty ranges
		}
		if fr.node < 0 {
			fr.node = b.newNode(stack, &fr)
		}
		b.treeRaw = append(b.treeRaw, rawSpan{lo: r[0], hi: r[1], node: fr.node, order: order})
	}
	return fr, nil
}

// nodeEntry is the entry of a node, for nameNodes: its offset, and if
// nothing in it but one DW_AT_abstract_origin or DW_AT_specification
// matters to names (the usual inlined instance or out-of-line copy), that
// reference, so that it need not be decoded again.
type nodeEntry struct {
	off uint32
	ref uint32 // or 0
}

func (b *builder) nodeEntry(e *entry, w *walkedUnit) nodeEntry {
	ne := nodeEntry{off: uint32(e.off)}
	if b.resolveStr(e.linkage, w) != 0 || b.resolveStr(e.name, w) != 0 || e.hasDeclLine || e.external {
		return ne
	}
	switch ref := e.origin | e.spec; {
	case e.origin != 0 && e.spec != 0, ref > math.MaxUint32:
	default:
		ne.ref = uint32(ref)
	}
	return ne
}

// flushTree flattens the ranges of the tree just walked onto b.spans.
func (b *builder) flushTree() {
	b.flat.flatten(&b.spans, b.treeRaw)
	b.treeRaw = b.treeRaw[:0]
}

// unitSpans sorts the spans of one unit, b.spans.spans[lo:], flattened
// tree by tree. Trees rarely overlap; where they do, the later tree wins,
// as the later entry in the walk does within one tree: every entry of a
// tree comes after those of the trees before it, and so do its nodes,
// which is how the overlaps are resolved here.
func (b *builder) unitSpans(lo int) {
	us := b.spans.spans[lo:]
	if len(b.spanBuf) < len(us) {
		b.spanBuf = make([]span, len(us))
	}
	radixSort(us, b.spanBuf, func(sp *span) uint64 { return sp.lo })
	overlap := false
	for i := 1; i < len(us) && !overlap; i++ {
		overlap = us[i].lo < b.spans.hi(&us[i-1])
	}
	if !overlap {
		return
	}
	raw := make([]rawSpan, len(us))
	for i := range us {
		raw[i] = rawSpan{lo: us[i].lo, hi: b.spans.hi(&us[i]), node: us[i].node, order: us[i].node}
	}
	b.spans.spans = b.spans.spans[:lo]
	b.flat.flatten(&b.spans, raw)
}

// newNode creates the node of fr, first creating those of the frames it
// is inlined into, which are on the stack.
func (b *builder) newNode(stack []frame, fr *frame) int32 {
	parent := int32(-1)
	if fr.inlined {
		// The enclosing subroutine frames without a node, innermost first,
		// up to the subprogram or the first one with a node.
		var chain []int
		k := fr.parentSub
		for k >= 0 && stack[k].node < 0 {
			chain = append(chain, k)
			if !stack[k].inlined {
				k = -1
				break
			}
			k = stack[k].parentSub
		}
		if k >= 0 {
			parent = stack[k].node
		}
		for i := len(chain) - 1; i >= 0; i-- {
			anc := &stack[chain[i]]
			anc.node = b.addNode(anc, parent)
			parent = anc.node
		}
	}
	return b.addNode(fr, parent)
}

func (b *builder) addNode(fr *frame, parent int32) int32 {
	if !fr.inlined {
		parent = -1 // a subprogram ends the chain
	}
	b.s.nodes = append(b.s.nodes, node{parent: parent, callFile: fr.callFile, callLine: fr.callLine, callCol: fr.callCol})
	b.nodeDie = append(b.nodeDie, fr.die)
	return int32(len(b.s.nodes) - 1)
}

func (b *builder) newScope(parent int32, tag uint64, start uint32, name strRef) int32 {
	s := scope{start: start, end: start, parent: parent, name: b.str(name)}
	if s.name == "" {
		if tag == tagNamespace {
			s.name = "(anonymous namespace)" // as the demangler prints it
		} else {
			s.unnamed = true // a lambda's closure type, say
		}
	}
	b.scopes = append(b.scopes, s)
	return int32(len(b.scopes) - 1)
}

// lineTable returns the index of the line table at off, parsing it the
// first time.
func (b *builder) lineTable(off uint64, u lineUnit) (int32, error) {
	if i, ok := b.tableAt[off]; ok {
		return i, nil
	}
	i, err := b.parseLineTable(off, u)
	if err != nil {
		return 0, err
	}
	b.tableAt[off] = i
	return i, nil
}
