package objtool

import (
	"bytes"
	"debug/elf"
	"os"
	"runtime"
	"slices"
	"sync"

	gdriver "github.com/google/pprof/driver"
)

// minPrefetch is the fewest addresses worth a Prefetch: below it, pprof's
// own one-at-a-time queries cost less than starting the workers.
const minPrefetch = 256

// Prefetch starts, in the background, the work pprof is about to ask for
// the binary name mapped at [start, limit) from file offset offset: it
// builds the binary's index and looks up the frames of addrs (run-time
// addresses of the mapping) on every CPU, so that the SourceLine calls
// pprof's symbolizer then makes one at a time find their answers ready.
// It does so for the files the object tool reads itself: 64-bit ELF, and
// Mach-O, PE and 32-bit ELF (see openForeign). Nothing is reported: a
// file that cannot be read is left to those calls, which report it as
// usual. The answers are the same either way.
func (t *Tool) Prefetch(name string, start, limit, offset uint64, relocationSymbol string, addrs []uint64) {
	if len(addrs) < minPrefetch {
		return
	}
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
		return
	}
	e, foreign := t.foreignFor(name)
	if !foreign {
		if magic, err := readMagic(name); err != nil || !bytes.Equal(magic, []byte(elf.ELFMAG)) {
			return
		}
		if b := t.load(name); b.err != nil {
			return
		}
	}
	addrs = append([]uint64(nil), addrs...)
	t.prefetching.Add(1)
	go func() {
		defer t.prefetching.Done()
		var (
			baseFor func(uint64) (uint64, error)
			idx     lineSource
			cache   *answers
		)
		if foreign {
			f, err := t.openForeignFile(e, start, limit, offset)
			if err != nil {
				return
			}
			if idx, err = t.foreignLines(e); err != nil || idx == nil {
				return
			}
			baseFor, cache = f.(*foreignFile).baseFor, &e.answers
		} else {
			f, err := t.Open(name, start, limit, offset, relocationSymbol)
			if err != nil {
				return
			}
			of := f.(*objFile)
			if idx, err = t.linesOf(of.b); err != nil {
				return
			}
			baseFor, cache = of.baseFor, &of.b.answers
		}
		var base uint64
		found := false
		for _, a := range addrs {
			var err error
			if base, err = baseFor(a); err == nil {
				found = true
				break
			}
		}
		if found {
			cache.add(lookUpAll(idx, addrs, base))
		}
	}()
}

// lookUpAll returns the frames of addrs, less base, in idx. In address
// order, each worker takes a run of neighbouring addresses: their units,
// nodes and line rows are close together in the index, which makes each
// lookup about twice as fast as in the profile's order.
func lookUpAll(idx lineSource, addrs []uint64, base uint64) prefetched {
	xs := make([]uint64, len(addrs))
	for i, a := range addrs {
		xs[i] = a - base
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	frames := make([][]gdriver.Frame, len(xs))
	workers := min(runtime.GOMAXPROCS(0), len(xs)/minPrefetch+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*len(xs)/workers, (w+1)*len(xs)/workers
			for i := lo; i < hi; i++ {
				if fr, err := idx.SourceLine(xs[i]); err == nil {
					frames[i] = toDriverFrames(fr)
				}
			}
		}()
	}
	wg.Wait()
	return prefetched{xs, frames}
}

// Warm starts building, in the background, the index of the binary name,
// which pprof is about to ask about: for a profile still being read (a
// perf.data recording, whose samples name their files as they come), so
// that the index is built on one CPU while the rest is read on the other.
// A file that cannot be read is left to the calls that need it, which
// report it as usual.
func (t *Tool) Warm(name string) {
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
		return
	}
	magic, err := readMagic(name)
	if err != nil {
		return
	}
	isELF := bytes.Equal(magic, []byte(elf.ELFMAG))
	if !isELF && formatOf(magic) == "" {
		return
	}
	t.prefetching.Add(1)
	go func() {
		defer t.prefetching.Done()
		if isELF {
			if b := t.load(name); b.err == nil {
				t.indexOf(b)
				return
			}
		}
		if e, ok := t.foreignFor(name); ok {
			t.foreignIndex(e)
		}
	}()
}

// answers holds what Prefetch found in one binary; its zero value is
// empty and ready to use.
type answers struct {
	mu   sync.RWMutex
	list []prefetched // the answers of each Prefetch
}

// add records the answers of one Prefetch.
func (c *answers) add(p prefetched) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, p)
}

// cached returns the frames Prefetch found for the file address x.
func (c *answers) cached(x uint64) ([]gdriver.Frame, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range c.list {
		if i, ok := slices.BinarySearch(p.xs, x); ok && p.frames[i] != nil {
			return p.frames[i], true
		}
	}
	return nil, false
}

// prefetched holds the answers of one Prefetch.
type prefetched struct {
	xs     []uint64          // file addresses, ascending
	frames [][]gdriver.Frame // frames[i] for xs[i]; nil if the lookup failed
}
