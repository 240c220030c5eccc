package objtool

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPrefetchSameAnswers: after Prefetch, SourceLine answers from what
// it found, for 64-bit ELF and for the formats read with the standard
// library alike, and the answers are those of a tool that looked each
// address up when asked.
func TestPrefetchSameAnswers(t *testing.T) {
	for _, c := range []struct {
		path   string
		sample func(*testing.T, string, int) []uint64
	}{
		{filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "bin", "libleaf.so"), sampleCode},
		{"testdata/foreign/elf32", sampleForeign},
		{"testdata/foreign/pe.exe", sampleForeign},
		{"testdata/foreign/macho-exe", sampleForeign},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			addrs := c.sample(t, c.path, 3000)
			if len(addrs) < minPrefetch {
				t.Fatalf("%d addresses: fewer than Prefetch takes", len(addrs))
			}
			prefetched, asked := New(Options{}), New(Options{})
			defer prefetched.Close()
			defer asked.Close()
			prefetched.Prefetch(c.path, 0, ^uint64(0), 0, "", addrs)
			prefetched.prefetching.Wait()
			found := 0
			if e, ok := prefetched.foreignFor(c.path); ok {
				found = len(e.answers.list)
			} else {
				found = len(prefetched.load(c.path).answers.list)
			}
			if found != 1 {
				t.Fatalf("Prefetch recorded %d sets of answers, want 1", found)
			}
			f1, err := prefetched.Open(c.path, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			f2, err := asked.Open(c.path, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range addrs {
				got, err1 := f1.SourceLine(a)
				want, err2 := f2.SourceLine(a)
				if (err1 == nil) != (err2 == nil) || !slices.Equal(got, want) {
					t.Fatalf("%#x: after Prefetch %+v, %v; asked %+v, %v", a, got, err1, want, err2)
				}
			}
		})
	}
}
