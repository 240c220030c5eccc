package jitdump

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFinalStateOverwrittenInTurn: code that overwrote part of an earlier
// piece removes it from the final state even when later code overwrote
// it in turn (FuzzRead's input a07e5ff950ddb658: loads at 0x101e, then
// 0x1000, then 0xff8, 0x20 bytes each; only the last is left).
func TestFinalStateOverwrittenInTurn(t *testing.T) {
	var loads codes
	for _, c := range []Code{
		{Addr: 0x101e, Size: 0x20, placed: 1},
		{Addr: 0x1000, Size: 0x20, placed: 2},
		{Addr: 0xff8, Size: 0x20, placed: 3},
	} {
		loads.add(c)
	}
	got := finalState(&loads)
	if len(got) != 1 || got[0].Addr != 0xff8 {
		t.Errorf("final state %+v, want only the code at 0xff8", got)
	}
}

// TestOverwrittenMatchesPairs: the sweep finds the pieces a later piece
// overlaps exactly as comparing every pair does, on random layouts.
func TestOverwrittenMatchesPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + rng.IntN(12)
		ls := make([]*Code, n)
		for i, p := range rng.Perm(n) {
			ls[i] = &Code{Addr: uint64(rng.IntN(64)), Size: uint64(1 + rng.IntN(16)), placed: p}
		}
		slices.SortStableFunc(ls, func(a, b *Code) int { return int(a.Addr) - int(b.Addr) })
		want := make([]bool, n)
		for i, a := range ls {
			for _, b := range ls {
				if b.placed > a.placed && a.Addr < b.Addr+b.Size && b.Addr < a.Addr+a.Size {
					want[i] = true
				}
			}
		}
		if got := overwritten(ls); !slices.Equal(got, want) {
			for _, c := range ls {
				t.Logf("[%d, %d) placed %d", c.Addr, c.Addr+c.Size, c.placed)
			}
			t.Fatalf("overwritten %v, want %v", got, want)
		}
	}
}

// TestOverwrittenChain: of loads each overlapping its neighbours, placed
// in address order, only the last stays.
func TestOverwrittenChain(t *testing.T) {
	dead := overwritten(chain(1000))
	if dead[999] || slices.Contains(dead[:999], false) {
		t.Errorf("the last load must stay, the others go")
	}
}

// BenchmarkOverwrittenChain resolves a hostile dump's million loads, each
// overlapping its neighbours (comparing pairs would take hours).
func BenchmarkOverwrittenChain(b *testing.B) {
	ls := chain(1 << 20)
	for b.Loop() {
		overwritten(ls)
	}
}

// chain is n loads of 12 bytes, 8 apart, placed in address order.
func chain(n int) []*Code {
	ls := make([]*Code, n)
	for i := range ls {
		ls[i] = &Code{Addr: uint64(i) * 8, Size: 12, placed: i}
	}
	return ls
}
