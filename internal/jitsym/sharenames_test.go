package jitsym

import (
	"strings"
	"testing"
)

// TestShareNames: names that end at the same byte are written once, the
// shorter ones as suffixes of the longest; names that are copies of
// their own are written each; every symbol keeps its name.
func TestShareNames(t *testing.T) {
	table := "\x00_ZN3foo3barEv\x00main\x00" + strings.Repeat("x", 1000) + "\x00"
	sub := func(off int) string { // the NUL-terminated name at off
		return table[off : off+strings.IndexByte(table[off:], 0)]
	}
	long := strings.Index(table, "xxx")
	names := []string{
		sub(1), sub(4), sub(9), sub(16), // a name and its tails
		sub(16), sub(long), sub(long), sub(long + 10), // aliases of one name
		strings.Clone("main"), strings.Clone("main"), "", // copies, and no name
	}
	cs := make([]cand, len(names))
	s := &Symbolizer{syms: make([]symbol, len(names))}
	for i, n := range names {
		cs[i] = cand{name: n}
	}
	if err := s.shareNames("x", cs); err != nil {
		t.Fatal(err)
	}
	for i, want := range names {
		if got := s.symbolName(&s.syms[i]); got != want {
			t.Errorf("symbol %d: name %q, want %q", i, got, want)
		}
	}
	// Written: _ZN3foo3barEv, "ain" (the longest of its end named), the
	// long name, main and main again (copies), and the empty name, each
	// with its NUL.
	if want := len("_ZN3foo3barEv") + len("ain") + 1000 + 2*len("main") + 6; len(s.symNames) != want {
		t.Errorf("%d bytes of names, want %d", len(s.symNames), want)
	}
}
