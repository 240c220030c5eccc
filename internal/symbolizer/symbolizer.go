// Package symbolizer fills in the functions, files and lines of the
// locations the JIT stage attached to JIT objects: each object is opened
// once per run, objects are symbolized concurrently, and the result is
// written into the profile exactly as pprof's own symbolizer would write
// it, so that pprof leaves these mappings alone afterwards.
package symbolizer

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	gdriver "github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/oncemap"
	"github.com/jitpprof/pprof/internal/safename"
	jprofile "github.com/jitpprof/pprof/profile"
)

// An Object answers source-line queries for one object file, with
// absolute addresses. It must be safe for concurrent use.
type Object interface {
	// SourceLine returns the frames at addr, leaf first: several when
	// code was inlined, none when addr is in no known function. It is
	// called from several goroutines at once.
	SourceLine(addr uint64) ([]gdriver.Frame, error)
	// Close releases the object.
	Close() error
}

// An Opener opens a JIT object for symbolization.
type Opener func(obj *jprofile.Object) (Object, error)

// Cache opens each object at most once and keeps it open until Close, so
// that the profiles of one run (several sources, -base) share the work.
type Cache struct {
	open    Opener
	objects oncemap.Map[string, opened]
}

// opened is the result of opening one object.
type opened struct {
	obj Object
	err error
}

// NewCache returns a Cache that opens objects with open.
func NewCache(open Opener) *Cache {
	return &Cache{open: open}
}

// object returns the opened object, opening it on first use (objects are
// told apart by path). It reports whether this call opened it.
func (c *Cache) object(jo *jprofile.Object) (obj Object, first bool, err error) {
	o, first := c.objects.Get(jo.Path, func() opened {
		obj, err := c.open(jo)
		return opened{obj, err}
	})
	return o.obj, first, o.err
}

// Close closes every object opened.
func (c *Cache) Close() error {
	var first error
	for _, o := range c.objects.Drain() {
		if o.obj != nil {
			if err := o.obj.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Progress counts how far a Symbolize call has got: Symbolize sets the
// totals before it starts and advances the counts as it goes. Done may be
// called from any goroutine meanwhile.
type Progress struct {
	objects, objectsDone     atomic.Int64
	addresses, addressesDone atomic.Int64
}

// Done returns how many objects and addresses are symbolized so far, and
// out of how many.
func (p *Progress) Done() (objects, ofObjects, addresses, ofAddresses int) {
	return int(p.objectsDone.Load()), int(p.objects.Load()), int(p.addressesDone.Load()), int(p.addresses.Load())
}

// An OpenError reports an object that could not be opened; its mappings
// are left unsymbolized, for pprof's own symbolizer to try.
type OpenError struct {
	Path string
	Err  error
}

// Error returns "PATH: what was wrong". A reader's error that names the
// same file itself (elfrel's, jitdump's) gives only its reason, so the
// path is not said twice.
func (e *OpenError) Error() string {
	msg := e.Err.Error()
	if r, ok := e.Err.(interface {
		FileName() string
		Reason() string
	}); ok && r.FileName() == e.Path {
		msg = r.Reason()
	}
	return safename.String(e.Path) + ": " + msg
}

// Unwrap returns the underlying error.
func (e *OpenError) Unwrap() error { return e.Err }

// Symbolize symbolizes the locations of the given JIT mappings of p,
// concurrently (at most GOMAXPROCS objects at a time), and adds the
// functions to p in a deterministic order. It returns one *OpenError per
// object that failed to open in this call (an object that failed in an
// earlier call of the same Cache is skipped silently). If progress is not
// nil, Symbolize sets its totals and advances it as it goes. If name is
// not nil, it gives each function's Name from its system name (the
// demangling pprof's symbolizer would do afterwards, done here on every
// CPU); otherwise the Name is the system name.
func (c *Cache) Symbolize(p *profile.Profile, jms []jprofile.JITMapping, progress *Progress, name func(string) string) []error {
	type result struct {
		stacks []stack // per location of the mapping
		err    error
	}
	results := make([]result, len(jms))
	if progress == nil {
		progress = &Progress{}
	}
	progress.objects.Store(int64(len(jms)))
	for _, jm := range jms {
		progress.addresses.Add(int64(len(jm.Locations)))
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, jm := range jms {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			obj, first, err := c.object(jm.Object)
			if err != nil {
				if first {
					results[i].err = &OpenError{Path: jm.Object.Path, Err: err}
				}
			} else {
				results[i].stacks = lookUp(obj, jm.Locations, progress, name)
			}
			progress.objectsDone.Add(1)
		}()
	}
	wg.Wait()

	add := newFunctionAdder(p)
	// The locations' lines, cut from one array.
	frames := 0
	for _, r := range results {
		for _, st := range r.stacks {
			frames += len(st.frames)
		}
	}
	lines := make([]profile.Line, frames)
	var errs []error
	for i, jm := range jms {
		if results[i].err != nil {
			errs = append(errs, results[i].err)
			continue
		}
		for k, st := range results[i].stacks {
			n := len(st.frames)
			apply(jm.Mapping, jm.Locations[k], st, lines[:n:n], add)
			lines = lines[n:]
		}
	}
	return errs
}

// minSplit is the fewest locations of one object worth splitting among
// workers.
const minSplit = 512

// stack is the frames of one location, leaf first, and the Name of the
// function of each (nil if the names are the system names).
type stack struct {
	frames []gdriver.Frame
	names  []string
}

// lookUp returns the frames of each location of locs in obj, and the
// Names of their functions if name is not nil. It looks them up in
// address order, many of them on as many workers as there are CPUs, each
// a run of neighbouring addresses: their units, nodes and line rows lie
// close together in the object's index, which makes each lookup about
// twice as fast as in the profile's order. A failed lookup leaves the
// location unsymbolized, as pprof does when its symbolizer has no answer.
func lookUp(obj Object, locs []*profile.Location, progress *Progress, name func(string) string) []stack {
	order := make([]int, len(locs))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(locs[x].Address, locs[y].Address) })
	stacks := make([]stack, len(locs))
	workers := min(runtime.GOMAXPROCS(0), len(locs)/minSplit+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			named := map[string]string{} // a function has many addresses
			for _, k := range order[w*len(order)/workers : (w+1)*len(order)/workers] {
				st := &stacks[k]
				st.frames, _ = obj.SourceLine(locs[k].Address)
				if name != nil && len(st.frames) > 0 {
					st.names = make([]string, len(st.frames))
					for i, f := range st.frames {
						n, ok := named[f.Func]
						if !ok {
							n = name(f.Func)
							named[f.Func] = n
						}
						st.names[i] = n
					}
				}
				progress.addressesDone.Add(1)
			}
		}()
	}
	wg.Wait()
	return stacks
}

// apply writes the frames of one location into it, as lines, and records
// on its mapping what kind of information was found, as pprof's
// symbolizer does.
func apply(m *profile.Mapping, l *profile.Location, st stack, lines []profile.Line, add functionAdder) {
	if len(st.frames) == 0 {
		return
	}
	l.Line = lines
	l.IsFolded = false
	for i, f := range st.frames {
		m.HasFunctions = m.HasFunctions || f.Func != ""
		m.HasFilenames = m.HasFilenames || f.File != ""
		m.HasLineNumbers = m.HasLineNumbers || f.Line != 0
		name := f.Func
		if st.names != nil {
			name = st.names[i]
		}
		fn := add(name, f.Func, f.File, int64(f.StartLine))
		l.Line[i] = profile.Line{Function: fn, Line: int64(f.Line), Column: int64(f.Column)}
	}
	m.HasInlineFrames = true
}

// A functionAdder returns the Function of a profile with the given name,
// system name, file and start line, adding it if it has none.
type functionAdder func(name, systemName, filename string, startLine int64) *profile.Function

// newFunctionAdder returns a functionAdder for the functions it adds to p.
func newFunctionAdder(p *profile.Profile) functionAdder {
	type key struct {
		name, systemName, filename string
		startLine                  int64
	}
	seen := map[key]*profile.Function{}
	var maxID uint64
	for _, f := range p.Function {
		maxID = max(maxID, f.ID)
	}
	return func(name, systemName, filename string, startLine int64) *profile.Function {
		k := key{name, systemName, filename, startLine}
		if old := seen[k]; old != nil {
			return old
		}
		maxID++
		f := &profile.Function{ID: maxID, Name: name, SystemName: systemName, Filename: filename, StartLine: startLine}
		seen[k] = f
		p.Function = append(p.Function, f)
		return f
	}
}
