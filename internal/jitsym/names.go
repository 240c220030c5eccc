package jitsym

import (
	"cmp"
	"math"
	"slices"
)

// maxRefHops bounds how many entries name resolution visits through
// DW_AT_abstract_origin and DW_AT_specification. Real chains have at most
// three entries (inlined instance, abstract instance, declaration).
const maxRefHops = 16

// maxScopeDepth bounds how many enclosing scopes a qualified name lists.
const maxScopeDepth = 64

// nameNodes sets the function name and start line of every node, as
// LLVM's DWARFDie::getSubroutineName(DINameKind::LinkageName) and
// getDeclLine do: the first DW_AT_linkage_name (or DW_AT_MIPS_linkage_name)
// found on the entry or the entries it refers to through
// DW_AT_abstract_origin and DW_AT_specification, else the DW_AT_name found
// the same way. Where LLVM stops at that short name, we qualify it with the
// namespaces and classes around the entry that has it, as the demangled
// linkage name would read: GCC gives no linkage name to functions with
// internal linkage, so an inlined static helper in namespace ns prints as
// "ns::helper", one in an anonymous namespace as
// "ns::(anonymous namespace)::helper". Two cases keep the short name: a
// DW_AT_external function without a linkage name has C linkage (extern "C"
// inside a namespace), and a scope that is an unnamed type (a lambda's
// closure) has no name to give.
//
// Native binaries (executables and shared libraries, b.qualify false)
// keep LLVM's short names, so that their reports read exactly as
// upstream pprof's with llvm-symbolizer; only JIT objects are qualified.
//
// The walk keeps no table of entries for this. The entries are decoded
// again here from .debug_info: each node's own (unless the walk saw that
// it holds nothing but the reference to follow; see nodeEntry), and the
// ones they refer to, which many nodes share, through a small cache (see
// summary). An entry is followed only if the walk met it as a subroutine
// (b.subDies), and its scope is the innermost one whose extent holds it
// (b.scopes).
func (b *builder) nameNodes() error {
	b.s.names = make([]string, 1, 1+len(b.s.nodes)/3) // most inlined functions are inlined more than once
	b.names = newInterner(&b.s.names)
	b.summaryBits = summaryBits(len(b.subDies))
	b.summaries = make([]dieSummary, 1<<b.summaryBits)
	for i := range b.s.nodes {
		n := &b.s.nodes[i]
		r, err := b.find(b.nodeDie[i])
		if err != nil {
			return err
		}
		fn, qual := b.strBytes(r.link), ""
		if len(fn) == 0 && r.name != 0 {
			fn = b.strBytes(r.name)
			// (A name from a supplementary file is not qualified: only
			// native binaries have one, and they keep LLVM's names.)
			if b.qualify && len(fn) > 0 && !r.external && r.nameDie&supRef == 0 {
				if sc := b.scopeAt(uint32(r.nameDie)); sc >= 0 {
					if q := b.qualified(sc); q != "" && b.spendQual(len(q)+2+len(fn)) {
						qual = q
					}
				}
			}
		}
		n.fn = b.internName(qual, fn)
		if r.hasDecl {
			n.startLine = r.declLine
		}
	}
	return nil
}

// internName returns the Symbolizer.names index of qual::name, or of name
// if qual is "".
func (b *builder) internName(qual string, name []byte) int32 {
	if len(name) == 0 {
		return 0
	}
	if qual == "" {
		return b.names.id(name)
	}
	b.scratch = append(append(append(b.scratch[:0], qual...), "::"...), name...)
	return b.names.id(b.scratch)
}

// found is what find learns about a subroutine entry.
type found struct {
	link, name strRef // the linkage name and the name (resolved), or 0
	nameDie    uint64 // the entry that has the name (marked supRef if it is the supplementary file's)
	declLine   uint32
	hasDecl    bool
	external   bool
}

// find visits the node's entry and the entries it refers to the way
// LLVM's DWARFDie::findRecursively does (a stack: the specification is
// tried before the abstract origin, each entry once) and returns the
// first linkage name, the first name and the first declaration line
// found, and whether any entry has DW_AT_external.
func (b *builder) find(ne nodeEntry) (r found, err error) {
	work, seen := &b.findWork, &b.findSeen // scratch: only [:nw] and [:ns] are read
	own := uint64(ne.off)
	nw, ns, hops := 1, 1, 0
	work[0], seen[0] = own, own
	if ne.ref != 0 {
		// The entry has nothing to find but ref: the first visit would
		// only push it, if the walk met it.
		nw, hops = 0, 1
		if ref := b.subDie(uint64(ne.ref)); ref != 0 && ref != own {
			work[0], seen[1] = ref, ref
			nw, ns = 1, 2
		}
	}
	for ; nw > 0 && hops < maxRefHops; hops++ {
		nw--
		off := work[nw]
		var d *dieSummary
		if off&supRef != 0 {
			d = b.supSummary(off)
		} else if d, err = b.summary(uint32(off), off != own); err != nil {
			return r, err
		}
		if r.link == 0 && d.link != 0 {
			r.link = d.link
		}
		if r.name == 0 && d.name != 0 {
			r.name, r.nameDie = d.name, off
		}
		if !r.hasDecl && d.hasDecl {
			r.declLine, r.hasDecl = d.declLine, true
		}
		r.external = r.external || d.external
		for _, j := range [2]uint64{d.origin, d.spec} {
			if j == 0 || ns == len(seen) || nw == len(work) || contains(seen[:ns], j) {
				continue
			}
			seen[ns], work[nw] = j, j
			ns++
			nw++
		}
	}
	return r, nil
}

// dieSummary is what find needs of one subroutine entry.
type dieSummary struct {
	off          uint32 // the entry's offset; 0 in an empty cache slot
	link, name   strRef // resolved: never strIndex
	origin, spec uint64 // subroutine entries the walk met or of the supplementary file (see subDie), or 0
	declLine     uint32
	hasDecl      bool
	external     bool
}

// maxSummaryBits bounds the size of the cache of summaries, 1<<bits
// entries: the entries that inlined instances refer to (abstract
// instances and declarations) are few and near one another, so a small
// cache spares decoding each of them once per instance.
const maxSummaryBits = 12

// summaryBits returns the number of bits of the cache of summaries for n
// subroutine entries.
func summaryBits(n int) int {
	bits := 4
	for bits < maxSummaryBits && 1<<bits < n {
		bits++
	}
	return bits
}

// summary returns the summary of the subroutine entry at off, from the
// cache or decoded; it caches it if cache is set (for entries that others
// refer to).
func (b *builder) summary(off uint32, cache bool) (*dieSummary, error) {
	d := &b.summaries[(off*0x9e3779b1)>>(32-b.summaryBits)] // Fibonacci hashing
	if d.off == off {
		return d, nil
	}
	if !cache {
		d = &b.oneSummary
	}
	var e entry
	w, err := b.entryAt(off, &e)
	if err != nil {
		return nil, err
	}
	*d = dieSummary{off: off, link: b.resolveStr(e.linkage, w), name: b.resolveStr(e.name, w),
		origin: b.subDie(e.origin), spec: b.subDie(e.spec), declLine: uint32(e.declLine), hasDecl: e.hasDeclLine, external: e.external}
	return d, nil
}

// entryAt decodes the entry at off, one the walk read, into e and returns
// its unit.
func (b *builder) entryAt(off uint32, e *entry) (*walkedUnit, error) {
	i, _ := slices.BinarySearchFunc(b.walked, uint64(off), func(w walkedUnit, x uint64) int {
		return cmp.Compare(w.hdr.end, x+1) // the first unit ending after off
	})
	w := &b.walked[i]
	c := &cursor{data: b.debugInfo[:w.hdr.end], off: int(off), bo: b.bo, sec: ".debug_info"}
	if _, err := readEntry(c, &w.hdr, w.abbrevs, e); err != nil {
		return nil, err
	}
	return w, nil
}

// subDie returns the offset of the subroutine entry a reference points
// to if the walk met one there, else 0. A reference to the
// supplementary file's entries (marked supRef) is returned as it is if
// there is such a file; supSummary checks what is there.
func (b *builder) subDie(ref uint64) uint64 {
	if ref&supRef != 0 && b.sup != nil {
		return ref
	}
	if ref == 0 || ref > math.MaxUint32 {
		return 0
	}
	if _, ok := slices.BinarySearch(b.subDies, uint32(ref)); !ok {
		return 0
	}
	return ref
}

// scopeAt returns the innermost scope around the entry at off, or -1.
// Scopes nest: the last one starting before off, or the first of its
// enclosing scopes that ends after off, is it.
func (b *builder) scopeAt(off uint32) int32 {
	i, _ := slices.BinarySearchFunc(b.scopes, off, func(sc scope, x uint32) int { return cmp.Compare(sc.start, x) })
	j := int32(i) - 1
	for j >= 0 && b.scopes[j].end <= off {
		j = b.scopes[j].parent
	}
	return j
}

func contains[T comparable](s []T, x T) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// spendQual charges n bytes of qualified names to a budget proportional to
// the debug sections, so that deeply nested hostile input cannot make
// qualified names grow with the square of its size. It reports whether
// the budget allowed it; legitimate objects stay far below.
func (b *builder) spendQual(n int) bool {
	if b.qualBudget < int64(n) {
		return false
	}
	b.qualBudget -= int64(n)
	return true
}

// qualified returns the qualified name of scope i ("ns::Cls"), computing
// it once; "" when the budget is spent.
func (b *builder) qualified(i int32) string {
	if sc := &b.scopes[i]; sc.done {
		return sc.qual
	}
	// Collect the scopes from i outwards, stopping at one already done.
	var chain []int32
	prefix := ""
	bad := false // an unnamed scope outside: no qualified name
	for j := i; j >= 0 && len(chain) < maxScopeDepth; j = b.scopes[j].parent {
		if b.scopes[j].done {
			prefix, bad = b.scopes[j].qual, b.scopes[j].qual == ""
			break
		}
		chain = append(chain, j)
	}
	for k := len(chain) - 1; k >= 0; k-- {
		sc := &b.scopes[chain[k]]
		bad = bad || sc.unnamed
		switch {
		case bad:
			sc.qual = ""
		case prefix == "":
			sc.qual = sc.name
		case b.spendQual(len(prefix) + 2 + len(sc.name)):
			sc.qual = prefix + "::" + sc.name
		default:
			sc.qual = ""
		}
		sc.done = true
		prefix = sc.qual
	}
	return b.scopes[i].qual
}
