package jitsym

// A small decoder for .debug_info entries. Unlike debug/dwarf's Reader it
// allocates nothing per entry: it keeps the few attributes the index needs
// as numbers and string references, and skips the rest by form.

import (
	"encoding/binary"
	"sync"
)

// DWARF tags, attributes and forms used here (DWARF 5, section 7.5).
const (
	tagClassType         = 0x02
	tagLexicalBlock      = 0x0b
	tagCompileUnit       = 0x11
	tagStructType        = 0x13
	tagSubroutineType    = 0x15
	tagUnionType         = 0x17
	tagInlinedSubroutine = 0x1d
	tagArrayType         = 0x01
	tagEnumerationType   = 0x04
	tagFormalParameter   = 0x05
	tagVariable          = 0x34
	tagInterfaceType     = 0x38
	tagNamespace         = 0x39
	tagPartialUnit       = 0x3c
	tagCallSite          = 0x48
	tagSkeletonUnit      = 0x4a
	tagGNUCallSite       = 0x4109
	tagSubprogram        = 0x2e
	tagModule            = 0x1e

	atSibling        = 0x01
	atName           = 0x03
	atStmtList       = 0x10
	atLowPC          = 0x11
	atHighPC         = 0x12
	atCompDir        = 0x1b
	atAbstractOrigin = 0x31
	atDeclLine       = 0x3b
	atExternal       = 0x3f
	atSpecification  = 0x47
	atEntryPC        = 0x52
	atRanges         = 0x55
	atCallColumn     = 0x57
	atCallFile       = 0x58
	atCallLine       = 0x59
	atLinkageName    = 0x6e
	atStrOffsetsBase = 0x72
	atAddrBase       = 0x73
	atRnglistsBase   = 0x74
	atMIPSLinkage    = 0x2007

	formAddr         = 0x01
	formBlock2       = 0x03
	formBlock4       = 0x04
	formFlag         = 0x0c
	formRefAddr      = 0x10
	formRef1         = 0x11
	formRef2         = 0x12
	formRef4         = 0x13
	formRef8         = 0x14
	formRefUdata     = 0x15
	formIndirect     = 0x16
	formSecOffset    = 0x17
	formExprloc      = 0x18
	formFlagPresent  = 0x19
	formAddrx        = 0x1b
	formRefSup4      = 0x1c
	formStrpSup      = 0x1d
	formRefSig8      = 0x20
	formImplicit     = 0x21
	formLoclistx     = 0x22
	formRnglistx     = 0x23
	formRefSup8      = 0x24
	formAddrx1       = 0x29
	formAddrx2       = 0x2a
	formAddrx3       = 0x2b
	formAddrx4       = 0x2c
	formGNUAddrIndex = 0x1f01
	formGNUStrIndex  = 0x1f02
	formGNURefAlt    = 0x1f20
	formGNUStrpAlt   = 0x1f21
)

// An abbrev is one abbreviation declaration.
type abbrev struct {
	tag      uint64
	children bool
	attrs    []abbrevAttr
	// skip is true when entries of this abbreviation have no children and
	// a tag the index ignores (parameters, variables, ...): readEntry then
	// only steps over them, by size32x8 bytes when that is not -1 and the
	// unit has 8-byte addresses and 32-bit DWARF offsets.
	skip     bool
	size32x8 int
}

// usedTag reports whether the walker looks at entries with tag.
func usedTag(tag uint64) bool {
	switch tag {
	case tagSubprogram, tagInlinedSubroutine, tagNamespace, tagClassType, tagStructType,
		tagUnionType, tagInterfaceType, tagModule, tagCompileUnit, tagPartialUnit, tagSkeletonUnit:
		return true
	}
	return false
}

// fixedSize32x8 returns the size of a value of form in a unit with 8-byte
// addresses and 32-bit offsets (DWARF 3 or later), or -1 if it varies.
func fixedSize32x8(form uint64) int {
	switch form {
	case formFlagPresent, formImplicit:
		return 0
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4, formStrp, formLineStrp,
		formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt, formRefAddr:
		return 4
	case formAddr, formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	}
	return -1
}

type abbrevAttr struct {
	attr, form uint64
	implicit   int64 // the value, for DW_FORM_implicit_const
}

// abbrevTable maps abbreviation codes to declarations; codes are usually
// 1, 2, 3, ... in order, which the dense slice serves.
type abbrevTable struct {
	dense  []abbrev // dense[code-1]
	sparse map[uint64]*abbrev
}

func (t *abbrevTable) get(code uint64) *abbrev {
	if code-1 < uint64(len(t.dense)) {
		return &t.dense[code-1]
	}
	return t.sparse[code]
}

// abbrevCache holds the abbreviation tables decoded so far, which the
// walkers of one build share (see builder.walk).
type abbrevCache struct {
	mu     sync.Mutex
	tables map[uint64]*abbrevTable // by .debug_abbrev offset
	budget int64                   // bytes parseAbbrevs may still decode
}

// parseAbbrevs returns the abbreviation table at off in .debug_abbrev,
// decoding it the first time. It charges the bytes it reads to the
// cache's budget, so that units pointing into the middle of one large
// table cannot make the total work grow with the square of the section
// size.
func (b *builder) parseAbbrevs(off uint64) (*abbrevTable, error) {
	return parseAbbrevs(b.abbrevs, b.debugAbbrev, b.bo, off)
}

// parseAbbrevs returns the abbreviation table at off in the .debug_abbrev
// section data, decoding it into ac the first time.
func parseAbbrevs(ac *abbrevCache, data []byte, bo binary.ByteOrder, off uint64) (*abbrevTable, error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if t, ok := ac.tables[off]; ok {
		return t, nil
	}
	c := &cursor{data: data, bo: bo, sec: ".debug_abbrev"}
	if off >= uint64(len(c.data)) {
		return nil, &decodeError{sec: c.sec, off: int64(off), msg: "abbreviation table offset is past the end of the section"}
	}
	c.off = int(off)
	t := &abbrevTable{}
	var all []abbrevAttr
	type decl struct {
		code, tag  uint64
		children   bool
		attrLo, hi int
	}
	var decls []decl
	for c.err == nil {
		code := c.uleb()
		if code == 0 {
			break
		}
		d := decl{code: code, tag: c.uleb(), children: c.u8() != 0, attrLo: len(all)}
		for c.err == nil {
			a := abbrevAttr{attr: c.uleb(), form: c.uleb()}
			if a.attr == 0 && a.form == 0 {
				break
			}
			if a.form == formImplicit {
				a.implicit = c.sleb()
			}
			all = append(all, a)
		}
		d.hi = len(all)
		decls = append(decls, d)
	}
	ac.budget -= int64(c.off) - int64(off)
	if c.err != nil {
		return nil, c.err
	}
	if ac.budget < 0 {
		return nil, &decodeError{sec: c.sec, off: int64(off), msg: "abbreviation tables overlap (decoded more than twice the section)"}
	}
	for i, d := range decls {
		a := abbrev{tag: d.tag, children: d.children, attrs: all[d.attrLo:d.hi:d.hi]}
		a.skip = !d.children && !usedTag(d.tag)
		for _, at := range a.attrs {
			n := fixedSize32x8(at.form)
			if n < 0 {
				a.size32x8 = -1
				break
			}
			a.size32x8 += n
		}
		if t.sparse == nil && d.code == uint64(i+1) {
			t.dense = append(t.dense, a)
			continue
		}
		if t.sparse == nil {
			t.sparse = make(map[uint64]*abbrev)
		}
		t.sparse[d.code] = &a
	}
	ac.tables[off] = t
	return t, nil
}

// strRef locates a string without copying it: the top three bits say
// which section (strInfo, ...), the rest is the offset in it. Strings are
// copied only for the names the index keeps. The zero strRef is none.
type strRef uint64

const (
	strNone    = iota
	strInfo    // inline DW_FORM_string in .debug_info
	strStr     // .debug_str
	strLineStr // .debug_line_str
	strIndex   // DW_FORM_strx: off is the index, resolved per unit

	// The supplementary file's (see Sup).
	strSupStr     // its .debug_str: DW_FORM_GNU_strp_alt, DW_FORM_strp_sup
	strSupInfo    // DW_FORM_string in its .debug_info
	strSupLineStr // its .debug_line_str
)

const strKindShift = 61

func mkStrRef(kind uint8, off uint64) strRef {
	if off >= 1<<strKindShift {
		return 0 // no section is that large
	}
	return strRef(uint64(kind)<<strKindShift | off)
}

func (r strRef) kind() uint8 { return uint8(r >> strKindShift) }
func (r strRef) off() uint64 { return uint64(r) & (1<<strKindShift - 1) }

// An entry holds the attributes of one DIE that the index uses.
type entry struct {
	off      uint64
	tag      uint64
	children bool

	name, linkage, compDir strRef
	sibling                uint64 // absolute .debug_info offset, or 0
	origin, spec           uint64 // absolute .debug_info offsets, or 0
	declLine               uint64
	hasDeclLine            bool
	external               bool
	callFile, callLine     uint64
	callCol                uint64
	hasCallFile            bool

	lowPC, highPC, entryPC  addrVal
	highIsOffset            bool
	ranges                  uint64
	rangesKind              uint8 // 0 none, 1 section offset, 2 DW_FORM_rnglistx index
	stmtList                uint64
	hasStmtList             bool
	addrBase, strOffBase    uint64
	rnglistsBase            uint64
	hasAddrBase, hasStrOffB bool
	hasRnglistsBase         bool
}

// addrVal is an address attribute: a value, or a .debug_addr index
// resolved once the unit's DW_AT_addr_base is known.
type addrVal struct {
	v       uint64
	isIndex bool
	ok      bool
}

// unitHeader describes one unit of .debug_info.
type unitHeader struct {
	off, end  uint64 // the unit spans [off, end) of .debug_info
	dieOff    uint64 // offset of its first DIE
	version   int
	unitType  uint8
	addrSize  int
	dwarf64   bool
	abbrevOff uint64
	dwoID     uint64 // a DWARF 5 skeleton or split unit's unit ID, if hasDWOID
	hasDWOID  bool
}

// DWARF 5 unit types.
const (
	utCompile      = 1
	utPartial      = 3
	utSkeleton     = 4
	utSplitCompile = 5
)

// parseUnitHeader decodes the unit header at c.off.
func parseUnitHeader(c *cursor) (unitHeader, error) {
	h := unitHeader{off: uint64(c.off), unitType: utCompile}
	n, dwarf64 := c.unitLength()
	if c.err != nil {
		return h, c.err
	}
	if n > uint64(len(c.data)-c.off) {
		c.fail("unit length %#x exceeds the section", n)
		return h, c.err
	}
	h.end, h.dwarf64 = uint64(c.off)+n, dwarf64
	sub := &cursor{data: c.data[:h.end], off: c.off, bo: c.bo, sec: c.sec}
	h.version = int(sub.u16())
	if sub.err == nil && (h.version < 2 || h.version > 5) {
		sub.fail("unsupported DWARF version %d", h.version)
	}
	if h.version >= 5 {
		h.unitType = sub.u8()
		h.addrSize = int(sub.u8())
		h.abbrevOff = sub.offsetSized(dwarf64)
		switch h.unitType {
		case utSkeleton, utSplitCompile:
			h.dwoID, h.hasDWOID = sub.u64(), true
		case 2, 6: // type, split_type: signature and type offset
			sub.u64()
			sub.offsetSized(dwarf64)
		}
	} else {
		h.abbrevOff = sub.offsetSized(dwarf64)
		h.addrSize = int(sub.u8())
	}
	if sub.err == nil && h.addrSize != 2 && h.addrSize != 4 && h.addrSize != 8 {
		sub.fail("unsupported address size %d", h.addrSize)
	}
	h.dieOff = uint64(sub.off)
	c.off = int(h.end)
	return h, sub.err
}

// readEntry decodes the DIE at c.off of unit h, using abbreviations t.
// It returns nil at a null entry (the end of a list of children).
func readEntry(c *cursor, h *unitHeader, t *abbrevTable, e *entry) (*entry, error) {
	off := uint64(c.off)
	code := c.uleb()
	if c.err != nil {
		return nil, c.err
	}
	if code == 0 {
		return nil, nil
	}
	a := t.get(code)
	if a == nil {
		c.off = int(off)
		c.fail("unknown abbreviation code %d", code)
		return nil, c.err
	}
	*e = entry{off: off, tag: a.tag, children: a.children}
	if a.skip && a.size32x8 >= 0 && h.addrSize == 8 && !h.dwarf64 && h.version >= 3 {
		c.skip(a.size32x8)
		return e, c.err
	}
	for i := range a.attrs {
		attr := &a.attrs[i]
		form := attr.form
		if form == formIndirect {
			form = c.uleb()
			if form == formIndirect || form == formImplicit {
				c.fail("invalid indirect form %#x", form)
			}
		}
		v, s := readForm(c, h, form, attr.implicit)
		if c.err != nil {
			return nil, c.err
		}
		if !a.skip {
			setAttr(e, h, attr.attr, form, v, s)
		}
	}
	return e, nil
}

// readForm reads one attribute value: v is its number (a constant, offset,
// address, index or absolute reference) and s its string reference.
func readForm(c *cursor, h *unitHeader, form uint64, implicit int64) (v uint64, s strRef) {
	switch form {
	case formAddr:
		return c.uintN(h.addrSize), s
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		v = uint64(c.u8())
	case formData2, formRef2, formStrx2, formAddrx2:
		v = uint64(c.u16())
	case formStrx3, formAddrx3:
		v = uint64(c.u24())
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		v = uint64(c.u32())
	case formData8, formRef8, formRefSig8, formRefSup8:
		v = c.u64()
	case formData16:
		c.skip(16)
	case formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		v = c.uleb()
	case formSdata:
		v = uint64(c.sleb())
	case formImplicit:
		v = uint64(implicit)
	case formFlagPresent:
		v = 1
	case formString:
		s = mkStrRef(strInfo, uint64(c.off))
		c.cstr()
		return 0, s
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		v = c.offsetSized(h.dwarf64)
	case formRefAddr:
		if h.version == 2 {
			v = c.uintN(h.addrSize)
		} else {
			v = c.offsetSized(h.dwarf64)
		}
	case formBlock1:
		c.skip(int(c.u8()))
	case formBlock2:
		c.skip(int(c.u16()))
	case formBlock4:
		c.skip(int(min(uint64(c.u32()), uint64(len(c.data)))))
	case formBlock, formExprloc:
		c.skip(int(min(c.uleb(), uint64(len(c.data)))))
	default:
		c.fail("unknown form %#x", form)
	}
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		v += h.off // unit-relative reference
	case formStrp:
		s = mkStrRef(strStr, v)
	case formLineStrp:
		s = mkStrRef(strLineStr, v)
	case formGNUStrpAlt, formStrpSup:
		s = mkStrRef(strSupStr, v)
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		s = mkStrRef(strIndex, v)
	}
	return v, s
}

// isConst reports whether form is a constant LLVM reads as unsigned
// (DWARFFormValue::getAsUnsignedConstant: not DW_FORM_sdata).
func isConst(form uint64) bool {
	switch form {
	case formData1, formData2, formData4, formData8, formUdata, formImplicit:
		return true
	}
	return false
}

func isRef(form uint64) bool {
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata, formRefAddr:
		return true
	}
	return false
}

// refOf returns the reference to an entry that an attribute of form
// with value v (from readForm) makes: an absolute .debug_info offset, or
// one in the supplementary file's marked supRef; 0 if it is none.
func refOf(form, v uint64) uint64 {
	switch {
	case isRef(form):
		return v
	case isSupRef(form) && v < supRef:
		return v | supRef
	}
	return 0
}

func addrOf(form, v uint64) addrVal {
	switch form {
	case formAddr:
		return addrVal{v: v, ok: true}
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4, formGNUAddrIndex:
		return addrVal{v: v, isIndex: true, ok: true}
	}
	return addrVal{}
}

// setAttr records attribute attr of e if the index uses it. Like LLVM's
// DWARFDie::find, the first occurrence of an attribute wins.
func setAttr(e *entry, h *unitHeader, attr, form, v uint64, s strRef) {
	switch attr {
	case atName:
		if e.name == 0 {
			e.name = s
		}
	case atLinkageName, atMIPSLinkage:
		if e.linkage == 0 {
			e.linkage = s
		}
	case atCompDir:
		e.compDir = s
	case atSibling:
		if isRef(form) {
			e.sibling = v
		}
	case atAbstractOrigin:
		if e.origin == 0 {
			e.origin = refOf(form, v)
		}
	case atSpecification:
		if e.spec == 0 {
			e.spec = refOf(form, v)
		}
	case atExternal:
		e.external = (form == formFlag || form == formFlagPresent) && v != 0
	case atDeclLine:
		if isConst(form) && !e.hasDeclLine {
			e.declLine, e.hasDeclLine = v, true
		}
	case atCallFile:
		if isConst(form) {
			e.callFile, e.hasCallFile = v, true
		}
	case atCallLine:
		if isConst(form) {
			e.callLine = v
		}
	case atCallColumn:
		if isConst(form) {
			e.callCol = v
		}
	case atLowPC:
		e.lowPC = addrOf(form, v)
	case atEntryPC:
		e.entryPC = addrOf(form, v)
	case atHighPC:
		if e.highPC = addrOf(form, v); !e.highPC.ok && isConst(form) {
			e.highPC, e.highIsOffset = addrVal{v: v, ok: true}, true
		}
	case atRanges:
		switch {
		case form == formRnglistx:
			e.ranges, e.rangesKind = v, 2
		case form == formSecOffset || (h.version < 4 && (form == formData4 || form == formData8)):
			e.ranges, e.rangesKind = v, 1
		}
	case atStmtList:
		if form == formSecOffset || form == formData4 || form == formData8 {
			e.stmtList, e.hasStmtList = v, true
		}
	case atAddrBase:
		e.addrBase, e.hasAddrBase = v, true
	case atStrOffsetsBase:
		e.strOffBase, e.hasStrOffB = v, true
	case atRnglistsBase:
		e.rnglistsBase, e.hasRnglistsBase = v, true
	}
}
