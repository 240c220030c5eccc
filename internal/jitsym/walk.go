package jitsym

// dieInfo is what name resolution needs from a DW_TAG_subprogram or
// DW_TAG_inlined_subroutine entry.
type dieInfo struct {
	off           uint64
	name, linkage strRef // resolved: never strIndex
	scope         int32  // scopes index of the enclosing namespace or type, or -1
	declLine      uint32
	hasDeclLine   bool
	external      bool   // DW_AT_external
	origin, spec  uint64 // absolute .debug_info offsets, or 0
	originIdx     int32  // dies index of origin, or -1 (set by linkRefs)
	specIdx       int32  // dies index of spec, or -1
}

// scope is a namespace, class, structure, union, interface or module
// that functions are declared in.
type scope struct {
	parent  int32
	name    string
	unnamed bool   // a type without a name: qualification stops here
	qual    string // qualified name, once computed; "" if it cannot be
	done    bool
}

// frame is the walker's state for one entry whose children it reads.
type frame struct {
	scope     int32 // innermost scope
	sub       int   // stack index of the innermost subroutine frame, or -1
	parentSub int   // for a subroutine frame: the sub of its parent
	skip      bool  // the children are of no interest
	inlined   bool  // DW_TAG_inlined_subroutine
	die       int32 // dies index, for a subroutine frame
	node      int32 // node index once created, or -1
	callFile  int32
	callLine  uint32
	callCol   uint32
}

// rawSpan is a subroutine's (or, in cuRaw, a unit's) address range before
// flattening; order is the entry's position in a depth-first walk.
type rawSpan struct {
	lo, hi uint64
	node   int32
	order  int32
}

// walk reads every compile unit of .debug_info.
func (b *builder) walk() error {
	c := &cursor{data: b.debugInfo, bo: b.bo, sec: ".debug_info"}
	for c.off < len(c.data) {
		h, err := parseUnitHeader(c)
		if err != nil {
			return err
		}
		if h.version == 0 {
			continue // zero-length padding
		}
		switch h.unitType {
		case utCompile, utPartial, utSkeleton:
			if err := b.walkUnit(&h); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkUnit indexes one unit: its address ranges, its line table, and the
// subroutine entries in its tree.
func (b *builder) walkUnit(h *unitHeader) error {
	t, err := b.parseAbbrevs(h.abbrevOff)
	if err != nil {
		return err
	}
	c := &cursor{data: b.debugInfo[:h.end], off: int(h.dieOff), bo: b.bo, sec: ".debug_info"}
	var e entry
	cu, err := readEntry(c, h, t, &e)
	if err != nil || cu == nil {
		return err
	}
	switch cu.tag {
	case tagCompileUnit, tagPartialUnit, tagSkeletonUnit:
	default:
		return nil
	}
	u := unitInfo{version: h.version, addrSize: h.addrSize, dwarf64: h.dwarf64, dieOff: h.dieOff,
		addrBase: cu.addrBase, hasAddrs: cu.hasAddrBase}
	if u.base, u.hasBase = b.resolveAddr(cu.lowPC, &u); !u.hasBase {
		u.base, u.hasBase = b.resolveAddr(cu.entryPC, &u)
	}
	strOffBase, hasStrOff := cu.strOffBase, cu.hasStrOffB
	rnglistsBase, hasRnglistsBase := cu.rnglistsBase, cu.hasRnglistsBase
	compDir := b.str(b.resolveStr(cu.compDir, &u, strOffBase, hasStrOff))

	unitIdx := int32(len(b.s.units))
	un := unit{table: -1}
	var files []int32
	if cu.hasStmtList {
		ti, err := b.lineTable(cu.stmtList, lineUnit{compDir: compDir, strOffBase: strOffBase, dwarf64: h.dwarf64})
		if err != nil {
			return err
		}
		un.table = ti
		files = b.tables[ti].files
	}
	rs, err := b.entryRanges(cu, &u, rnglistsBase, hasRnglistsBase)
	if err != nil {
		return err
	}
	cuRanges := len(rs)
	for _, r := range rs {
		b.cuRaw = append(b.cuRaw, rawSpan{lo: r[0], hi: r[1], node: unitIdx})
	}

	b.unitRaw = b.unitRaw[:0]
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
			stack = stack[:len(stack)-1]
			continue
		}
		top := stack[len(stack)-1]
		switch {
		case top.skip:
			if e.children {
				stack = append(stack, frame{skip: true})
			}
		case e.tag == tagSubprogram || e.tag == tagInlinedSubroutine:
			fr, err := b.subroutine(&e, stack, &u, files, strOffBase, hasStrOff, rnglistsBase, hasRnglistsBase)
			if err != nil {
				return err
			}
			if e.children {
				stack = append(stack, fr)
			}
		case !e.children:
		case e.tag == tagNamespace || e.tag == tagClassType || e.tag == tagStructType ||
			e.tag == tagUnionType || e.tag == tagInterfaceType || e.tag == tagModule:
			sc := b.newScope(top.scope, e.tag, b.resolveStr(e.name, &u, strOffBase, hasStrOff))
			stack = append(stack, frame{scope: sc, sub: top.sub, parentSub: -1, node: -1})
		case e.tag == tagFormalParameter || e.tag == tagVariable || e.tag == tagEnumerationType ||
			e.tag == tagArrayType || e.tag == tagSubroutineType || e.tag == tagCallSite || e.tag == tagGNUCallSite:
			// Nothing below these has code: jump over the children.
			if e.sibling >= uint64(c.off) && e.sibling <= h.end {
				c.off = int(e.sibling)
			} else {
				stack = append(stack, frame{skip: true})
			}
		default: // lexical blocks and the like: transparent
			stack = append(stack, frame{scope: top.scope, sub: top.sub, parentSub: -1, node: -1})
		}
	}

	lo := int32(len(b.spans))
	b.spans = flattenSpans(b.spans, b.unitRaw)
	b.unitSpan = append(b.unitSpan, [2]int32{lo, int32(len(b.spans))})
	if cuRanges == 0 {
		// No DW_AT_low_pc/high_pc or DW_AT_ranges on the unit: llvm-
		// symbolizer finds nothing in it; use its functions' ranges.
		for _, sp := range b.spans[lo:] {
			b.cuRaw = append(b.cuRaw, rawSpan{lo: sp.lo, hi: sp.hi, node: unitIdx})
		}
	}
	b.s.units = append(b.s.units, un)
	return nil
}

// subroutine records a DW_TAG_subprogram or DW_TAG_inlined_subroutine
// entry and its address ranges, and returns its frame.
func (b *builder) subroutine(e *entry, stack []frame, u *unitInfo, files []int32, strOffBase uint64, hasStrOff bool, rnglistsBase uint64, hasRnglistsBase bool) (frame, error) {
	top := &stack[len(stack)-1]
	dieIdx := int32(len(b.dies))
	b.dies = append(b.dies, dieInfo{
		off:         e.off,
		name:        b.resolveStr(e.name, u, strOffBase, hasStrOff),
		linkage:     b.resolveStr(e.linkage, u, strOffBase, hasStrOff),
		scope:       top.scope,
		declLine:    uint32(e.declLine),
		hasDeclLine: e.hasDeclLine,
		external:    e.external,
		origin:      e.origin,
		spec:        e.spec,
	})
	fr := frame{scope: top.scope, sub: len(stack), parentSub: top.sub, die: dieIdx, node: -1,
		inlined: e.tag == tagInlinedSubroutine, callFile: -1, callLine: uint32(e.callLine), callCol: uint32(e.callCol)}
	if e.hasCallFile && e.callFile < uint64(len(files)) {
		fr.callFile = files[e.callFile]
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
		b.unitRaw = append(b.unitRaw, rawSpan{lo: r[0], hi: r[1], node: fr.node, order: dieIdx})
	}
	return fr, nil
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

func (b *builder) newScope(parent int32, tag uint64, name strRef) int32 {
	s := scope{parent: parent, name: b.str(name)}
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
