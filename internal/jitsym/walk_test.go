package jitsym

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestParallelWalkSameIndex: walking .debug_info in runs of units on
// several goroutines and joining the results gives exactly the index one
// walk gives, however the units are split: on libstdc++'s -g build and
// libc's detached debug file (GCC's DWARF 5, hundreds of units, range
// lists, inlined subroutines, compressed sections in libc's).
func TestParallelWalkSameIndex(t *testing.T) {
	files := []string{libstdcxxDebug, libcDebugFile(t)}
	if _, err := os.Stat(libstdcxxDebug); err != nil {
		testenv.Missing(t, libstdcxxDebug, "apt-get install libstdc++6-12-dbg")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := elfrel.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			index := func(walkers int, walkMin uint64) *Symbolizer {
				l, err := f.DebugLoader()
				if err != nil {
					t.Fatal(err)
				}
				s := &Symbolizer{name: file}
				if err := buildWith(s, f.ByteOrder, l, false, walkers, walkMin); err != nil {
					t.Fatalf("%d walkers: %v", walkers, err)
				}
				return s
			}
			want := index(1, minWalkBytes)
			if len(want.units) < 8 || len(want.nodes) == 0 {
				t.Fatalf("%d units, %d nodes: not a test of splitting", len(want.units), len(want.nodes))
			}
			for _, c := range []struct {
				walkers int
				walkMin uint64
			}{{2, 1}, {3, 1}, {7, 1}, {64, 1}, {4, minWalkBytes}} {
				if got := index(c.walkers, c.walkMin); !reflect.DeepEqual(got, want) {
					t.Errorf("%d walkers (at least %d bytes each): the index differs from one walk's", c.walkers, c.walkMin)
				}
			}
		})
	}
}

// libcDebugFile returns the path of libc's detached debug file, which
// Debian's libc6-dbg installs under its build ID.
func libcDebugFile(t *testing.T) string {
	f, err := elfrel.Open("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id, err := f.BuildID()
	if err != nil || len(id) < 2 {
		t.Fatalf("libc's build ID: %x, %v", id, err)
	}
	path := fmt.Sprintf("/usr/lib/debug/.build-id/%02x/%x.debug", id[0], id[1:])
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, path, "apt-get install libc6-dbg")
	}
	return path
}

// TestSplitUnits: runs of neighbouring units, each cut once it reaches
// its share of the bytes, never more than asked, than units, or than
// minBytes go into the units' bytes.
func TestSplitUnits(t *testing.T) {
	var hs []unitHeader
	off := uint64(0)
	for _, size := range []uint64{100, 100, 100, 100, 400, 100, 100} {
		hs = append(hs, unitHeader{off: off, end: off + size})
		off += size
	}
	for _, c := range []struct {
		n        int
		minBytes uint64
		want     []int // units per run
	}{
		{1, 1, []int{7}},
		{2, 1, []int{5, 2}},
		{3, 1, []int{4, 1, 2}},
		{2, 600, []int{7}},
		{100, 1, []int{2, 1, 2, 1, 1}},
		{4, 250, []int{3, 2, 1, 1}},
	} {
		runs := splitUnits(hs, c.n, c.minBytes)
		var got []int
		next := 0
		for _, r := range runs {
			if r[0].off != hs[next].off {
				t.Errorf("n=%d: a run starts at unit offset %d, want %d", c.n, r[0].off, hs[next].off)
			}
			next += len(r)
			got = append(got, len(r))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitUnits(n=%d, minBytes=%d) runs of %v units, want %v", c.n, c.minBytes, got, c.want)
		}
	}
	if runs := splitUnits(nil, 4, 1); runs != nil {
		t.Errorf("splitUnits(nil) = %v", runs)
	}
}

// TestChargeSharedPool: walkers drawing their range budget from one pool
// get exactly what it holds between them, whatever the interleaving, and
// each fails once it is gone.
func TestChargeSharedPool(t *testing.T) {
	const total = 10*rangeChunk + 123
	pool := &atomic.Int64{}
	pool.Store(total)
	var charged atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &builder{rangePool: pool}
			r := make([][2]uint64, 7)
			for {
				if _, err := b.charge(r); err != nil {
					charged.Add(int64(len(r)) + b.rangeBudget) // the part of the last charge it had
					return
				}
				charged.Add(int64(len(r)))
			}
		}()
	}
	wg.Wait()
	if got := charged.Load(); got != total {
		t.Errorf("walkers charged %d ranges between them, want the pool's %d", got, total)
	}
}
