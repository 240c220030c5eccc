package jitsym

import (
	"slices"
	"testing"
)

// sp returns the span [lo, hi) of node.
func sp(lo, hi uint64, node int32) span { return span{lo: lo, size: uint32(hi - lo), node: node} }

func TestFlattenSpans(t *testing.T) {
	tests := []struct {
		name string
		raw  []rawSpan // order is the walk order; later wins
		want []span
	}{
		{name: "empty"},
		{name: "one", raw: []rawSpan{{lo: 10, hi: 20, node: 1, order: 0}}, want: []span{sp(10, 20, 1)}},
		{name: "nested", raw: []rawSpan{
			{lo: 10, hi: 40, node: 1, order: 0},
			{lo: 15, hi: 20, node: 2, order: 1},
			{lo: 16, hi: 18, node: 3, order: 2},
		}, want: []span{sp(10, 15, 1), sp(15, 16, 2), sp(16, 18, 3), sp(18, 20, 2), sp(20, 40, 1)}},
		{name: "child at parent start and end", raw: []rawSpan{
			{lo: 10, hi: 40, node: 1, order: 0},
			{lo: 10, hi: 12, node: 2, order: 1},
			{lo: 38, hi: 40, node: 3, order: 2},
		}, want: []span{sp(10, 12, 2), sp(12, 38, 1), sp(38, 40, 3)}},
		{name: "parent in two ranges", raw: []rawSpan{
			{lo: 100, hi: 110, node: 1, order: 0},
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 12, hi: 14, node: 2, order: 1},
		}, want: []span{sp(10, 12, 1), sp(12, 14, 2), sp(14, 20, 1), sp(100, 110, 1)}},
		{name: "adjacent ranges of one node merge", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 20, hi: 30, node: 1, order: 0},
		}, want: []span{sp(10, 30, 1)}},
		{name: "gap", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 25, hi: 30, node: 2, order: 1},
		}, want: []span{sp(10, 20, 1), sp(25, 30, 2)}},
		{name: "overlapping siblings: later wins", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 15, hi: 25, node: 2, order: 1},
		}, want: []span{sp(10, 15, 1), sp(15, 25, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l spanList
			flattenSpans(&l, slices.Clone(tt.raw))
			got := l.spans
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFlattenLong checks spans too long for span.size (a hand-made
// range may cover every address): their ends are kept apart, and
// segments reads them.
func TestFlattenLong(t *testing.T) {
	const g = 1 << 30
	var l spanList
	flattenSpans(&l, []rawSpan{
		{lo: 0, hi: 9 * g, node: 1, order: 0},
		{lo: 4 * g, hi: 4*g + 16, node: 2, order: 1},
		{lo: 10 * g, hi: ^uint64(0), node: 3, order: 2},
		{lo: ^uint64(0) - 2*g, hi: ^uint64(0) - 2*g + 16, node: 4, order: 3},
	})
	type triple struct {
		lo, hi uint64
		node   int32
	}
	var got []triple
	for i := range l.spans {
		got = append(got, triple{l.spans[i].lo, l.hi(&l.spans[i]), l.spans[i].node})
	}
	want := []triple{{0, 4 * g, 1}, {4 * g, 4*g + 16, 2}, {4*g + 16, 9 * g, 1},
		{10 * g, ^uint64(0) - 2*g, 3}, {^uint64(0) - 2*g, ^uint64(0) - 2*g + 16, 4}, {^uint64(0) - 2*g + 16, ^uint64(0), 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if len(l.long) != 3 { // the last is 16 bytes short of 2 GiB
		t.Errorf("%d long spans, want 3", len(l.long))
	}
	lo, his, codes := segments([]cuRange{{lo: 0, hi: ^uint64(0)}}, &l, [][2]int32{{0, int32(len(l.spans))}})
	wantHis := []uint64{4 * g, 4*g + 16, 9 * g, 10 * g, ^uint64(0) - 2*g, ^uint64(0) - 2*g + 16, ^uint64(0)}
	wantCodes := []int32{1, 2, 1, unitCode(0), 3, 4, 3}
	if lo != 0 || !slices.Equal(his, wantHis) || !slices.Equal(codes, wantCodes) {
		t.Errorf("segments: got %d %v %v, want 0 %v %v", lo, his, codes, wantHis, wantCodes)
	}
}

// TestUnitSpans checks that flattening a unit tree by tree (a tree's
// nodes numbered after those of the trees before it) gives what
// flattening all its ranges at once does.
func TestUnitSpans(t *testing.T) {
	tests := []struct {
		name  string
		trees [][]rawSpan // node numbers grow from tree to tree; order is the walk order
	}{
		{name: "disjoint, out of order", trees: [][]rawSpan{
			{{lo: 100, hi: 110, node: 0, order: 0}, {lo: 102, hi: 104, node: 1, order: 1}},
			{{lo: 10, hi: 20, node: 2, order: 2}},
			{{lo: 50, hi: 60, node: 3, order: 3}, {lo: 20, hi: 30, node: 3, order: 3}},
		}},
		{name: "a later tree overlaps", trees: [][]rawSpan{
			{{lo: 10, hi: 40, node: 0, order: 0}, {lo: 15, hi: 30, node: 1, order: 1}, {lo: 16, hi: 18, node: 2, order: 2}},
			{{lo: 17, hi: 35, node: 3, order: 3}, {lo: 20, hi: 22, node: 4, order: 4}},
			{{lo: 5, hi: 12, node: 5, order: 5}},
		}},
		{name: "adjacent trees", trees: [][]rawSpan{
			{{lo: 10, hi: 20, node: 0, order: 0}},
			{{lo: 20, hi: 30, node: 1, order: 1}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &builder{spans: spanList{spans: []span{sp(1, 2, 9)}}} // another unit's
			var all []rawSpan
			for _, tree := range tt.trees {
				b.treeRaw = append(b.treeRaw, tree...)
				b.flushTree()
				all = append(all, tree...)
			}
			b.unitSpans(1)
			got := b.spans.spans[1:]
			var want spanList
			flattenSpans(&want, all)
			if !slices.Equal(got, want.spans) {
				t.Errorf("got %v, want %v", got, want.spans)
			}
		})
	}
}

func TestFlattenUnits(t *testing.T) {
	tests := []struct {
		name string
		raw  []rawSpan // node is the unit
		want []cuRange
	}{
		{name: "disjoint", raw: []rawSpan{{lo: 30, hi: 40, node: 1}, {lo: 10, hi: 20, node: 0}},
			want: []cuRange{{10, 20, 0}, {30, 40, 1}}},
		{name: "empty range dropped", raw: []rawSpan{{lo: 10, hi: 10, node: 0}, {lo: 20, hi: 10, node: 1}}},
		{name: "same start: the first unit wins", raw: []rawSpan{{lo: 10, hi: 30, node: 1}, {lo: 10, hi: 40, node: 0}},
			want: []cuRange{{10, 40, 0}}},
		{name: "overlap: the current unit continues while it covers", raw: []rawSpan{{lo: 10, hi: 30, node: 1}, {lo: 20, hi: 40, node: 0}},
			want: []cuRange{{10, 30, 1}, {30, 40, 0}}},
		{name: "overlap: then the first unit covering wins", raw: []rawSpan{{lo: 10, hi: 30, node: 2}, {lo: 20, hi: 40, node: 1}, {lo: 25, hi: 40, node: 0}},
			want: []cuRange{{10, 30, 2}, {30, 40, 0}}},
		{name: "adjacent ranges of one unit merge", raw: []rawSpan{{lo: 10, hi: 20, node: 0}, {lo: 20, hi: 30, node: 0}},
			want: []cuRange{{10, 30, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flattenUnits(tt.raw, 3); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSegments(t *testing.T) {
	units := []cuRange{{lo: 10, hi: 50, unit: 0}, {lo: 60, hi: 70, unit: 1}, {lo: 70, hi: 80, unit: 0}}
	spans := []span{
		sp(5, 12, 1), // starts before the unit's range: clipped
		sp(20, 30, 2),
		sp(30, 35, 3),
		sp(45, 55, 4), // ends after it: clipped
		sp(70, 75, 6), // in unit 0's second range, right after unit 1's
		sp(62, 64, 5), // unit 1
	}
	lo, his, codes := segments(units, &spanList{spans: spans}, [][2]int32{{0, 5}, {5, 6}})
	u0, u1 := unitCode(0), unitCode(1)
	wantHis := []uint64{12, 20, 30, 35, 45, 50, 60, 62, 64, 70, 75, 80}
	wantCodes := []int32{1, u0, 2, 3, u0, 4, segHole, u1, 5, u1, 6, u0}
	if lo != 10 || !slices.Equal(his, wantHis) || !slices.Equal(codes, wantCodes) {
		t.Errorf("got %d %v %v, want 10 %v %v", lo, his, codes, wantHis, wantCodes)
	}
	if cap(his) != len(his) || cap(codes) != len(codes) {
		t.Errorf("capacities %d and %d, want the lengths %d: segments counts first", cap(his), cap(codes), len(his))
	}
}

func TestSearchHi(t *testing.T) {
	keys := []uint64{10, 20, 20, 30}
	tests := []struct {
		x    uint64
		want int
	}{
		{x: 0, want: 0},  // below
		{x: 10, want: 1}, // at a key
		{x: 15, want: 1}, // between
		{x: 20, want: 3}, // at a repeated key: after all of them
		{x: 29, want: 3}, // last-1
		{x: 30, want: 4}, // at the last
		{x: ^uint64(0), want: 4},
	}
	for _, tt := range tests {
		if got := searchHi(keys, tt.x); got != tt.want {
			t.Errorf("searchHi(%v, %d) = %d, want %d", keys, tt.x, got, tt.want)
		}
	}
	if got := searchHi(nil, 5); got != 0 {
		t.Errorf("searchHi(nil, 5) = %d, want 0", got)
	}
}
