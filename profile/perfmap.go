package profile

import (
	"fmt"
	"os"
	"sync"

	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/regfile"
)

// loadPerfMap reads a perf map's ranges into an Object: the file as it
// is when opened (a runtime may be appending to it), if it is a regular
// file and not mostly the holes of a sparse file.
func loadPerfMap(path string, o loadOptions) (*Object, error) {
	f, size, err := openSource(path, o)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	defer f.Close()
	if err := notSparse(f, size); err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	m, err := perfmap.ParseAt(f, size)
	if err != nil {
		return nil, &ObjectError{File: path, Err: err}
	}
	obj := &Object{Kind: PerfMap, Path: path, data: &perfMapData{path: path, m: m, names: map[int64]Frame{}}}
	n := 0
	for range m.All() {
		n++
	}
	obj.Sections = make([]Section, 0, n)
	for start, end := range m.All() {
		obj.Sections = append(obj.Sections, Section{Start: start, Size: end - start})
	}
	st := m.Stats
	if st.Malformed > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d lines are not START SIZE NAME (the first is line %d); they are ignored", st.Malformed, st.FirstBad))
	}
	if st.Wrapping > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d entries wrap around the address space; they are ignored", st.Wrapping))
	}
	if st.Overlaps > 0 {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%d entries overlap earlier ones; where they do, the entry later in the file wins", st.Overlaps))
	}
	if len(obj.Sections) == 0 {
		return nil, &ObjectError{File: path, Err: fmt.Errorf("no code ranges (of %d entries)", st.Entries)}
	}
	return obj, nil
}

// perfMapData is what a perf map keeps: where each entry's name is in
// the file, which is opened again when a name is first asked for (a
// perf map is an append log: what Load read is still there), and the
// names read so far.
type perfMapData struct {
	path string
	m    *perfmap.Map
	file lazyFile

	mu    sync.Mutex
	names map[int64]Frame // by the names' offsets
}

func (d *perfMapData) frames() (FrameSource, error) {
	if _, err := d.file.open(d.path); err != nil {
		return nil, &ObjectError{File: d.path, Err: err}
	}
	return d, nil
}

// Frames returns the frame of addr: one, or none if no entry covers addr
// (or its name cannot be read back).
func (d *perfMapData) Frames(addr uint64) []Frame {
	seg, ok := d.m.Lookup(addr)
	if !ok {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.names[seg.NameOff]
	if !ok {
		fd, err := d.file.open(d.path)
		if err != nil {
			return nil
		}
		name, err := d.m.Name(fd, seg)
		if err != nil {
			return nil
		}
		f = NameFrame(name)
		d.names[seg.NameOff] = f
	}
	return []Frame{f}
}

func (d *perfMapData) callFrameInfo(uint64) (*CallFrameInfo, error) { return nil, nil }
func (d *perfMapData) code() codeData                               { return nil }
func (d *perfMapData) timeline() timeline                           { return nil }
func (d *perfMapData) close() error                                 { return d.file.close() }

// A lazyFile is a regular file opened on first use, kept open until
// close.
type lazyFile struct {
	once sync.Once
	f    *os.File
	err  error
}

func (l *lazyFile) open(path string) (*os.File, error) {
	l.once.Do(func() { l.f, l.err = regfile.Open(path) })
	return l.f, l.err
}

func (l *lazyFile) close() error {
	l.once.Do(func() { l.err = os.ErrClosed }) // never opened: never will be
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}
