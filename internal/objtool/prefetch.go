package objtool

import (
	"bytes"
	"debug/elf"
	"os"
	"runtime"
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
// Nothing is reported: a file that cannot be read is left to those
// calls, which report it as usual. The answers are the same either way.
func (t *Tool) Prefetch(name string, start, limit, offset uint64, relocationSymbol string, addrs []uint64) {
	if len(addrs) < minPrefetch {
		return
	}
	if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
		return
	}
	if magic, err := readMagic(name); err != nil || !bytes.Equal(magic, []byte(elf.ELFMAG)) {
		return
	}
	if b := t.load(name); b.err != nil {
		return
	}
	addrs = append([]uint64(nil), addrs...)
	t.prefetching.Add(1)
	go func() {
		defer t.prefetching.Done()
		f, err := t.Open(name, start, limit, offset, relocationSymbol)
		if err != nil {
			return
		}
		of := f.(*objFile)
		idx, err := t.indexOf(of.b)
		if err != nil {
			return
		}
		var base uint64
		found := false
		for _, a := range addrs {
			if base, err = of.baseFor(a); err == nil {
				found = true
				break
			}
		}
		if !found {
			return
		}
		workers := min(runtime.GOMAXPROCS(0), len(addrs)/minPrefetch+1)
		results := make([]map[uint64][]gdriver.Frame, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := make(map[uint64][]gdriver.Frame, len(addrs)/workers+1)
				for i := w; i < len(addrs); i += workers {
					x := addrs[i] - base
					frames, err := idx.SourceLine(x)
					if err != nil {
						continue
					}
					m[x] = toDriverFrames(frames)
				}
				results[w] = m
			}()
		}
		wg.Wait()
		of.b.cacheMu.Lock()
		if of.b.cache == nil {
			of.b.cache = make(map[uint64][]gdriver.Frame, len(addrs))
		}
		for _, m := range results {
			for x, fr := range m {
				of.b.cache[x] = fr
			}
		}
		of.b.cacheMu.Unlock()
	}()
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

// cached returns the frames Prefetch found for the file address x.
func (b *binFile) cached(x uint64) ([]gdriver.Frame, bool) {
	b.cacheMu.RLock()
	defer b.cacheMu.RUnlock()
	fr, ok := b.cache[x]
	return fr, ok
}
