package jitsym

import (
	"math"
	"slices"
)

// DWARF constants used by the line table reader (DWARF 5, section 7.22).
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lnctPath            = 1
	lnctDirectoryIndex  = 2
	formBlock           = 0x09
	formBlock1          = 0x0a
	formData1           = 0x0b
	formData2           = 0x05
	formData4           = 0x06
	formData8           = 0x07
	formData16          = 0x1e
	formString          = 0x08
	formStrp            = 0x0e
	formLineStrp        = 0x1f
	formUdata           = 0x0f
	formSdata           = 0x0d
	formStrx            = 0x1a
	formStrx1           = 0x25
	formStrx2           = 0x26
	formStrx3           = 0x27
	formStrx4           = 0x28
	maxEntryFormatCount = 64 // far more than any producer uses
)

// A lineTable is one parsed line number program: the file names its rows
// refer to and the sequences of rows it defines.
type lineTable struct {
	files        []int32 // Symbolizer.files index per file number; -1 if unusable
	seqLo, seqHi int32   // its sequences are Symbolizer.seqs[seqLo:seqHi], sorted by end
}

// A sequence is a run of rows covering [lo, the matching seqHi): lo is the
// address of its first row, the end that of its DW_LNE_end_sequence row.
// Its rows, the ones before the end row, are encoded in
// Symbolizer.lines[start:end] (see appendRows), with addresses as offsets
// from lo: a sequence whose rows would lie 4 GiB or more past its start
// is split there into several (no compiler makes one).
type sequence struct {
	lo         uint64
	start, end uint32
}

// sortSeqsByEnd sorts one table's sequences seqs, and their ends hi, by
// end address, and in program order for equal ends: they come in program
// order, and the sort is stable.
func sortSeqsByEnd(hi []uint64, seqs []sequence) {
	if slices.IsSorted(hi) {
		return
	}
	type endSeq struct {
		hi  uint64
		seq sequence
	}
	es := make([]endSeq, len(hi))
	for i := range hi {
		es[i] = endSeq{hi[i], seqs[i]}
	}
	radixSort(es, make([]endSeq, len(es)), func(e *endSeq) uint64 { return e.hi })
	for i, e := range es {
		hi[i], seqs[i] = e.hi, e.seq
	}
}

// lineUnit is what the line table reader needs to know about the
// compilation unit that refers to it.
type lineUnit struct {
	compDir    string
	strOffBase uint64 // DW_AT_str_offsets_base, for DW_FORM_strx names
	dwarf64    bool   // format of the unit, for DW_FORM_strx names
}

// fileEntry is a file name entry before its path is resolved. An entry
// without a directory index uses directory 0.
type fileEntry struct {
	name string
	dir  uint64
}

// lineHeader is what a line table's header says, as parseLineHeader
// reads it (DWARF 5, section 6.2.4).
type lineHeader struct {
	version    int
	end        int // where the table ends in .debug_line
	progStart  int // where its line number program starts
	minInst    uint64
	lineBase   int8
	lineRange  uint8
	opcodeBase uint8
	opLens     [256]uint8 // operand counts of the standard opcodes
	dirs       []string
	files      []fileEntry
}

// parseLineTable parses the line number program at off in .debug_line,
// appends it, its sequences and rows to the Symbolizer and returns its
// index in Symbolizer.tables: the header (parseLineHeader), its file
// names (lineFiles), then the program (runLineProgram).
func (b *builder) parseLineTable(off uint64, u lineUnit) (int32, error) {
	c := &cursor{data: b.debugLine, bo: b.bo, sec: ".debug_line"}
	h, err := b.parseLineHeader(c, off, u)
	if err != nil {
		return 0, err
	}
	s := b.s
	tbl := lineTable{seqLo: int32(len(s.seqs))}
	tableIdx := int32(len(s.tables))
	if h.version < 5 {
		tbl.files = append(tbl.files, -1) // file numbers start at 1
	}
	for _, fe := range h.files {
		tbl.files = append(tbl.files, b.lineFile(c, h, fe, u))
	}
	c.off = h.progStart
	b.runLineProgram(c, h, u, &tbl)
	if c.err != nil {
		return 0, c.err
	}
	tbl.seqHi = int32(len(s.seqs))
	sortSeqsByEnd(s.seqHi[tbl.seqLo:], s.seqs[tbl.seqLo:])
	s.tables = append(s.tables, tbl)
	return tableIdx, nil
}

// parseLineHeader reads the header of the line table at off, leaving c
// limited to the table.
func (b *builder) parseLineHeader(c *cursor, off uint64, u lineUnit) (*lineHeader, error) {
	if off > uint64(len(c.data)) {
		return nil, &decodeError{sec: c.sec, off: int64(off), msg: "line table offset is past the end of the section"}
	}
	c.off = int(off)
	length, dwarf64 := c.unitLength()
	if c.err != nil {
		return nil, c.err
	}
	if length > uint64(len(c.data)-c.off) {
		c.fail("line table length %#x exceeds the section", length)
		return nil, c.err
	}
	h := &lineHeader{end: c.off + int(length)}
	c.data = c.data[:h.end] // the program must not read past its unit
	// Line tables that overlap (units pointing into the middle of one)
	// could otherwise make the work grow with the square of the section.
	if b.lineBudget -= int64(length); b.lineBudget < 0 {
		c.fail("line tables overlap (decoded more than twice the section)")
		return nil, c.err
	}
	h.version = int(c.u16())
	if c.err == nil && (h.version < 2 || h.version > 5) {
		c.fail("unsupported line table version %d", h.version)
	}
	if h.version >= 5 {
		c.u8() // address_size: DW_LNE_set_address carries its own size
		if seg := c.u8(); seg != 0 {
			c.fail("segment selector size %d is not supported", seg)
		}
	}
	headerLen := c.offsetSized(dwarf64)
	if c.err == nil && headerLen > uint64(h.end-c.off) {
		c.fail("header length %#x exceeds the line table", headerLen)
	}
	if c.err != nil {
		return nil, c.err
	}
	h.progStart = c.off + int(headerLen)
	h.minInst = uint64(c.u8())
	if h.version >= 4 {
		c.u8() // maximum_operations_per_instruction: VLIW only, ignored as in LLVM 14
	}
	c.u8() // default_is_stmt
	h.lineBase = int8(c.u8())
	h.lineRange = c.u8()
	h.opcodeBase = c.u8()
	if c.err == nil && h.opcodeBase == 0 {
		c.fail("opcode_base is 0")
	}
	for i := 1; i < int(h.opcodeBase) && c.err == nil; i++ {
		h.opLens[i] = c.u8()
	}
	if h.version >= 5 {
		h.dirs, h.files = b.v5Entries(c, dwarf64, u)
	} else {
		h.dirs, h.files = v4Entries(c)
	}
	if c.err != nil {
		return nil, c.err
	}
	return h, nil
}

// lineFile resolves a file entry of the table to a path and returns its
// Symbolizer.files index, or -1 (with c failed) past the path budget.
func (b *builder) lineFile(c *cursor, h *lineHeader, fe fileEntry, u lineUnit) int32 {
	var dirPath string
	var dirOK bool
	if h.version >= 5 {
		dirOK = fe.dir < uint64(len(h.dirs))
		if dirOK {
			dirPath = h.dirs[fe.dir]
		}
	} else if fe.dir > 0 && fe.dir <= uint64(len(h.dirs)) {
		dirPath, dirOK = h.dirs[fe.dir-1], true
	}
	p := filePath(h.version, fe.name, fe.dir, dirPath, dirOK, u.compDir)
	if b.pathBudget -= int64(len(p)); b.pathBudget < 0 {
		c.fail("file names are longer than the debug sections can describe")
		return -1
	}
	return b.internFile(p)
}

// lineState is the line number program's state machine registers that
// the index keeps.
type lineState struct {
	addr uint64
	file uint16
	line uint32
	col  uint16
}

// maxPartRows is the most rows of a sequence buffered before they are
// encoded as a part of it: a sequence of millions of one-byte rows costs
// its encoding, not a buffer of rows besides.
const maxPartRows = 1 << 14

// bytesPerRow is the fewest bytes of .debug_line each row of an object's
// line tables may take on average. A row needs at least one opcode byte,
// and real programs also set columns and files, toggle is_stmt, and set
// the address and end each sequence: LLVM's and GCC's take 3 bytes or
// more a row. A program of one-byte rows (16 MB of them took 365 MB to
// index) is refused at half its rows, with an error naming the file.
const bytesPerRow = 2

// runLineProgram runs the line number program at c (DWARF 5, section
// 6.2.5), appending the rows of each sequence to the Symbolizer and the
// files DW_LNE_define_file adds to tbl.
func (b *builder) runLineProgram(c *cursor, h *lineHeader, u lineUnit, tbl *lineTable) {
	s := b.s
	reset := lineState{file: 1, line: 1}
	st := reset
	started := false
	var seqLow uint64 // where the current sequence, or its current part, starts
	rows := b.seqRows[:0]
	endPart := func(hi uint64) {
		start := len(s.lines)
		// Grown by doubling, not append's quarter steps: a table of
		// millions of rows would otherwise allocate several times what
		// it keeps, in copies.
		if need := maxRowBytes*len(rows) + 16; cap(s.lines)-len(s.lines) < need {
			s.lines = slices.Grow(s.lines, max(need, cap(s.lines)))
		}
		s.lines = appendRows(s.lines, rows)
		if len(s.lines) > math.MaxUint32 {
			c.fail("line tables too large to index")
			return
		}
		s.seqs = append(s.seqs, sequence{lo: seqLow, start: uint32(start), end: uint32(len(s.lines))})
		s.seqHi = append(s.seqHi, hi)
	}
	emit := func(endSeq bool) {
		if !started {
			started, seqLow, rows = true, st.addr, rows[:0]
		}
		if endSeq {
			if seqLow < st.addr { // an empty sequence is never looked up
				endPart(st.addr)
			}
			started = false
			return
		}
		if n := len(rows); n > 0 && st.addr < seqLow+uint64(rows[n-1].off) || st.addr < seqLow {
			return // the address went back: no lookup could find the row
		}
		if st.addr-seqLow > math.MaxUint32 || len(rows) >= maxPartRows {
			// A new part (see sequence): offsets stay 32-bit, and a long
			// sequence is encoded a part at a time instead of buffered.
			endPart(st.addr)
			seqLow, rows = st.addr, rows[:0]
		}
		r := row{off: uint32(st.addr - seqLow), line: st.line, file: st.file, col: st.col}
		if n := len(rows); n > 0 && rows[n-1].off == r.off {
			rows[n-1] = r
		} else if b.rowBudget--; b.rowBudget < 0 {
			c.fail("more than one line table row per %d bytes of .debug_line: not a compiler's line tables", bytesPerRow)
		} else {
			rows = append(rows, r)
		}
	}
	special := func(adj uint64) bool {
		if h.lineRange == 0 {
			c.fail("special opcode with line_range 0")
			return false
		}
		st.addr += adj / uint64(h.lineRange) * h.minInst
		return true
	}
	for c.off < h.end && c.err == nil {
		op := c.u8()
		switch {
		case op >= h.opcodeBase:
			adj := uint64(op - h.opcodeBase)
			if !special(adj) {
				break
			}
			st.line = uint32(int64(st.line) + int64(h.lineBase) + int64(adj%uint64(h.lineRange)))
			emit(false)
		case op == 0:
			n := c.uleb()
			if c.err != nil || n == 0 || n > uint64(h.end-c.off) {
				c.fail("extended opcode length %d does not fit", n)
				break
			}
			next := c.off + int(n)
			switch c.u8() {
			case lneEndSequence:
				emit(true)
				st = reset
			case lneSetAddress:
				if size := int(n - 1); size == 1 || size == 2 || size == 4 || size == 8 {
					st.addr = c.uintN(size)
				}
			case lneDefineFile:
				fe := fileEntry{name: c.cstr(), dir: c.uleb()}
				c.uleb() // modification time
				c.uleb() // length
				if c.err == nil {
					tbl.files = append(tbl.files, b.lineFile(c, h, fe, u))
				}
			}
			c.off = next // skip what the opcode did not read
		case op == lnsCopy:
			emit(false)
		case op == lnsAdvancePC:
			st.addr += c.uleb() * h.minInst
		case op == lnsAdvanceLine:
			st.line = uint32(int64(st.line) + c.sleb())
		case op == lnsSetFile:
			st.file = uint16(c.uleb())
		case op == lnsSetColumn:
			st.col = uint16(c.uleb())
		case op == lnsConstAddPC:
			special(uint64(255 - h.opcodeBase))
		case op == lnsFixedAdvancePC:
			st.addr += uint64(c.u16())
		default: // other standard opcodes: skip their ULEB128 operands
			for i := 0; i < int(h.opLens[op]); i++ {
				c.uleb()
			}
		}
	}
	// Rows after the last end_sequence belong to no sequence.
	b.seqRows = rows[:0]
}

// v4Entries reads the include_directories and file_names of a version 2
// to 4 line table header.
func v4Entries(c *cursor) (dirs []string, files []fileEntry) {
	for c.err == nil {
		d := c.cstr()
		if d == "" {
			break
		}
		dirs = append(dirs, d)
	}
	for c.err == nil {
		name := c.cstr()
		if name == "" {
			break
		}
		fe := fileEntry{name: name, dir: c.uleb()}
		c.uleb() // modification time
		c.uleb() // length
		files = append(files, fe)
	}
	return dirs, files
}

// v5Entries reads the directory and file name tables of a version 5 line
// table header: each is a list of entry formats, then the entries.
func (b *builder) v5Entries(c *cursor, dwarf64 bool, u lineUnit) (dirs []string, files []fileEntry) {
	for pass := 0; pass < 2 && c.err == nil; pass++ {
		nfmt := int(c.u8())
		if nfmt > maxEntryFormatCount {
			c.fail("%d entry formats", nfmt)
			return nil, nil
		}
		var formats [maxEntryFormatCount][2]uint64 // content type, form
		for i := 0; i < nfmt; i++ {
			formats[i] = [2]uint64{c.uleb(), c.uleb()}
		}
		count := c.uleb()
		// Each entry takes at least one byte per format: bound the count
		// by what is left before allocating for it.
		if c.err == nil && nfmt > 0 && count > uint64(len(c.data)-c.off)/uint64(nfmt) {
			c.fail("%d entries do not fit in the header", count)
		}
		if c.err == nil && nfmt == 0 && count > 0 {
			c.fail("%d entries without formats", count)
		}
		for k := uint64(0); k < count && c.err == nil; k++ {
			var fe fileEntry
			for i := 0; i < nfmt; i++ {
				s, v, isStr := b.entryValue(c, formats[i][1], dwarf64, u)
				switch formats[i][0] {
				case lnctPath:
					if isStr {
						fe.name = s
					}
				case lnctDirectoryIndex:
					if !isStr {
						fe.dir = v
					}
				}
			}
			if pass == 0 {
				dirs = append(dirs, fe.name)
			} else {
				files = append(files, fe)
			}
		}
	}
	return dirs, files
}

// entryValue reads one attribute of a version 5 directory or file entry:
// a string (isStr) or a number.
func (b *builder) entryValue(c *cursor, form uint64, dwarf64 bool, u lineUnit) (s string, v uint64, isStr bool) {
	switch form {
	case formString:
		return c.cstr(), 0, true
	case formLineStrp, formStrp:
		off := c.offsetSized(dwarf64)
		sec, name := b.debugStr, ".debug_str"
		if form == formLineStrp {
			sec, name = b.debugLineStr, ".debug_line_str"
		}
		str, ok := strAt(sec, off)
		if !ok && c.err == nil {
			c.fail("string offset %#x is outside %s (%d bytes)", off, name, len(sec))
		}
		return str, 0, true
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
		var idx uint64
		switch form {
		case formStrx:
			idx = c.uleb()
		case formStrx1:
			idx = uint64(c.u8())
		case formStrx2:
			idx = uint64(c.u16())
		case formStrx3:
			idx = uint64(c.u24())
		default:
			idx = uint64(c.u32())
		}
		return b.strx(c, idx, u.strOffBase, u.dwarf64), 0, true
	case formUdata:
		return "", c.uleb(), false
	case formSdata:
		return "", uint64(c.sleb()), false
	case formData1:
		return "", uint64(c.u8()), false
	case formData2:
		return "", uint64(c.u16()), false
	case formData4:
		return "", uint64(c.u32()), false
	case formData8:
		return "", c.u64(), false
	case formData16:
		c.skip(16)
	case formBlock:
		c.skip(int(min(c.uleb(), uint64(len(c.data)))))
	case formBlock1:
		c.skip(int(c.u8()))
	default:
		c.fail("unsupported form %#x in a file entry", form)
	}
	return "", 0, false
}

// strx returns string number idx of the unit's string offsets table.
func (b *builder) strx(c *cursor, idx, base uint64, dwarf64 bool) string {
	size := uint64(4)
	if dwarf64 {
		size = 8
	}
	so := b.debugStrOffsets
	pos := base + idx*size
	if idx > uint64(len(so))/size || pos > uint64(len(so)) || uint64(len(so))-pos < size {
		c.fail("string index %d is outside .debug_str_offsets", idx)
		return ""
	}
	sc := cursor{data: so, off: int(pos), bo: c.bo}
	off := sc.uintN(int(size))
	str, ok := strAt(b.debugStr, off)
	if !ok {
		c.fail("string offset %#x is outside .debug_str", off)
	}
	return str
}
