package profile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestRebuildMatchesUpstream checks that, on upstream's own real legacy
// profiles, rebuilding the mappings from the memory map gives exactly
// the profile upstream's parser gives: the merges and heuristics that
// jitpprof drops only matter when an anonymous region touches a file.
func TestRebuildMatchesUpstream(t *testing.T) {
	dir := filepath.Join(testenv.UpstreamDir(t), "profile", "testdata")
	for _, tc := range []struct {
		file    string
		hasMaps bool
	}{
		{file: "cppbench.cpu", hasMaps: true},
		{file: "cppbench.heap", hasMaps: true},
		{file: "cppbench.growth", hasMaps: true},
		{file: "cppbench.contention", hasMaps: true},
		{file: "cppbench.thread", hasMaps: true},
		{file: "cppbench.thread.all", hasMaps: true},
		{file: "cppbench.thread.none", hasMaps: true},
		{file: "go.crc32.cpu", hasMaps: false},
		{file: "go.godoc.thread", hasMaps: false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			want, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			got, maps, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if maps == nil {
				t.Fatal("Parse returned a nil memory map for a legacy profile")
			}
			if gotMaps := len(maps) > 0; gotMaps != tc.hasMaps {
				t.Fatalf("legacyMemoryMap found a map: %v, want %v", gotMaps, tc.hasMaps)
			}
			res, err := Extend(got, maps, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Rebuilt || len(res.JIT) != 0 {
				t.Errorf("Extend = %+v, want Rebuilt and no JIT mapping", res)
			}
			if g, w := got.String(), want.String(); g != w {
				t.Errorf("rebuilt profile differs from upstream's:\n got: %s\nwant: %s", g, w)
			}
		})
	}
}
