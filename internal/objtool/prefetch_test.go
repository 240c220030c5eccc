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
// address up when asked. Each answer is given once: when every address
// was asked about, none is kept, and asking again gives the same.
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
			kept := func() *answers {
				if e, ok := prefetched.foreignFor(c.path); ok {
					return &e.answers
				}
				return &prefetched.load(c.path).answers
			}()
			if found := len(kept.list); found != 1 {
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
			for round := range 2 {
				for _, a := range addrs {
					got, err1 := f1.SourceLine(a)
					want, err2 := f2.SourceLine(a)
					if (err1 == nil) != (err2 == nil) || !slices.Equal(got, want) {
						t.Fatalf("asked %d times: %#x: after Prefetch %+v, %v; asked %+v, %v", round+1, a, got, err1, want, err2)
					}
				}
				if n := len(kept.list); n != 0 {
					t.Fatalf("asked %d times: %d sets of answers kept, want none", round+1, n)
				}
			}
		})
	}
}

// TestPrefetchAskedAtOnce: SourceLine asked while a Prefetch of the
// binary is under way waits for its answers rather than look the
// address up too: none is left over, found for nothing and kept.
func TestPrefetchAskedAtOnce(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "bin", "libleaf.so")
	addrs := sampleCode(t, path, 3000)
	tool := New(Options{})
	defer tool.Close()
	tool.Prefetch(path, 0, ^uint64(0), 0, "", addrs)
	f, err := tool.Open(path, 0, ^uint64(0), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if _, err := f.SourceLine(a); err != nil {
			t.Fatalf("%#x: %v", a, err)
		}
	}
	tool.prefetching.Wait()
	if n := len(tool.load(path).answers.list); n != 0 {
		t.Errorf("%d sets of answers kept after every address was asked about, want none", n)
	}
}
