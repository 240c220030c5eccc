package jitsym

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/safename"
)

// A Sup is a supplementary object file: the DWARF entries and strings
// that dwz moved out of several binaries' debug information into one
// file they share (GNU's "alternate debug file", named by a
// .gnu_debugaltlink section, or DWARF 5's supplementary file, named by
// .debug_sup). The binaries' entries refer to its entries with
// DW_FORM_GNU_ref_alt or DW_FORM_ref_sup4/8 and to its strings with
// DW_FORM_GNU_strp_alt or DW_FORM_strp_sup: an inlined function's
// abstract instance, with its name and declaration line, usually lives
// there.
//
// llvm-symbolizer does not read these files (it names such functions
// "??"); addr2line and gdb do, and so does an index given one (see
// [Links]): the frames are those of the binary before dwz.
//
// A Sup holds the file's .debug_info, .debug_abbrev and string sections
// and may be shared by the indexes of any number of binaries, built at
// the same time.
type Sup struct {
	name                       string
	bo                         binary.ByteOrder
	info, abbrev, str, lineStr []byte
	units                      []unitHeader // ascending
	abbrevs                    *abbrevCache
}

// NewSup reads the supplementary file f, which link (read from a
// binary's debug information) names: f must have the ID link gives (see
// [elfrel.File.SupID]). The Sup keeps no reference to f.
func NewSup(f *elfrel.File, link elfrel.SupLink) (*Sup, error) {
	id, err := f.SupID()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(id, link.ID) {
		return nil, fmt.Errorf("%s: not the supplementary file the link names: its ID is %x, the link's %x", safename.String(f.Name), id, link.ID)
	}
	l, err := f.DebugLoader()
	if err != nil {
		return nil, err
	}
	s := &Sup{name: f.Name, bo: f.ByteOrder}
	for _, sec := range []struct {
		dst  *[]byte
		name string
	}{
		{&s.info, ".debug_info"},
		{&s.abbrev, ".debug_abbrev"},
		{&s.str, ".debug_str"},
		{&s.lineStr, ".debug_line_str"},
	} {
		if *sec.dst, err = l.Section(sec.name); err != nil {
			return nil, err
		}
	}
	if uint64(len(s.info)) > math.MaxUint32 {
		return nil, &elfrel.UnsupportedError{File: f.Name, Section: ".debug_info", Msg: "section of 4 GiB or more"}
	}
	s.abbrevs = &abbrevCache{tables: make(map[uint64]*abbrevTable), budget: 2*int64(len(s.abbrev)) + 4096}
	c := &cursor{data: s.info, bo: s.bo, sec: ".debug_info"}
	for c.off < len(c.data) {
		h, err := parseUnitHeader(c)
		if err != nil {
			break // the entries after it cannot be found
		}
		if h.version != 0 {
			s.units = append(s.units, h)
		}
	}
	return s, nil
}

// Name returns the name of the file s was read from.
func (s *Sup) Name() string { return s.name }

// entryAt decodes the entry at off in s's .debug_info into e.
func (s *Sup) entryAt(off uint64, e *entry) error {
	i, _ := slices.BinarySearchFunc(s.units, off, func(h unitHeader, x uint64) int {
		return cmp.Compare(h.end, x+1) // the first unit ending after off
	})
	if i == len(s.units) || off < s.units[i].dieOff {
		return &decodeError{sec: ".debug_info", off: int64(off), msg: "reference to no entry"}
	}
	h := &s.units[i]
	t, err := parseAbbrevs(s.abbrevs, s.abbrev, s.bo, h.abbrevOff)
	if err != nil {
		return err
	}
	c := &cursor{data: s.info[:h.end], off: int(off), bo: s.bo, sec: ".debug_info"}
	en, err := readEntry(c, h, t, e)
	if err == nil && en == nil {
		err = &decodeError{sec: ".debug_info", off: int64(off), msg: "reference to a null entry"}
	}
	return err
}

// supRef marks a reference (entry.origin, entry.spec, dieSummary.origin
// and spec, and the offsets find visits) as one to an entry of the
// supplementary file, at the offset in its .debug_info that the other
// bits give.
const supRef = 1 << 63

// isSupRef reports whether form refers to an entry of the
// supplementary file.
func isSupRef(form uint64) bool {
	return form == formGNURefAlt || form == formRefSup4 || form == formRefSup8
}

// supSummary returns the summary of the subroutine entry of the
// supplementary file at ref (marked supRef), decoding it the first time.
// An entry that cannot be read, or is not a subroutine's, has an empty
// summary: the frames that refer to it go without its name, as they
// would without the file, and the first such problem is said once
// (supWarning).
func (b *builder) supSummary(ref uint64) *dieSummary {
	if d, ok := b.supSums[ref]; ok {
		return d
	}
	d := &dieSummary{}
	if b.supSums == nil {
		b.supSums = make(map[uint64]*dieSummary)
	}
	b.supSums[ref] = d
	var e entry
	err := b.sup.entryAt(ref&^supRef, &e)
	if err == nil && e.tag != tagSubprogram && e.tag != tagInlinedSubroutine {
		err = &decodeError{sec: ".debug_info", off: int64(ref &^ supRef), msg: fmt.Sprintf("reference to an entry of tag %#x, not a subroutine's", e.tag)}
	}
	if err != nil {
		if b.supErr == nil {
			b.supErr = wrapDecode(b.sup.name, err)
		}
		return d
	}
	*d = dieSummary{link: supStr(e.linkage), name: supStr(e.name), origin: inSup(e.origin), spec: inSup(e.spec),
		declLine: uint32(e.declLine), hasDecl: e.hasDeclLine, external: e.external}
	return d
}

// supStr turns a string reference read from an entry of the
// supplementary file into one to the same string in that file's
// sections. Indexed strings (DW_FORM_strx), which dwz does not write,
// are not read.
func supStr(r strRef) strRef {
	switch r.kind() {
	case strInfo:
		return mkStrRef(strSupInfo, r.off())
	case strStr:
		return mkStrRef(strSupStr, r.off())
	case strLineStr:
		return mkStrRef(strSupLineStr, r.off())
	}
	return 0
}

// inSup turns a reference read from an entry of the supplementary file
// into one marked supRef; a reference to another supplementary file
// (which that file cannot have) is none.
func inSup(ref uint64) uint64 {
	if ref == 0 || ref&supRef != 0 {
		return 0
	}
	return ref | supRef
}

// supWarning returns what to say when the supplementary file could not
// give some names, or "".
func (b *builder) supWarning() string {
	if b.supErr == nil {
		return ""
	}
	return fmt.Sprintf("%s: some entries of its supplementary file cannot be read: the functions they describe go unnamed (first: %v)",
		safename.String(b.file), b.supErr)
}
