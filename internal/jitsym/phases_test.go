package jitsym

import (
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// TestPhaseErrors: the line tables are read while .debug_info is
// walked, but a broken object gets the error the phases would meet one
// after the other: of a broken unit header and a broken line table, the
// header's (the walk's), even though the unit before it had its line
// table read and failed meanwhile; the line table's once the walk
// succeeds.
func TestPhaseErrors(t *testing.T) {
	path := filepath.Join("testdata", "multi-gcc-ld-r.o") // several units
	f, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := f.DebugLoader()
	if err != nil {
		t.Fatal(err)
	}
	intact := mapSections{}
	for _, name := range []string{".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
		".debug_rnglists", ".debug_ranges", ".debug_addr", ".debug_str_offsets"} {
		data, err := l.Section(name)
		if err != nil {
			t.Fatal(err)
		}
		intact[name] = data
	}
	bo := f.ByteOrder
	info := intact[".debug_info"]
	second := 4 + int(bo.Uint32(info)) // the second unit's header
	if second+6 > len(info) {
		t.Fatalf("%s has one unit", path)
	}
	badHeader := func(m mapSections) {
		b := append([]byte(nil), m[".debug_info"]...)
		bo.PutUint16(b[second+4:], 99) // its version
		m[".debug_info"] = b
	}
	badLine := func(m mapSections) {
		b := append([]byte(nil), m[".debug_line"]...)
		bo.PutUint32(b, 0xffffff00) // the first table's length
		m[".debug_line"] = b
	}
	for _, tc := range []struct {
		name   string
		breaks []func(mapSections)
		want   string // in the error; "" for none
	}{
		{name: "intact"},
		{name: "unit header", breaks: []func(mapSections){badHeader}, want: "version 99"},
		{name: "line table", breaks: []func(mapSections){badLine}, want: "line table length"},
		{name: "both", breaks: []func(mapSections){badHeader, badLine}, want: "version 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := maps.Clone(intact)
			for _, b := range tc.breaks {
				b(m)
			}
			for range 5 { // the same whichever goroutine ends first
				s, err := NewFromSections(path, bo, m, nil)
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("NewFromSections: %v", err)
				case tc.want == "" && len(s.units) < 2:
					t.Fatalf("%d units indexed", len(s.units))
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path)):
					t.Fatalf("NewFromSections: error %v, want one naming %s and saying %q", err, path, tc.want)
				}
			}
		})
	}
}

// TestCollectsLargeBuilds: New runs a collection once the index of an
// object whose DWARF is larger than the bound is built, and none for a
// smaller one (with the collector otherwise off, so that the count is
// New's own).
func TestCollectsLargeBuilds(t *testing.T) {
	f, err := elfrel.Open(filepath.Join("testdata", "inline-gcc-dwarf5.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, tc := range []struct {
		collect uint64
		want    uint32
	}{
		{collect: 0, want: 1},              // any DWARF is larger
		{collect: math.MaxUint64, want: 0}, // none is
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := newWithDebug(f, nil, Links{}, tuning{collect: tc.collect, lazyMin: lazyMinInfo, maxUnits: lazyMaxUnits}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := after.NumForcedGC - before.NumForcedGC; got != tc.want {
			t.Errorf("bound %d: %d collections, want %d", tc.collect, got, tc.want)
		}
	}
}
