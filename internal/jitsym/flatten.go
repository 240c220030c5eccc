package jitsym

import (
	"cmp"
	"slices"
)

// span says which subroutine (node) is innermost in [lo, hi) in a
// spanList, which knows hi.
type span struct {
	lo   uint64
	size uint32 // hi-lo if less than longSpan; else longSpan | the index of hi in spanList.long
	node int32
}

// longSpan marks a span of 2 GiB or more, which only hand-made DWARF has.
const longSpan = 1 << 31

// A spanList is a list of spans with the ends of its long ones.
type spanList struct {
	spans []span
	long  []uint64
}

func (l *spanList) hi(sp *span) uint64 {
	if sp.size&longSpan != 0 {
		return l.long[sp.size&^longSpan]
	}
	return sp.lo + uint64(sp.size)
}

func (l *spanList) setHi(sp *span, hi uint64) {
	switch {
	case sp.size&longSpan != 0:
		l.long[sp.size&^longSpan] = hi
	case hi-sp.lo < longSpan || len(l.long) >= longSpan:
		sp.size = uint32(min(hi-sp.lo, longSpan-1)) // the second case cannot fit in memory
	default:
		sp.size = longSpan | uint32(len(l.long))
		l.long = append(l.long, hi)
	}
}

// add appends [lo, hi) of node, merging it with the last span if that
// one is the same node's and ends at lo.
func (l *spanList) add(lo, hi uint64, node int32) {
	if n := len(l.spans); n > 0 && l.spans[n-1].node == node && l.hi(&l.spans[n-1]) == lo {
		l.setHi(&l.spans[n-1], hi)
		return
	}
	l.spans = append(l.spans, span{lo: lo, node: node})
	l.setHi(&l.spans[len(l.spans)-1], hi)
}

// cuRange says which compile unit covers [lo, hi).
type cuRange struct {
	lo, hi uint64
	unit   int32
}

// flattenSpans appends to dst the disjoint, sorted spans that say which
// subroutine is innermost at each address, given the ranges of some
// subroutines in depth-first order (rawSpan.order). Where ranges overlap,
// the one later in that order wins, which for properly nested DWARF is the
// innermost: the result LLVM's DWARFUnit::updateAddressDieMap builds by
// inserting parents before children. Adjacent spans of one node merge.
func flattenSpans(dst *spanList, raw []rawSpan) {
	var f flattener
	f.flatten(dst, raw)
}

// flattener runs flattenSpans, keeping its scratch space between calls.
type flattener struct {
	bounds []uint64
	active []rawSpan
}

func (f *flattener) flatten(dst *spanList, raw []rawSpan) {
	switch len(raw) {
	case 0:
		return
	case 1: // a function without inlined code, the usual tree
		dst.add(raw[0].lo, raw[0].hi, raw[0].node)
		return
	}
	slices.SortFunc(raw, func(a, b rawSpan) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	// Every boundary where the innermost range may change.
	bounds := f.bounds[:0]
	for _, r := range raw {
		bounds = append(bounds, r.lo, r.hi)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)

	// Ranges started and maybe not ended, the latest in the walk on top.
	active := f.active[:0]
	later := func(a, b rawSpan) bool { return a.order > b.order }
	next := 0
	for k, x := range bounds[:len(bounds)-1] {
		for next < len(raw) && raw[next].lo == x {
			active = heapPush(active, raw[next], later)
			next++
		}
		for len(active) > 0 && active[0].hi <= x {
			active = heapPop(active, later)
		}
		if len(active) == 0 {
			continue
		}
		dst.add(x, bounds[k+1], active[0].node)
	}
	f.bounds, f.active = bounds, active
}

// flattenUnits turns the address ranges of n units (rawSpan.node is the
// unit index) into disjoint sorted ranges the way LLVM's
// DWARFDebugAranges::construct does: where units overlap, the range being
// built continues with its unit while that unit still covers the address,
// and otherwise the unit first in .debug_info wins. Empty ranges are
// dropped.
func flattenUnits(raw []rawSpan, n int) []cuRange {
	type endpoint struct {
		addr  uint64
		unit  int32
		start bool
	}
	eps := make([]endpoint, 0, 2*len(raw))
	for _, r := range raw {
		if r.lo < r.hi {
			eps = append(eps, endpoint{r.lo, r.node, true}, endpoint{r.hi, r.node, false})
		}
	}
	radixSort(eps, make([]endpoint, len(eps)), func(e *endpoint) uint64 { return e.addr })
	count := make([]int, n) // how many of a unit's ranges cover the address
	var valid []int32       // units with count > 0, and stale ones, lowest on top
	lower := func(a, b int32) bool { return a < b }
	out := make([]cuRange, 0, len(raw)) // enough unless units overlap
	prev, nvalid := uint64(0), 0
	for i, e := range eps {
		if i > 0 && prev < e.addr && nvalid > 0 {
			if n := len(out); n > 0 && out[n-1].hi == prev && count[out[n-1].unit] > 0 {
				out[n-1].hi = e.addr
			} else {
				for count[valid[0]] == 0 {
					valid = heapPop(valid, lower)
				}
				out = append(out, cuRange{lo: prev, hi: e.addr, unit: valid[0]})
			}
		}
		if e.start {
			if count[e.unit] == 0 {
				nvalid++
				valid = heapPush(valid, e.unit, lower)
			}
			count[e.unit]++
		} else if count[e.unit]--; count[e.unit] == 0 {
			nvalid--
		}
		prev = e.addr
	}
	return out
}

// segments cuts the units' address ranges (disjoint and sorted) where the
// innermost subroutine of the unit changes, using each unit's flattened
// spans, and returns the segments as Symbolizer.segLo, segHi and segCode
// hold them: the holes between ranges are segments too. Parts of a unit's
// range without a subroutine get unitCode(unit); parts of spans outside
// their unit's ranges are dropped, as llvm-symbolizer never looks there.
// The slices are allocated at their final size: a first pass counts.
func segments(units []cuRange, spans *spanList, unitSpan [][2]int32) (lo uint64, his []uint64, codes []int32) {
	var w segWriter
	forEachSegment(units, spans, unitSpan, w.add) // count
	w = segWriter{his: make([]uint64, 0, w.n), codes: make([]int32, 0, w.n), write: true}
	forEachSegment(units, spans, unitSpan, w.add)
	return w.lo, w.his, w.codes
}

// segWriter appends segments, merging adjacent ones of one code and
// filling holes; without write it only counts them.
type segWriter struct {
	lo, hi uint64 // of what is written so far
	code   int32  // of the last segment
	n      int
	write  bool
	his    []uint64
	codes  []int32
}

func (w *segWriter) add(lo, hi uint64, code int32) {
	switch {
	case w.n == 0:
		w.lo = lo
	case w.hi == lo && w.code == code:
		w.hi = hi
		if w.write {
			w.his[w.n-1] = hi
		}
		return
	case w.hi < lo:
		w.push(lo, segHole)
	}
	w.push(hi, code)
}

func (w *segWriter) push(hi uint64, code int32) {
	w.hi, w.code = hi, code
	w.n++
	if w.write {
		w.his = append(w.his, hi)
		w.codes = append(w.codes, code)
	}
}

// forEachSegment calls add for each part of the units' ranges, in order:
// where a subroutine is innermost, its node, elsewhere the unit's code.
func forEachSegment(units []cuRange, spans *spanList, unitSpan [][2]int32, add func(lo, hi uint64, code int32)) {
	for _, r := range units {
		us := spans.spans[unitSpan[r.unit][0]:unitSpan[r.unit][1]]
		j, _ := slices.BinarySearchFunc(us, r.lo, func(sp span, x uint64) int { return cmp.Compare(spans.hi(&sp), x+1) })
		pos := r.lo
		for ; j < len(us) && us[j].lo < r.hi && pos < r.hi; j++ {
			if us[j].lo > pos {
				add(pos, us[j].lo, unitCode(r.unit))
				pos = us[j].lo
			}
			end := min(spans.hi(&us[j]), r.hi)
			add(pos, end, us[j].node)
			pos = end
		}
		if pos < r.hi {
			add(pos, r.hi, unitCode(r.unit))
		}
	}
}

// heapPush adds x to the binary heap h ordered by before (the element
// for which before holds against all others is h[0]).
func heapPush[T any](h []T, x T, before func(a, b T) bool) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !before(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// heapPop removes h[0] from the binary heap h ordered by before.
func heapPop[T any](h []T, before func(a, b T) bool) []T {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && before(h[c+1], h[c]) {
			c++
		}
		if !before(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return h
}
