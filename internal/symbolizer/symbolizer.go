// Package symbolizer fills in the functions, files and lines of the
// locations the JIT stage attached to JIT objects: each object's frames
// come from the run's JIT object cache (package profile), objects are
// symbolized concurrently, and the result is written into the profile
// exactly as pprof's own symbolizer would write it, so that pprof leaves
// these mappings alone afterwards.
package symbolizer

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/safename"
	"github.com/jitpprof/pprof/internal/srcfile"
	jprofile "github.com/jitpprof/pprof/profile"
)

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

// A Mapping is one JIT mapping to symbolize: its object's frames, the
// mapping the JIT stage made for it and the locations attached to it.
type Mapping struct {
	// Path is the object's file, for messages.
	Path string
	// Object gives the object's frames: a *jprofile.Object, whose
	// FrameSource the run's JIT object cache opens once.
	Object interface {
		FrameSource() (jprofile.FrameSource, error)
	}
	Mapping   *profile.Mapping
	Locations []*profile.Location // in profile order
}

// Mappings returns the mappings of the JIT stage's result jms.
func Mappings(jms []jprofile.JITMapping) []Mapping {
	out := make([]Mapping, len(jms))
	for i, jm := range jms {
		out[i] = Mapping{Path: jm.Object.Path, Object: jm.Object, Mapping: jm.Mapping, Locations: jm.Locations}
	}
	return out
}

// An OpenError reports an object whose frames could not be read; its
// mappings are left unsymbolized, for pprof's own symbolizer to try.
type OpenError struct {
	Path string
	Err  error
}

// Error returns "PATH: what was wrong". A reader's error that names the
// same file itself (elfrel's, jitdump's, the JIT object cache's) gives
// only its reason, so the path is not said twice.
func (e *OpenError) Error() string {
	msg := e.Err.Error()
	if r, ok := e.Err.(interface {
		FileName() string
		Reason() string
	}); ok && r.FileName() == e.Path {
		msg = r.Reason()
	}
	if oe, ok := e.Err.(*jprofile.ObjectError); ok && oe.File == e.Path {
		msg = oe.Err.Error()
	}
	return safename.String(e.Path) + ": " + msg
}

// Unwrap returns the underlying error.
func (e *OpenError) Unwrap() error { return e.Err }

// Symbolize symbolizes the locations of the given JIT mappings of p,
// concurrently (at most GOMAXPROCS objects at a time), and adds the
// functions to p in a deterministic order. Each object's frames come
// from its FrameSource.
// It returns one *OpenError per object whose frames could not be read
// (its locations are left alone), and the *jprofile.ObjectWarning of
// each object whose frames lack something, or name a source file that
// pprof's source views must not open (see package srcfile). If progress
// is not nil, Symbolize sets its totals and advances it as it goes. If
// name is not nil, it gives each function's Name from its system name
// (the demangling pprof's symbolizer would do afterwards, done here on
// every CPU); otherwise the Name is the system name.
func Symbolize(p *profile.Profile, jms []Mapping, progress *Progress, name func(string) string) []error {
	type result struct {
		found   lookup
		err     error
		warning error
		mu      sync.Mutex
		sources []string // what the source file guard said
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
			src, err := jm.Object.FrameSource()
			if src == nil {
				results[i].err = &OpenError{Path: jm.Path, Err: err}
			} else {
				r := &results[i]
				r.warning = err
				// The source files the frames name, as pprof's source
				// views would open them (a jitdump's line table may
				// name a FIFO): see package srcfile.
				files := srcfile.New(func(msg string) {
					r.mu.Lock()
					r.sources = append(r.sources, msg)
					r.mu.Unlock()
				})
				r.found = lookUp(src, jm.Locations, progress, name, files)
			}
			progress.objectsDone.Add(1)
		}()
	}
	wg.Wait()

	funcs := 0
	for i := range results {
		funcs += len(results[i].found.funcs)
	}
	add := newFunctionAdder(p, funcs)
	var errs []error
	for i, jm := range jms {
		r := &results[i]
		if r.warning != nil {
			errs = append(errs, r.warning)
		}
		slices.Sort(r.sources) // in the order of the files, not of the workers
		for _, msg := range r.sources {
			errs = append(errs, &jprofile.ObjectWarning{File: jm.Path, Msg: msg})
		}
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		r.found.flags.apply(jm.Mapping)
		// The profile's Function of each of the lookup's functions, added
		// when first met: in the order of the locations and their frames,
		// as if every frame were added in turn.
		fns := make([]*profile.Function, len(r.found.funcs))
		for k, ids := range r.found.fns {
			l := jm.Locations[k]
			for i, id := range ids {
				if fns[id] == nil {
					fns[id] = add(&r.found.funcs[id])
				}
				l.Line[i].Function = fns[id]
			}
		}
	}
	return errs
}

// minSplit is the fewest locations of one object worth splitting among
// workers.
const minSplit = 512

// A lookup is what lookUp found for the locations of one object: the
// functions of their frames, and what they tell of the mapping. The
// locations' lines are already written, but for their functions.
type lookup struct {
	fns   [][]int32  // per location, the function of each line, an index into funcs
	funcs []function // told apart as pprof's symbolizer does
	flags mappingFlags
}

// mappingFlags is what the frames of a mapping tell of it, as pprof's
// symbolizer records it on the mapping: whether any frame has a
// function, a file or a line, and whether any location has frames.
type mappingFlags struct {
	functions, filenames, lineNumbers, frames bool
}

// merge adds what o found.
func (f *mappingFlags) merge(o mappingFlags) {
	f.functions = f.functions || o.functions
	f.filenames = f.filenames || o.filenames
	f.lineNumbers = f.lineNumbers || o.lineNumbers
	f.frames = f.frames || o.frames
}

// apply records on m what was found, as pprof's symbolizer does.
func (f mappingFlags) apply(m *profile.Mapping) {
	m.HasFunctions = m.HasFunctions || f.functions
	m.HasFilenames = m.HasFilenames || f.filenames
	m.HasLineNumbers = m.HasLineNumbers || f.lineNumbers
	m.HasInlineFrames = m.HasInlineFrames || f.frames
}

// function is a function of the profile as pprof's symbolizer tells them
// apart (see newFunctionAdder).
type function struct {
	name, systemName, filename string
	startLine                  int64
}

// lookUp writes the lines of each location of locs in obj, but for their
// functions, which it returns told apart, named by name if it is not nil
// (Symbolize adds them to the profile afterwards). It looks them up in
// address order, many of them on as many workers as there are CPUs, each
// a run of neighbouring addresses: their units, nodes and line rows lie
// close together in the object's index, which makes each lookup about
// twice as fast as in the profile's order. Each worker tells its frames'
// functions apart itself, so that the serial step after meets each
// function about once per worker, not once per frame. A failed lookup
// leaves the location unsymbolized, as pprof does when its symbolizer
// has no answer. Only what the profile keeps (its lines, 24 bytes a
// frame) and a function index per line outlive a lookup: a million
// locations' frames are garbage as soon as they are written.
func lookUp(obj jprofile.FrameSource, locs []*profile.Location, progress *Progress, name func(string) string, files *srcfile.Guard) lookup {
	order := addressOrder(locs)
	found := lookup{fns: make([][]int32, len(locs))}
	workers := min(runtime.GOMAXPROCS(0), len(locs)/minSplit+1)
	type result struct {
		funcs []function
		flags mappingFlags
	}
	results := make([]result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			r.funcs, r.flags = lookUpRun(obj, locs, order[w*len(order)/workers:(w+1)*len(order)/workers], found.fns, progress, name, files)
		}()
	}
	wg.Wait()
	// One table of functions: each worker's ids move up by the functions
	// of the workers before it.
	found.funcs, found.flags = results[0].funcs, results[0].flags
	for w := 1; w < workers; w++ {
		offset := int32(len(found.funcs))
		found.funcs = append(found.funcs, results[w].funcs...)
		found.flags.merge(results[w].flags)
		for _, k := range order[w*len(order)/workers : (w+1)*len(order)/workers] {
			for i := range found.fns[k] {
				found.fns[k][i] += offset
			}
		}
	}
	return found
}

// lookUpRun looks up the locations locs[k] for k in run, in that order,
// writes their lines but for the functions, whose ids it writes into
// fns[k], and returns the functions those ids index and what the frames
// found.
func lookUpRun(obj jprofile.FrameSource, locs []*profile.Location, run []int, fns [][]int32, progress *Progress, name func(string) string, files *srcfile.Guard) ([]function, mappingFlags) {
	// A function has many addresses: its id by system name, and, for the
	// rare system name of several functions (other files or start
	// lines), by all three.
	type key struct {
		systemName, filename string
		startLine            int64
	}
	byName := map[string]int32{}
	byKey := map[key]int32{}
	var funcs []function
	var flags mappingFlags
	var idBuf []int32          // fns are cut from it
	var lineBuf []profile.Line // the locations' lines are cut from it
	// Neighbouring addresses are often in the same functions: the frames
	// of the last location with any, and their ids.
	var prev []jprofile.Frame
	var prevIDs []int32
	var done int64 // addresses looked up since the last progress update
	for _, k := range run {
		frames := obj.Frames(locs[k].Address)
		n := len(frames)
		if n == 0 {
			if done++; done == progressStep {
				progress.addressesDone.Add(done)
				done = 0
			}
			continue
		}
		if cap(idBuf)-len(idBuf) < n {
			idBuf = make([]int32, 0, max(n, 1024))
		}
		ids := idBuf[len(idBuf) : len(idBuf)+n : len(idBuf)+n]
		idBuf = idBuf[:len(idBuf)+n]
		if cap(lineBuf)-len(lineBuf) < n {
			lineBuf = make([]profile.Line, 0, max(n, 1024))
		}
		lines := lineBuf[len(lineBuf) : len(lineBuf)+n : len(lineBuf)+n]
		lineBuf = lineBuf[:len(lineBuf)+n]
		for i, f := range frames {
			flags.functions = flags.functions || f.Func != ""
			flags.filenames = flags.filenames || f.File != ""
			flags.lineNumbers = flags.lineNumbers || f.Line != 0
			lines[i] = profile.Line{Line: int64(f.Line), Column: int64(f.Column)}
			if i < len(prev) {
				if p := &prev[i]; p.Func == f.Func && p.File == f.File && p.StartLine == f.StartLine {
					ids[i] = prevIDs[i]
					continue
				}
			}
			start := int64(f.StartLine)
			id, named := byName[f.Func]
			ok := named
			if named && (funcs[id].filename != f.File || funcs[id].startLine != start) {
				id, ok = byKey[key{f.Func, f.File, start}]
			}
			if !ok {
				fn := function{name: f.Func, systemName: f.Func, filename: files.Name(f.File), startLine: start}
				if name != nil {
					fn.name = name(f.Func)
				}
				id = int32(len(funcs))
				funcs = append(funcs, fn)
				if named {
					byKey[key{f.Func, f.File, start}] = id
				} else {
					byName[f.Func] = id
				}
			}
			ids[i] = id
		}
		flags.frames = true
		l := locs[k]
		l.Line = lines
		l.IsFolded = false
		fns[k] = ids
		prev, prevIDs = frames, ids
		if done++; done == progressStep {
			progress.addressesDone.Add(done)
			done = 0
		}
	}
	progress.addressesDone.Add(done)
	return funcs, flags
}

// progressStep is how many addresses a worker looks up between updates
// of the progress it shares with the others.
const progressStep = 256

// addressOrder returns the indexes of locs in the order of their
// addresses (of equal addresses, the first first).
func addressOrder(locs []*profile.Location) []int {
	type key struct {
		addr uint64
		k    int
	}
	keys := make([]key, len(locs))
	for k, l := range locs {
		keys[k] = key{l.Address, k}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(x.addr, y.addr); c != 0 {
			return c
		}
		return cmp.Compare(x.k, y.k)
	})
	order := make([]int, len(keys))
	for i, key := range keys {
		order[i] = key.k
	}
	return order
}

// A functionAdder returns the Function of a profile with the given name,
// system name, file and start line, adding it if it has none.
type functionAdder func(f *function) *profile.Function

// newFunctionAdder returns a functionAdder for the functions it adds to p,
// room made for about hint of them.
func newFunctionAdder(p *profile.Profile, hint int) functionAdder {
	seen := make(map[function]*profile.Function, hint)
	var maxID uint64
	for _, f := range p.Function {
		maxID = max(maxID, f.ID)
	}
	p.Function = slices.Grow(p.Function, hint)
	var slab []profile.Function // new Functions are cut from it
	return func(f *function) *profile.Function {
		if old := seen[*f]; old != nil {
			return old
		}
		if len(slab) == 0 {
			slab = make([]profile.Function, max(hint, 64))
		}
		fn := &slab[0]
		slab = slab[1:]
		maxID++
		*fn = profile.Function{ID: maxID, Name: f.name, SystemName: f.systemName, Filename: f.filename, StartLine: f.startLine}
		seen[*f] = fn
		p.Function = append(p.Function, fn)
		return fn
	}
}
