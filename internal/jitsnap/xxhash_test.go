package jitsnap

import "testing"

func TestXXHash64(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		// Reference values of XXH64 with seed 0.
		{in: "", want: 0xef46db3751d8e999},
		{in: "a", want: 0xd24ec4f1a98c6e5b},
		{in: "abc", want: 0x44bc2cf5ad770999},
		{in: "Nobody inspects the spammish repetition", want: 0xfbcea83c8a378bf1},
	} {
		if got := xxHash64([]byte(tt.in)); got != tt.want {
			t.Errorf("xxHash64(%q): got %016x, want %016x", tt.in, got, tt.want)
		}
	}
}
