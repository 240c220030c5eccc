package objtool

import (
	"path/filepath"
	"runtime/metrics"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestCloseCollects: closing a file after many SourceLine answers (of
// any of the Tool's files, native or foreign) collects the garbage,
// once for files closed in a row; after fewer answers, Close does not.
func TestCloseCollects(t *testing.T) {
	for _, c := range []struct {
		path   string
		sample func(*testing.T, string, int) []uint64
	}{
		{filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "bin", "libleaf.so"), sampleCode},
		{"testdata/foreign/elf32", sampleForeign},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			const after = 300
			addrs := c.sample(t, c.path, after)
			if len(addrs) < after {
				t.Fatalf("%d addresses, want %d", len(addrs), after)
			}
			tool := New(Options{})
			defer tool.Close()
			tool.answered.after = after
			f1, err := tool.Open(c.path, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			f2, err := tool.Open(c.path, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range addrs[:after-1] {
				f1.SourceLine(a)
			}
			if f1.Close(); tool.answered.n.Load() != after-1 {
				t.Errorf("Close after %d answers: count %d, want it kept (no collection)", after-1, tool.answered.n.Load())
			}
			f2.SourceLine(addrs[after-1])
			before := forcedCollections()
			f1.Close()
			if got := forcedCollections() - before; got < 1 || tool.answered.n.Load() != 0 {
				t.Errorf("Close after %d answers: %d collections, count %d; want 1 collection, count 0", after, got, tool.answered.n.Load())
			}
			if tool.answered.closed() {
				t.Errorf("second Close after %d answers collected, want no collection until %d more", after, after)
			}
		})
	}
}

// forcedCollections returns how many garbage collections the program
// forced so far (runtime.GC calls).
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
