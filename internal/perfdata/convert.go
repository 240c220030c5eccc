package perfdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/safename"
	jprofile "github.com/jitpprof/pprof/profile"
)

// A Conversion is what Profile made of a recording besides the profile.
type Conversion struct {
	// JITFiles are the JIT source files of the recorded processes: the
	// jitdumps they mapped (Recording.JITDumps), and the perf maps
	// /tmp/perf-PID.map of the processes sampled that exist on this
	// machine.
	JITFiles []string
	// PIDs are the processes the recording has records of, in order (see
	// Recording.PIDs).
	PIDs []uint32
	// Notes say what could not be done (kernel frames left unsymbolized,
	// a recording cut short, ...), each once, as messages naming the
	// file they are about (safe to print: see package safename).
	Notes []string
}

// Options configure Profile.
type Options struct {
	// Kallsyms is the kernel symbol table to name kernel frames with
	// (/proc/kallsyms), used only if the recording's OS release is
	// KernelRelease; "" leaves kernel frames unnamed.
	Kallsyms      string
	KernelRelease string
	// BuildIDDir is perf's build-ID cache ($PERF_BUILDID_DIR, by default
	// $HOME/.debug), where a recording made with --call-graph dwarf finds
	// the files it unwinds through when they are no longer where they
	// were recorded; "" for none.
	BuildIDDir string
	// JIT, if not nil, is the JIT code of the recorded processes, as the
	// JIT stage read it (a *jprofile.ObjectSet): --call-graph dwarf
	// stacks are unwound through JIT code with its call frame
	// information (code without frame pointers, which LLVM omits by
	// default, included), and a sample in code that was moved or
	// replaced during the recording is named after the code that ran at
	// its time (when the samples are timed on CLOCK_MONOTONIC).
	JIT JITCode
	// Warm, if not nil, is told the name of each file mapping as the
	// first sample in it is read, while the rest are: a symbolizer can
	// start indexing the file then.
	Warm Warmer
}

// JITCode is what the converter needs of the JIT objects of the recorded
// processes; *jprofile.ObjectSet has it.
type JITCode interface {
	// CallFrameInfo returns the call frame information of the JIT code
	// at pc, nil if there is none.
	CallFrameInfo(pc uint64) (*jprofile.CallFrameInfo, error)
	// Replaced reports whether any code was moved or loaded over other
	// code: only then do the samples' times matter.
	Replaced() bool
	// CodeAt returns the frame of the code that held addr in process pid
	// at time t (CLOCK_MONOTONIC nanoseconds), and a key telling that
	// code apart from other code at the same address, if it is not the
	// code there at the end; ok is false for the code there at the end
	// (the JIT stage names it, from whichever JIT source it prefers) and
	// when nothing is known.
	CodeAt(pid uint32, addr, t uint64) (f jprofile.Frame, key uint64, ok bool)
}

var _ JITCode = (*jprofile.ObjectSet)(nil)

// A Warmer starts reading a file that samples are in, in the background.
type Warmer interface {
	Warm(file string)
}

// clockMonotonic is CLOCK_MONOTONIC, the clock of perf record -k 1 and of
// jitdump timestamps.
const clockMonotonic = 1

// Profile converts the recording into a pprof profile: for each event, a
// sample count and the sum of the periods (as perf report weighs
// samples); a location per address (callers' return addresses less one,
// so that lines point at the call; the first frame of the kernel's and
// of the user's part of a stack as it is), with the mapping the process
// had there; labels pid, tid and comm. Anonymous executable mappings (JIT
// code) get no file name, for the JIT stage; kernel frames are named from
// opts.Kallsyms when the kernel matches. User stacks recorded with
// --call-graph dwarf are unwound (package cfi) with the call frame
// information of the files mapped, or their copies in opts.BuildIDDir.
// It is [File.Scan] then [Recording.Profile].
func (f *File) Profile(opts Options) (*profile.Profile, *Conversion, error) {
	rec, err := f.Scan("")
	if err != nil {
		return nil, nil, err
	}
	return rec.Profile(opts)
}

// Profile converts the samples of the recording into a pprof profile
// (see File.Profile).
func (rec *Recording) Profile(opts Options) (*profile.Profile, *Conversion, error) {
	c := newConverter(rec, opts)
	err := rec.f.Records(c.record)
	return c.finish(err)
}

// A converter turns the samples of a recording into a profile, one
// record at a time.
type converter struct {
	rec    *Recording
	f      *File
	opts   Options
	p      *profile.Profile
	conv   *Conversion
	noted  map[string]bool
	events []*Attr       // all but perf's dummy event
	index  map[*Attr]int // of each event in events
	ksyms  *kallsyms     // nil: kernel frames unnamed
	vdso   *vdsoNamer
	unw    *unwinder // nil: stacks are the callchains
	replay JITCode   // nil: code is named after what is there at the end
	off    *offCPU   // nil: no context switches recorded

	mappings map[*mmapping]*profile.Mapping // made on first use
	locs     map[locKey]*profile.Location
	funcs    map[string]*profile.Function
	byPID    map[uint32]map[uint64]*profile.Location // locations by pid, then address
	last     struct {                                // the last pid's, the next sample's most likely
		pid  uint32
		locs map[uint64]*profile.Location
	}
	replayed     map[[3]uint64]*profile.Location // by pid, address and code
	replayFuncs  map[[3]string]*profile.Function
	same         map[string]*profile.Sample // by stack, thread and command
	lastRead     map[uint64]uint64          // by event id: its count at its previous sample
	pids         map[uint32]int             // samples by process
	first, final uint64                     // the samples' first and last times
	nsamples     int
	ancestry     ancestry        // of the processes sampled
	comms        commCache       // of the thread last sampled
	threads      map[uint64]bool // pid<<32|tid of the threads whose samples are labeled
	lastThread   uint64          // the last of them asked about, ^0 for none
	deepSamples  int             // samples whose stacks were cut to maxFrames
	unlabeled    int             // samples past maxThreads, not labeled

	// Buffers reused from sample to sample.
	adds    []eventAdd
	key     []byte
	stack   []*profile.Location
	unwound []uint64
}

// locKey tells locations apart: a mapping and an address.
type locKey struct {
	m    *profile.Mapping
	addr uint64
}

// An eventAdd is an event's share of a sample (see sampleAdds).
type eventAdd struct {
	event int // index in events
	value int64
}

func newConverter(rec *Recording, opts Options) *converter {
	c := &converter{rec: rec, f: rec.f, opts: opts, p: &profile.Profile{},
		conv:  &Conversion{PIDs: rec.PIDs, JITFiles: slices.Clone(rec.JITDumps)},
		noted: map[string]bool{}, mappings: map[*mmapping]*profile.Mapping{}, locs: map[locKey]*profile.Location{}, funcs: map[string]*profile.Function{},
		byPID: map[uint32]map[uint64]*profile.Location{}, replayed: map[[3]uint64]*profile.Location{},
		replayFuncs: map[[3]string]*profile.Function{}, same: map[string]*profile.Sample{},
		lastRead: map[uint64]uint64{}, pids: map[uint32]int{}, threads: map[uint64]bool{}}
	c.last.pid = ^uint32(0)
	c.lastThread = ^uint64(0)
	c.ancestry.rec = rec
	if n := rec.sideBand.note(); n != "" {
		c.note(n)
	}
	c.off = newOffCPU(rec.f, &rec.sideBand)
	// The kernel's symbols are read while the sample types are set up.
	kallsymsDone := make(chan struct{})
	var ks *kallsyms
	var from string
	var cacheErr error
	go func() {
		defer close(kallsymsDone)
		ks, from, cacheErr = rec.readKallsyms(opts)
	}()
	c.sampleTypes()
	c.setReplay()
	<-kallsymsDone
	if cacheErr != nil && len(rec.kernel) > 0 {
		c.note(fmt.Sprintf("perf's copy of the recorded kernel's symbols is not read: %v", cacheErr))
	}
	c.setKallsyms(ks, from)
	finder := &fileFinder{buildIDDir: opts.BuildIDDir, buildIDs: c.f.BuildIDs, proc: rec.proc}
	c.vdso = &vdsoNamer{finder: finder, tables: map[string]*funcTable{}}
	var jit *jitTables
	if opts.JIT != nil && c.f.unwound() {
		jit = newJITTables(opts.JIT)
	}
	c.unw = newUnwinder(c.f, finder, c.lookup, jit, c.note)
	for _, n := range rec.notes {
		c.note(n)
	}
	return c
}

// note adds n, about the recording, to the conversion's notes, once.
func (c *converter) note(n string) { c.noteFile(c.f.Name, n) }

// noteFile adds n, about file (the recording, or one of its per-thread
// files), to the conversion's notes, once.
func (c *converter) noteFile(file, n string) { c.noteWhole(safename.String(file) + ": " + n) }

// noteWhole adds the message n, which names the file, to the
// conversion's notes, once.
func (c *converter) noteWhole(n string) {
	if !c.noted[n] {
		c.noted[n] = true
		c.conv.Notes = append(c.conv.Notes, n)
	}
}

// sampleTypes sets the profile's sample types: for each event, a pair
// (samples, and the event's own unit), for all the recording's events
// but perf's dummy event, which only carries side records (perf record
// -a adds it): it has no samples, and pprof would show it, the last
// sample type, by default.
func (c *converter) sampleTypes() {
	f, p := c.f, c.p
	for i := range f.Attrs {
		// Nor is the sched:sched_switch event of off-CPU stacks.
		if a := &f.Attrs[i]; (a.Type != 1 || a.Config != 9) && !c.off.blocks(a) { // PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY
			c.events = append(c.events, a)
		}
	}
	if len(c.events) == 0 {
		for i := range f.Attrs {
			c.events = append(c.events, &f.Attrs[i])
		}
	}
	c.index = map[*Attr]int{}
	for i, a := range c.events {
		c.index[a] = i
		name := safename.Escape(a.Name) // pipe mode's event names are the recording's
		if name == "" {
			name = eventName(a.Type, a.Config, i)
		}
		unit := "count"
		if a.Type == 1 && (a.Config == 0 || a.Config == 1) { // PERF_TYPE_SOFTWARE cpu-clock, task-clock
			unit = "nanoseconds"
		}
		samples := "samples"
		if len(c.events) > 1 {
			samples = name + "_samples"
		}
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: samples, Unit: "count"}, &profile.ValueType{Type: name, Unit: unit})
		if i == 0 {
			p.PeriodType = &profile.ValueType{Type: name, Unit: unit}
			if !a.Freq {
				p.Period = int64(a.Period)
			}
		}
	}
	c.off.sampleTypes(p)
}

// setReplay has samples in JIT code named by their times when code was
// moved or replaced during the recording, and the times are the JIT's
// clock.
func (c *converter) setReplay() {
	jit := c.opts.JIT
	if jit == nil || len(c.rec.JITDumps) == 0 || !jit.Replaced() {
		return // no code moved or reused: times do not matter
	}
	if !c.f.sameClockAsJIT() {
		c.note("JIT code was moved or reused during the recording, but its sample times are not CLOCK_MONOTONIC, the jitdump's clock: " +
			"each JIT address is named after the last code there; record with perf record -k 1 to have samples named after the code that ran")
		return
	}
	c.replay = jit
}

// readKallsyms reads the kernel's symbols: perf's copy of the recorded
// kernel's, or this kernel's if it is the one recorded; nil if none. It
// returns where they came from, and why perf's copy could not be read
// when it is there but is not a table (a FIFO, a device).
func (rec *Recording) readKallsyms(opts Options) (k *kallsyms, from string, cacheErr error) {
	f := rec.f
	if id := f.BuildIDs["[kernel.kallsyms]"]; len(id) > 1 && opts.BuildIDDir != "" {
		path := CachePath(opts.BuildIDDir, fmt.Sprintf("%x", id), "kallsyms")
		k, err := readKallsyms(path)
		if err == nil && !k.empty() {
			return k, path, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			cacheErr = err // there, but not a table to read (a FIFO, say)
		}
	}
	if opts.Kallsyms != "" && (f.OSRelease == "" || f.OSRelease == opts.KernelRelease) {
		k, _ := readKallsyms(opts.Kallsyms)
		return k, opts.Kallsyms, cacheErr
	}
	return nil, "", cacheErr
}

// setKallsyms names the kernel's frames with ks, read from from, if the
// recording has kernel mappings, or says why they stay unnamed.
func (c *converter) setKallsyms(ks *kallsyms, from string) {
	f, rec := c.f, c.rec
	if len(rec.kernel) == 0 {
		return
	}
	switch {
	case ks != nil && !ks.empty():
		c.ksyms = ks
		c.ksyms.relocate(rec.refSym, rec.refAddr)
	case c.opts.Kallsyms == "":
	case f.OSRelease != "" && f.OSRelease != c.opts.KernelRelease:
		c.note(fmt.Sprintf("kernel frames are not named: recorded on Linux %s, this is %s, and perf's build-ID cache has no copy of its symbols", f.OSRelease, c.opts.KernelRelease))
	default:
		c.note("kernel frames are not named: " + from + " gives no addresses (run as root, or lower kernel.kptr_restrict)")
	}
}

// mappingOf returns the profile's mapping of mm, added when first asked;
// the file's warmer is told, unless quiet.
func (c *converter) mappingOf(mm *mmapping, quiet bool) *profile.Mapping {
	if m := c.mappings[mm]; m != nil {
		return m
	}
	p := c.p
	// The file's name is the recording's: reports print it as it is.
	// Anonymous memory is perf's "//anon", which upstream's symbolizer
	// skips as a mapping no file can symbolize (with no name, it would
	// ask for PPROF_BINARY_PATH).
	file := mm.file
	if file == "" {
		file = "//anon"
	}
	m := &profile.Mapping{ID: uint64(len(p.Mapping) + 1), Start: mm.start, Limit: mm.limit, Offset: mm.offset, File: safename.Escape(file)}
	c.mappings[mm] = m
	if id := mm.buildID; id != nil {
		m.BuildID = fmt.Sprintf("%x", id)
	} else if id := c.f.BuildIDs[mm.file]; id != nil {
		m.BuildID = fmt.Sprintf("%x", id)
	}
	if c.opts.Warm != nil && !quiet && mm.file != "" && !strings.HasPrefix(mm.file, "[") {
		c.opts.Warm.Warm(m.File)
	}
	if mm.file == "[kernel.kallsyms]" {
		m.KernelRelocationSymbol = "_text"
		if c.ksyms != nil {
			m.HasFunctions = true
		}
	}
	p.Mapping = append(p.Mapping, m)
	return m
}

// newLocation returns the location of addr in process pid, made when
// first asked: in the mapping the process had there, named here if the
// kernel's or the vDSO's.
func (c *converter) newLocation(pid uint32, addr uint64) *profile.Location {
	mm := c.lookup(pid, addr)
	var m *profile.Mapping
	if mm != nil {
		m = c.mappingOf(mm, false)
	}
	k := locKey{m, addr}
	if l := c.locs[k]; l != nil {
		return l
	}
	p := c.p
	l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr, Mapping: m}
	name := ""
	switch {
	case c.ksyms != nil && addr >= 1<<63:
		name = c.ksyms.lookup(addr)
	case mm != nil && mm.file == "[vdso]":
		if name = c.vdso.name(mm, addr); name != "" {
			m.HasFunctions = true
		}
	}
	if name != "" {
		name = safename.Escape(name) // from a symbol table of the recording's (perf's copy of the kernel's or the vDSO's)
		fn := c.funcs[name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
			c.funcs[name] = fn
			p.Function = append(p.Function, fn)
		}
		l.Line = []profile.Line{{Function: fn}}
	}
	c.locs[k] = l
	p.Location = append(p.Location, l)
	return l
}

// lookup returns the mapping of process pid that holds addr (see
// Recording.lookup).
func (c *converter) lookup(pid uint32, addr uint64) *mmapping {
	return c.rec.lookup(&c.ancestry, pid, addr)
}

// location is newLocation, looked up first by pid and address: a
// sample's frames are all of one pid, and a map with integer keys is the
// fast kind. The first maxThreads processes get such a map; the others
// (a recording of many short-lived processes) are looked up the slow way.
func (c *converter) location(pid uint32, addr uint64) *profile.Location {
	if pid != c.last.pid || c.last.locs == nil {
		c.last.locs = c.byPID[pid]
		if c.last.locs == nil {
			if len(c.byPID) >= maxThreads {
				c.last.pid = ^uint32(0)
				return c.newLocation(pid, addr)
			}
			c.last.locs = map[uint64]*profile.Location{}
			c.byPID[pid] = c.last.locs
		}
		c.last.pid = pid
	}
	l := c.last.locs[addr]
	if l == nil {
		l = c.newLocation(pid, addr)
		c.last.locs[addr] = l
	}
	return l
}

// replayedLocation returns the location of the JIT code at addr in
// process pid at time t, if that code has since moved or been replaced:
// such code gets locations of its own, named here, since the JIT stage
// knows only what is there at the end. Nil otherwise.
func (c *converter) replayedLocation(pid uint32, addr, t uint64) *profile.Location {
	if c.replay == nil || addr >= 1<<63 {
		return nil
	}
	if mm := c.lookup(pid, addr); mm == nil || mm.file != "" {
		return nil // JIT code lives in anonymous memory
	}
	fr, key, ok := c.replay.CodeAt(pid, addr, t)
	if !ok {
		return nil
	}
	k := [3]uint64{uint64(pid), addr, key}
	if l := c.replayed[k]; l != nil {
		return l
	}
	p := c.p
	fk := [3]string{fr.Func, fr.File, strconv.Itoa(fr.StartLine)}
	fn := c.replayFuncs[fk]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: fr.Func, SystemName: fr.Func, Filename: fr.File, StartLine: int64(fr.StartLine)}
		c.replayFuncs[fk] = fn
		p.Function = append(p.Function, fn)
	}
	m := c.location(pid, addr).Mapping // the memory's mapping, made first
	l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr, Mapping: m,
		Line: []profile.Line{{Function: fn, Line: int64(fr.Line)}}}
	c.replayed[k] = l
	p.Location = append(p.Location, l)
	return l
}

// record takes in one record: samples become the profile's.
func (c *converter) record(r *Record) bool {
	if r.Type != RecordSample {
		c.off.side(r)
		return true
	}
	if _, ok := c.index[r.Attr]; !ok && len(r.Group) == 0 && !c.off.blocks(r.Attr) {
		return true // the dummy event's
	}
	c.nsamples++
	adds := c.sampleAdds(r)
	c.pids[r.PID]++
	if r.Time != 0 {
		if c.first == 0 || r.Time < c.first {
			c.first = r.Time
		}
		c.final = max(c.final, r.Time)
	}
	stack := c.stackOf(r)
	if len(stack) == 0 || c.off.sample(r, stack) {
		return true
	}
	c.addSample(r, stack, adds)
	return true
}

// sampleAdds returns what the sample r adds to each event: its period to
// its own, or, for a group whose leader samples, to each event of the
// group what it counted since that event's previous sample (as perf
// report counts them; the first sample adds what was counted since the
// start).
func (c *converter) sampleAdds(r *Record) []eventAdd {
	c.adds = c.adds[:0]
	for _, g := range r.Group {
		if a := c.f.byID[g.ID]; a != nil {
			i, ok := c.index[a]
			if !ok {
				continue
			}
			d := g.Value - c.lastRead[g.ID]
			if g.Value < c.lastRead[g.ID] {
				d = 0
			}
			c.lastRead[g.ID] = g.Value
			c.adds = append(c.adds, eventAdd{i, int64(d)})
		}
	}
	if len(c.adds) == 0 {
		c.adds = append(c.adds, eventAdd{c.index[r.Attr], int64(r.Period)})
	}
	return c.adds
}

// stackOf returns the locations of the sample r's stack, leaf first: its
// callchain, or, recorded with --call-graph dwarf, the kernel's
// callchain and the user stack unwound, unless the callchain has a
// longer user part of its own.
func (c *converter) stackOf(r *Record) []*profile.Location {
	c.stack = c.stack[:0]
	frames := r.Callchain
	if c.unw != nil && len(r.RegsUser) > 0 {
		kernel, user := r.Callchain, 0
		if k := slices.Index(r.Callchain, markerUser); k >= 0 {
			kernel, user = r.Callchain[:k], len(r.Callchain)-k-1
		}
		c.unwound = append(append(c.unwound[:0], kernel...), markerUser)
		c.unwound = c.unw.unwind(c.unwound, r.PID, r.RegsUser, r.StackUser)
		if len(c.unwound)-len(kernel)-1 > user {
			frames = c.unwound
		}
	}
	if len(frames) == 0 {
		frames = []uint64{r.IP}
	}
	frames = c.capFrames(frames)
	exact := true
	for _, ip := range frames {
		if IsContextMarker(ip) {
			// The first frame of a context is where the thread was in it
			// (user code at its entry to the kernel), not a return
			// address.
			exact = true
			continue
		}
		if !exact && ip > 0 {
			ip-- // a return address: the call is before it
		}
		exact = false
		if l := c.replayedLocation(r.PID, ip, r.Time); l != nil {
			c.stack = append(c.stack, l)
			continue
		}
		c.stack = append(c.stack, c.location(r.PID, ip))
	}
	return c.stack
}

// addSample adds the sample r with stack to the profile: samples with
// the same stack, thread and command are one sample with the counts
// added, so that memory grows with the distinct stacks, not the length
// of the recording.
func (c *converter) addSample(r *Record, stack []*profile.Location, adds []eventAdd) {
	comm := c.rec.commAtTime(&c.comms, r.PID, r.TID, r.Time)
	labeled := c.labeled(r.PID, r.TID)
	key := c.key[:0]
	if labeled {
		key = binary.LittleEndian.AppendUint32(key, r.PID)
		key = binary.LittleEndian.AppendUint32(key, r.TID)
	}
	key = append(append(key, comm...), 0)
	for _, l := range stack {
		key = binary.LittleEndian.AppendUint64(key, l.ID)
	}
	c.key = key
	if s := c.same[string(key)]; s != nil {
		for _, a := range adds {
			s.Value[2*a.event]++
			s.Value[2*a.event+1] += a.value
		}
		return
	}
	vals := make([]int64, len(c.p.SampleType))
	for _, a := range adds {
		vals[2*a.event]++
		vals[2*a.event+1] += a.value
	}
	s := &profile.Sample{Location: slices.Clone(stack), Value: vals}
	if labeled {
		s.NumLabel = map[string][]int64{"pid": {int64(r.PID)}, "tid": {int64(r.TID)}}
	}
	if comm != "" {
		s.Label = map[string][]string{"comm": {safename.Escape(comm)}}
	}
	c.same[string(key)] = s
	c.p.Sample = append(c.p.Sample, s)
}

// finish completes the profile once the records are read (err is what
// reading them returned).
func (c *converter) finish(err error) (*profile.Profile, *Conversion, error) {
	f, p := c.f, c.p
	damaged := c.rec.damaged
	var fe *FormatError
	if errors.As(err, &fe) {
		damaged = fe
	} else if err != nil {
		return nil, nil, err
	}
	c.noteLimits()
	if damaged != nil {
		if c.nsamples == 0 {
			return nil, nil, damaged
		}
		c.noteFile(damaged.File, fmt.Sprintf("%s at offset %#x: the records after it are lost, the profile has the %d samples read", damaged.Msg, damaged.Off, c.nsamples))
	}
	if t := f.Truncated; t.Of > 0 {
		if c.nsamples == 0 {
			return nil, nil, f.truncatedError("before its first sample")
		}
		c.noteWhole(fmt.Sprintf("%s is truncated at byte %d of %d (the recording was cut short); the samples up to there are shown", safename.String(f.Name), t.At, t.Of))
	}
	if f.Unfinished {
		if c.nsamples == 0 {
			return nil, nil, f.errorf(f.dataOff, "the recording was not finished (perf record was stopped before it completed the file) and has no samples")
		}
		c.note(fmt.Sprintf("the recording was not finished (perf record was stopped before it completed the file): read to its last whole record, %d samples, without the build IDs and event names perf writes at the end", c.nsamples))
	}
	var cc commCache
	if n := c.off.finish(p, func(pid, tid uint32, t uint64) string { return c.rec.commAtTime(&cc, pid, tid, t) }); n != "" {
		c.note(n)
	}
	if c.final > c.first {
		p.DurationNanos = int64(c.final - c.first)
	}
	c.perfMaps()
	slices.Sort(c.conv.JITFiles)
	if len(p.Mapping) == 0 {
		p.Mapping = []*profile.Mapping{{ID: 1}}
	}
	putMainFirst(p, func() *profile.Mapping {
		if mm := c.rec.mainImage(c.pids); mm != nil {
			return c.mappingOf(mm, true)
		}
		return nil
	})
	return p, c.conv, p.CheckValid()
}

// eventName returns perf's name of the event of type typ (hardware or
// software) and config, for a recording without its event descriptions
// (one not finished), or "event" and its index i.
func eventName(typ, config uint64, i int) string {
	hardware := []string{"cycles", "instructions", "cache-references", "cache-misses", "branches",
		"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles"}
	software := []string{"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches"}
	switch {
	case typ == 0 && config < uint64(len(hardware)): // PERF_TYPE_HARDWARE
		return hardware[config]
	case typ == 1 && config < uint64(len(software)): // PERF_TYPE_SOFTWARE
		return software[config]
	}
	return fmt.Sprintf("event%d", i)
}

// sameClockAsJIT reports whether every event's sample times are
// CLOCK_MONOTONIC (perf record -k 1), the clock jitdump writers stamp
// their records with.
func (f *File) sameClockAsJIT() bool {
	for _, a := range f.Attrs {
		if !a.UseClockID || a.ClockID != clockMonotonic || a.SampleType&SampleTime == 0 {
			return false
		}
	}
	return len(f.Attrs) > 0
}
