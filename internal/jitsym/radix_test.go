package jitsym

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestRadixSort: radixSort orders as a stable comparison sort does, for
// keys that share high bytes or not, with many equal keys or none, at
// lengths around the switch to digits.
func TestRadixSort(t *testing.T) {
	type item struct {
		k   uint64
		pos int
	}
	r := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		name string
		key  func() uint64
	}{
		{"addresses", func() uint64 { return 0x7f0000000000 + uint64(r.Int63n(5<<30)) }},
		{"all bits", func() uint64 { return r.Uint64() }},
		{"few values", func() uint64 { return uint64(r.Intn(5)) << 40 }},
		{"one value", func() uint64 { return 42 }},
	} {
		for _, n := range []int{0, 1, 2, minRadix - 1, minRadix, 1000, 100000} {
			s := make([]item, n)
			for i := range s {
				s[i] = item{c.key(), i}
			}
			want := slices.Clone(s)
			slices.SortStableFunc(want, func(x, y item) int { return cmp.Compare(x.k, y.k) })
			radixSort(s, make([]item, n), func(x *item) uint64 { return x.k })
			if !slices.Equal(s, want) {
				t.Errorf("%s, %d items: not the stable order", c.name, n)
			}
		}
	}
}
