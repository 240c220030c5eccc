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
	var cache *answers // where the answers go
	e, foreign := t.foreignFor(name)
	if foreign {
		cache = &e.answers
	} else {
		if magic, err := readMagic(name); err != nil || !bytes.Equal(magic, []byte(elf.ELFMAG)) {
			return
		}
		b := t.load(name)
		if b.err != nil {
			return
		}
		cache = &b.answers
	}
	addrs = append([]uint64(nil), addrs...)
	t.prefetching.Add(1)
	cache.begin()
	go func() {
		defer t.prefetching.Done()
		var found *prefetched
		defer func() { cache.end(found) }()
		var (
			baseFor func(uint64) (uint64, error)
			idx     lineSource
		)
		if foreign {
			f, err := t.openForeignFile(e, start, limit, offset)
			if err != nil {
				return
			}
			if idx, err = t.foreignLines(e); err != nil || idx == nil {
				return
			}
			baseFor = f.(*foreignFile).baseFor
		} else {
			f, err := t.Open(name, start, limit, offset, relocationSymbol)
			if err != nil {
				return
			}
			of, ok := f.(*objFile)
			if !ok {
				return
			}
			if idx, err = t.linesOf(of.b); err != nil {
				return
			}
			baseFor = of.baseFor
		}
		for _, a := range addrs {
			if base, err := baseFor(a); err == nil {
				found = lookUpAll(idx, addrs, base)
				return
			}
		}
	}()
}

// lookUpAll returns the frames of addrs, less base, in idx; addrs is
// its to change. In address order, each worker takes a run of
// neighbouring addresses: their units, nodes and line rows are close
// together in the index, which makes each lookup about twice as fast as
// in the profile's order.
func lookUpAll(idx lineSource, addrs []uint64, base uint64) *prefetched {
	xs := addrs
	for i := range xs {
		xs[i] -= base
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	frames := make([][]gdriver.Frame, len(xs))
	workers := min(runtime.GOMAXPROCS(0), len(xs)/minPrefetch+1)
	found := make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*len(xs)/workers, (w+1)*len(xs)/workers
			for i := lo; i < hi; i++ {
				if fr, err := idx.SourceLine(xs[i]); err == nil {
					frames[i] = toDriverFrames(fr)
					found[w]++
				}
			}
		}()
	}
	wg.Wait()
	p := &prefetched{xs: xs, frames: frames}
	for _, n := range found {
		p.left += n
	}
	return p
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
// empty and ready to use. Each answer is given once: pprof's symbolizer
// asks about each address of a mapping once, and what it was given is
// then garbage as soon as it is taken, not when the run ends (a million
// addresses' frames are 100 MB and more). An address asked about again
// is looked up in the index, with the same answer. An address asked
// about while a Prefetch of the binary is under way waits for it rather
// than be looked up twice, and leave an answer nobody takes.
type answers struct {
	mu      sync.Mutex
	done    sync.Cond     // signalled when pending drops to 0; its L is mu
	pending int           // Prefetch calls under way
	list    []*prefetched // the answers of each Prefetch not all taken yet
}

// begin records a Prefetch under way, which calls end when it is over.
func (c *answers) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending++
}

// end records the answers of a Prefetch that begin announced, if it
// found any (p is not nil).
func (c *answers) end(p *prefetched) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p != nil && p.left > 0 {
		c.list = append(c.list, p)
	}
	if c.pending--; c.pending == 0 && c.done.L != nil {
		c.done.Broadcast()
	}
}

// take returns the frames Prefetch found for the file address x, once
// the Prefetch calls under way are over, and forgets them.
func (c *answers) take(x uint64) ([]gdriver.Frame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.pending > 0 {
		if c.done.L == nil {
			c.done.L = &c.mu
		}
		c.done.Wait()
	}
	for k, p := range c.list {
		if i, ok := slices.BinarySearch(p.xs, x); ok && p.frames[i] != nil {
			fr := p.frames[i]
			p.frames[i] = nil
			if p.left--; p.left == 0 {
				c.list = slices.Delete(c.list, k, k+1)
			}
			return fr, true
		}
	}
	return nil, false
}

// prefetched holds the answers of one Prefetch.
type prefetched struct {
	xs     []uint64          // file addresses, ascending
	frames [][]gdriver.Frame // frames[i] for xs[i]; nil if the lookup failed or the answer was taken
	left   int               // how many frames are not nil
}
