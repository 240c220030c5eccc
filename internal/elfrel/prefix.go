package elfrel

import (
	"fmt"
	"io"
	"slices"
)

// DebugLoaderWith is [File.DebugLoader] that also loads the sections
// named extra (".debug_aranges", say), which DebugLoader leaves out.
func (f *File) DebugLoaderWith(extra ...string) (*DebugLoader, error) {
	return f.debugLoader(func(name string) (string, bool) {
		if slices.Contains(extra, name) {
			return name, true
		}
		return loadedDebug(name)
	}, ".debug_info")
}

// A Prefix reads the start of one section, as far as its caller needs
// it: a compressed section is decompressed only up to the last byte
// asked for (a zlib or Zstandard stream cannot be entered in the
// middle), so that a reader that needs one unit near the start of a
// large .debug_info does not pay for the rest. Its methods must not be
// called from several goroutines at once.
type Prefix struct {
	l    *DebugLoader
	m    *debugMember
	r    io.Reader // the section's contents from len(data) on
	z    *inflater // or, for most zlib streams, their decoder into data
	data []byte    // what was read, with the section's size as capacity
	err  error     // sticky: the read that failed
}

// Prefix returns a reader of the start of the named section, which must
// be one section header without relocations (as in a linked binary or
// its debug file). The section's whole decompressed size is taken from
// the loader's budget at once. It returns nil, and no error, if the
// object has no such section.
func (l *DebugLoader) Prefix(name string) (*Prefix, error) {
	ds := l.sections[name]
	if ds == nil {
		return nil, nil
	}
	if len(ds.members) != 1 || len(ds.members[0].relocs) > 0 {
		return nil, &FormatError{File: l.file, Section: name, Off: -1, Msg: "a section of several parts or with relocations cannot be read in part"}
	}
	m := &ds.members[0]
	p := &Prefix{l: l, m: m}
	switch {
	case m.zoff == 0:
		p.r = io.NewSectionReader(l.r, int64(m.offset), int64(m.size))
	case m.zstd:
		if err := l.take(name, m.size); err != nil {
			return nil, err
		}
		var err error
		if p.r, err = l.unzstd(m); err != nil {
			return nil, &FormatError{File: l.file, Section: m.name, Off: 0, Msg: "cannot decompress the section", Err: err}
		}
	default:
		if err := l.take(name, m.size); err != nil {
			return nil, err
		}
		var err error
		if m.zsize <= maxWholeZ {
			p.data = make([]byte, 0, m.size)
			p.z, err = l.inflater(m, p.data[:m.size])
		} else {
			p.r, err = l.zlibStream(m)
		}
		if err != nil {
			return nil, &FormatError{File: l.file, Section: m.name, Off: 0, Msg: "cannot decompress the section", Err: err}
		}
	}
	if p.data == nil {
		p.data = make([]byte, 0, m.size)
	}
	return p, nil
}

// Size returns the size of the whole section.
func (p *Prefix) Size() uint64 { return p.m.size }

// Read returns the first n bytes of the section (all of it if it has
// fewer), reading what was not read yet. The slice is shared by every
// call: the caller must not modify it.
func (p *Prefix) Read(n uint64) ([]byte, error) {
	n = min(n, p.m.size)
	if uint64(len(p.data)) >= n {
		return p.data[:n], nil
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.z != nil {
		k, err := p.z.inflate(int(n))
		p.data = p.data[:k]
		if err != nil {
			p.err = &FormatError{File: p.l.file, Section: p.m.name, Off: 0, Msg: "cannot decompress the section", Err: err}
			return nil, p.err
		}
		return p.data[:n], nil
	}
	// Read a little ahead: callers ask for one unit after another.
	want := min(max(n, uint64(len(p.data))+64<<10), p.m.size)
	have := len(p.data)
	k, err := io.ReadFull(p.r, p.data[have:want])
	p.data = p.data[:have+k]
	if err != nil {
		p.err = &FormatError{File: p.l.file, Section: p.m.name, Off: int64(have + k), Msg: fmt.Sprintf("cannot read %d bytes of the section", want), Err: err}
		return nil, p.err
	}
	if want == p.m.size && p.m.zoff != 0 {
		var one [1]byte
		if k, _ := p.r.Read(one[:]); k != 0 {
			p.err = &FormatError{File: p.l.file, Section: p.m.name, Off: 0, Msg: "cannot decompress the section",
				Err: fmt.Errorf("more than the %d bytes its header claims", want)}
			return nil, p.err
		}
	}
	return p.data[:n], nil
}
