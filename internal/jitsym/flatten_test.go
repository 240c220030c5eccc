package jitsym

import (
	"slices"
	"testing"
)

func TestFlattenSpans(t *testing.T) {
	tests := []struct {
		name string
		raw  []rawSpan // order is the walk order; later wins
		want []span
	}{
		{name: "empty"},
		{name: "one", raw: []rawSpan{{lo: 10, hi: 20, node: 1, order: 0}}, want: []span{{lo: 10, hi: 20, node: 1}}},
		{name: "nested", raw: []rawSpan{
			{lo: 10, hi: 40, node: 1, order: 0},
			{lo: 15, hi: 20, node: 2, order: 1},
			{lo: 16, hi: 18, node: 3, order: 2},
		}, want: []span{{10, 15, 1}, {15, 16, 2}, {16, 18, 3}, {18, 20, 2}, {20, 40, 1}}},
		{name: "child at parent start and end", raw: []rawSpan{
			{lo: 10, hi: 40, node: 1, order: 0},
			{lo: 10, hi: 12, node: 2, order: 1},
			{lo: 38, hi: 40, node: 3, order: 2},
		}, want: []span{{10, 12, 2}, {12, 38, 1}, {38, 40, 3}}},
		{name: "parent in two ranges", raw: []rawSpan{
			{lo: 100, hi: 110, node: 1, order: 0},
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 12, hi: 14, node: 2, order: 1},
		}, want: []span{{10, 12, 1}, {12, 14, 2}, {14, 20, 1}, {100, 110, 1}}},
		{name: "adjacent ranges of one node merge", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 20, hi: 30, node: 1, order: 0},
		}, want: []span{{10, 30, 1}}},
		{name: "gap", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 25, hi: 30, node: 2, order: 1},
		}, want: []span{{10, 20, 1}, {25, 30, 2}}},
		{name: "overlapping siblings: later wins", raw: []rawSpan{
			{lo: 10, hi: 20, node: 1, order: 0},
			{lo: 15, hi: 25, node: 2, order: 1},
		}, want: []span{{10, 15, 1}, {15, 25, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flattenSpans(nil, slices.Clone(tt.raw))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
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
			if got := flattenUnits(tt.raw); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSegments(t *testing.T) {
	units := []cuRange{{lo: 10, hi: 50, unit: 0}, {lo: 60, hi: 70, unit: 1}}
	spans := []span{
		{lo: 5, hi: 12, node: 1}, // starts before the unit's range: clipped
		{lo: 20, hi: 30, node: 2},
		{lo: 30, hi: 35, node: 3},
		{lo: 45, hi: 55, node: 4}, // ends after it: clipped
		{lo: 62, hi: 64, node: 5}, // unit 1
	}
	his, segs := segments(units, spans, [][2]int32{{0, 4}, {4, 5}})
	wantHis := []uint64{12, 20, 30, 35, 45, 50, 62, 64, 70}
	wantSegs := []segment{{10, 0, 1}, {12, 0, -1}, {20, 0, 2}, {30, 0, 3}, {35, 0, -1}, {45, 0, 4}, {60, 1, -1}, {62, 1, 5}, {64, 1, -1}}
	if !slices.Equal(his, wantHis) || !slices.Equal(segs, wantSegs) {
		t.Errorf("got %v %v, want %v %v", his, segs, wantHis, wantSegs)
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
