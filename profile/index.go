package profile

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/jitpprof/pprof/internal/safename"
)

// An ObjectSet is the JIT objects of one run, with an index of all their
// executable sections.
//
// The index is built once: every section of every object, sorted by
// start address, made disjoint. Lookup is then a binary search, so
// matching L locations against S sections costs O((S + L) log S).
//
// Overlapping sections (two objects, or two sections of one object,
// claiming the same bytes) cannot both be right. The rule is: sections
// are ordered by start address, then by object path, then by section
// name; a section keeps only the bytes that no section before it in that
// order claims, and a section left with no bytes is dropped. In words:
// the section that starts lower wins, and of two starting at the same
// address, the one from the object whose path sorts first. Each
// overlapping pair of objects is reported once.
type ObjectSet struct {
	// Dirs are the directories the objects were read from, if known.
	Dirs []string
	// Objects are the objects, sorted by Path.
	Objects []*Object

	index  []indexEntry // sorted by start, disjoint
	replay replay       // see CodeAt
}

// indexEntry is one disjoint address range of the index: 24 bytes (a
// perf map can have millions).
type indexEntry struct {
	start, limit uint64
	obj          uint32 // index into ObjectSet.Objects
	sec          uint32 // index into its Sections
}

// objIndex gives the objects and sections index entries refer to.
type objIndex []*Object

func (o objIndex) object(e indexEntry) *Object  { return o[e.obj] }
func (o objIndex) section(e indexEntry) Section { return o[e.obj].Sections[e.sec] }

// NewObjectSet builds an ObjectSet over objs. The returned errors report
// overlapping sections (one *ObjectError per overlapping pair of
// objects); the set is usable regardless.
func NewObjectSet(objs []*Object) (*ObjectSet, []error) {
	objs = slices.Clone(objs)
	slices.SortFunc(objs, func(a, b *Object) int { return cmp.Compare(a.Path, b.Path) })
	s := &ObjectSet{Objects: objs}

	n := 0
	for _, o := range objs {
		n += len(o.Sections)
	}
	all := make([]indexEntry, 0, n)
	for oi, o := range objs {
		for si, sec := range o.Sections {
			if sec.Size == 0 {
				continue
			}
			all = append(all, indexEntry{start: sec.Start, limit: sec.Limit(), obj: uint32(oi), sec: uint32(si)})
		}
	}
	// Kinds rank by what they know: an LLVM dump (DWARF, exact
	// sections) over a jitdump (names, lines) over a perf map (names).
	// Each kind's sections are made disjoint, then get only the
	// addresses no better kind claims.
	var errs []error
	reported := map[[2]*Object]bool{}
	ox := objIndex(objs)
	report := func(winner, loser indexEntry) {
		ws, ls := ox.section(winner), ox.section(loser)
		if ox.object(winner).Kind != ox.object(loser).Kind && ws.Start == ls.Start && ws.Size == ls.Size {
			// The same code in two kinds of file: runtimes that write
			// a jitdump can write a perf map too (V8 with --perf-prof
			// and --perf-basic-prof, PHP's opcache.jit_debug).
			return
		}
		if p := [2]*Object{ox.object(winner), ox.object(loser)}; !reported[p] {
			reported[p] = true
			errs = append(errs, overlapError(ox, winner, loser))
		}
	}
	kinds := Sources()
	slices.SortFunc(kinds, func(a, b Source) int { return cmp.Compare(a.rank(), b.rank()) })
	// The entries are sorted by kind, each kind's made disjoint in place:
	// the index of one kind (mostly) is the entries themselves, with no
	// copy (a perf map can have millions).
	rank := map[Kind]int{}
	for i, src := range kinds {
		rank[src.Kind()] = i
	}
	slices.SortStableFunc(all, func(a, b indexEntry) int { return cmp.Compare(rank[objs[a.obj].Kind], rank[objs[b.obj].Kind]) })
	for len(all) > 0 {
		n := 1
		for n < len(all) && objs[all[n].obj].Kind == objs[all[0].obj].Kind {
			n++
		}
		mine := disjoint(all[:n:n], ox, report)
		all = all[n:]
		s.index = mergeIndex(s.index, subtract(mine, s.index, report))
	}
	s.index = slices.Clip(s.index)
	return s, errs
}

// disjoint makes entries disjoint: sorted by start (objects by path, and
// a stable sort keeps that order among sections starting at the same
// address), each keeps only the bytes no entry before it claims.
func disjoint(all []indexEntry, ox objIndex, report func(winner, loser indexEntry)) []indexEntry {
	slices.SortStableFunc(all, func(a, b indexEntry) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		if a.obj == b.obj {
			return cmp.Compare(ox.section(a).Name, ox.section(b).Name)
		}
		return 0
	})
	out := all[:0] // each entry is kept, shortened or dropped: in place
	var maxLimit uint64
	var owner indexEntry // the entry that reaches maxLimit
	for _, e := range all {
		if e.start < maxLimit {
			report(owner, e)
			if e.limit <= maxLimit {
				continue // entirely claimed already
			}
			e.start = maxLimit
		}
		out = append(out, e)
		maxLimit, owner = e.limit, e
	}
	return out
}

// subtract returns the parts of entries (disjoint, sorted) that no entry
// of taken (disjoint, sorted) covers, reporting each overlap.
func subtract(entries, taken []indexEntry, report func(winner, loser indexEntry)) []indexEntry {
	if len(taken) == 0 {
		return entries
	}
	out := make([]indexEntry, 0, len(entries)) // more only where taken splits entries
	j := 0
	for _, e := range entries {
		for j < len(taken) && taken[j].limit <= e.start {
			j++
		}
		for k := j; k < len(taken) && taken[k].start < e.limit && e.start < e.limit; k++ {
			t := taken[k]
			report(t, e)
			if t.start > e.start {
				part := e
				part.limit = t.start
				out = append(out, part)
			}
			e.start = max(e.start, t.limit)
		}
		if e.start < e.limit {
			out = append(out, e)
		}
	}
	return out
}

// mergeIndex merges two disjoint sorted indexes that do not overlap. It
// returns a or b itself if the other is empty (mostly, all of a run's
// objects are of one kind).
func mergeIndex(a, b []indexEntry) []indexEntry {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	out := make([]indexEntry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].start < b[0].start {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

func overlapError(ox objIndex, winner, loser indexEntry) error {
	ws, ls := ox.section(winner), ox.section(loser)
	wo, lo := ox.object(winner), ox.object(loser)
	name := func(s Section) string {
		if s.Name == "" {
			return fmt.Sprintf("code [%#x, %#x)", s.Start, s.Limit())
		}
		return fmt.Sprintf("section %s [%#x, %#x)", safename.String(s.Name), s.Start, s.Limit())
	}
	where := name(ls) + " overlaps " + name(ws)
	if wo != lo {
		where += " of " + safename.String(wo.Path)
	}
	rule := "the section starting lower wins, then the object whose path sorts first"
	if wo.Kind != lo.Kind {
		rule = fmt.Sprintf("a %v wins over a %v", wo.Kind, lo.Kind)
	}
	to := safename.String(ws.Name)
	if ws.Name == "" {
		to = "the code of " + safename.String(wo.Path)
	}
	return &ObjectError{File: lo.Path, Err: fmt.Errorf("%s; the overlapping addresses are attributed to %s (%s)", where, to, rule)}
}

// CallFrameInfo returns the call frame information of the JIT code at pc
// (see Object.CallFrameInfo), nil if no object of s holds pc or has any
// for it.
func (s *ObjectSet) CallFrameInfo(pc uint64) (*CallFrameInfo, error) {
	o, _ := s.Lookup(pc)
	if o == nil {
		return nil, nil
	}
	return o.CallFrameInfo(pc)
}

// Lookup returns the object and the section that hold addr, or nil and
// the zero Section if no JIT section does.
func (s *ObjectSet) Lookup(addr uint64) (*Object, Section) {
	if s == nil {
		return nil, Section{}
	}
	// The first entry starting above addr; the one before it is the only
	// candidate.
	i, _ := slices.BinarySearchFunc(s.index, addr, func(e indexEntry, a uint64) int {
		if e.start <= a {
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil, Section{}
	}
	e := s.index[i-1]
	if addr >= e.limit {
		return nil, Section{}
	}
	return s.Objects[e.obj], s.Objects[e.obj].Sections[e.sec]
}

// Holding returns the objects that hold at least one of addrs, in the
// set's order (sorted by path), each once. It stops looking as soon as
// every object is hit.
func (s *ObjectSet) Holding(addrs []uint64) []*Object {
	if s.Len() == 0 {
		return nil
	}
	hit := map[*Object]bool{}
	for _, a := range addrs {
		if o, _ := s.Lookup(a); o != nil {
			hit[o] = true
			if len(hit) == s.Len() {
				break
			}
		}
	}
	var out []*Object
	for _, o := range s.objects() {
		if hit[o] {
			out = append(out, o)
		}
	}
	return out
}

// Len returns the number of objects in the set.
func (s *ObjectSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Objects)
}

// cmpSection orders sections by start address, then size and name.
func cmpSection(a, b Section) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Size, b.Size); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}
