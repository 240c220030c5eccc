package jitsym

import (
	"cmp"
	"slices"
)

// flattenSpans appends to dst the disjoint, sorted spans that say which
// subroutine is innermost at each address, given the ranges of one unit's
// subroutines in depth-first order (rawSpan.order). Where ranges overlap,
// the one later in that order wins, which for properly nested DWARF is the
// innermost: the result LLVM's DWARFUnit::updateAddressDieMap builds by
// inserting parents before children. Adjacent spans of one node merge.
func flattenSpans(dst []span, raw []rawSpan) []span {
	if len(raw) == 0 {
		return dst
	}
	slices.SortFunc(raw, func(a, b rawSpan) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	// Every boundary where the innermost range may change.
	bounds := make([]uint64, 0, 2*len(raw))
	for _, r := range raw {
		bounds = append(bounds, r.lo, r.hi)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)

	// Ranges started and maybe not ended, the latest in the walk on top.
	var active []rawSpan
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
		top, end := active[0], bounds[k+1]
		if n := len(dst); n > 0 && dst[n-1].node == top.node && dst[n-1].hi == x {
			dst[n-1].hi = end
		} else {
			dst = append(dst, span{lo: x, hi: end, node: top.node})
		}
	}
	return dst
}

// flattenUnits turns the units' address ranges (rawSpan.node is the unit
// index) into disjoint sorted ranges the way LLVM's DWARFDebugAranges::
// construct does: where units overlap, the range being built continues
// with its unit while that unit still covers the address, and otherwise
// the unit first in .debug_info wins. Empty ranges are dropped.
func flattenUnits(raw []rawSpan) []cuRange {
	type endpoint struct {
		addr  uint64
		unit  int32
		start bool
	}
	var eps []endpoint
	for _, r := range raw {
		if r.lo < r.hi {
			eps = append(eps, endpoint{r.lo, r.node, true}, endpoint{r.hi, r.node, false})
		}
	}
	slices.SortFunc(eps, func(a, b endpoint) int { return cmp.Compare(a.addr, b.addr) })
	count := make(map[int32]int) // how many of a unit's ranges cover the address
	var valid []int32            // units with count > 0, and stale ones, lowest on top
	lower := func(a, b int32) bool { return a < b }
	var out []cuRange
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
// spans, and returns the segments with their ends apart. Parts of a
// unit's range without a subroutine get node -1; parts of spans outside
// their unit's ranges are dropped, as llvm-symbolizer never looks there.
func segments(units []cuRange, spans []span, unitSpan [][2]int32) (his []uint64, segs []segment) {
	his = make([]uint64, 0, len(spans)+len(units)+1)
	segs = make([]segment, 0, cap(his))
	add := func(lo, hi uint64, unit, node int32) {
		if n := len(segs); n > 0 && his[n-1] == lo && segs[n-1].unit == unit && segs[n-1].node == node {
			his[n-1] = hi
			return
		}
		his = append(his, hi)
		segs = append(segs, segment{lo: lo, unit: unit, node: node})
	}
	for _, r := range units {
		us := spans[unitSpan[r.unit][0]:unitSpan[r.unit][1]]
		j, _ := slices.BinarySearchFunc(us, r.lo, func(sp span, x uint64) int { return cmp.Compare(sp.hi, x+1) })
		pos := r.lo
		for ; j < len(us) && us[j].lo < r.hi && pos < r.hi; j++ {
			if us[j].lo > pos {
				add(pos, us[j].lo, r.unit, -1)
				pos = us[j].lo
			}
			end := min(us[j].hi, r.hi)
			add(pos, end, r.unit, us[j].node)
			pos = end
		}
		if pos < r.hi {
			add(pos, r.hi, r.unit, -1)
		}
	}
	return his, segs
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
