package jitsym

import (
	"fmt"
	"strings"
	"testing"
)

func TestInterner(t *testing.T) {
	strs := []string{""}
	in := newInterner(&strs)
	long := strings.Repeat("x", arenaSize) // not in an arena
	words := []string{"", "a", "b", "a", long, "ab", "b", long}
	wantIDs := []int32{0, 1, 2, 1, 3, 4, 2, 3}
	for i, w := range words {
		if got := in.id([]byte(w)); got != wantIDs[i] {
			t.Errorf("id(%.10q) = %d, want %d", w, got, wantIDs[i])
		}
	}
	// Enough strings to grow the table and fill several arenas: each
	// keeps its number and its bytes.
	for i := range 40000 {
		w := fmt.Sprintf("_ZN5synth%dfEi", i)
		id := in.id([]byte(w))
		if again := in.id([]byte(w)); again != id || strs[id] != w {
			t.Fatalf("%q: id %d then %d, string %q", w, id, again, strs[id])
		}
	}
	for i, w := range words {
		if got := strs[wantIDs[i]]; got != w {
			t.Errorf("string %d is %.10q, want %.10q", wantIDs[i], got, w)
		}
	}
	if got, want := len(strs), 5+40000; got != want {
		t.Errorf("%d strings, want %d", got, want)
	}
}
