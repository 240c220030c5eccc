package perfdata

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/cfi"
	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/regfile"
)

// A Conversion is what Profile made of a recording besides the profile.
type Conversion struct {
	// JITFiles are the jitdump files the recorded processes mapped (perf's
	// convention: a JIT runtime maps its jit-PID.dump so that perf sees
	// it), and perf maps /tmp/perf-PID.map of the recorded processes that
	// exist on this machine.
	JITFiles []string
	// PIDs are the processes the recording has records of (their
	// mappings, commands or forks), in order: the JIT files named after
	// other processes (perf-PID.map, jit-PID.dump) are not theirs.
	PIDs []uint32
	// Notes say what could not be done (kernel frames left unsymbolized,
	// ...), each once.
	Notes []string
}

// Options configure Profile.
type Options struct {
	// Kallsyms is the kernel symbol table to name kernel frames with
	// (/proc/kallsyms), used only if the recording's OS release is
	// KernelRelease; "" leaves kernel frames unnamed.
	Kallsyms      string
	KernelRelease string
	// FileUsed, if not nil, is told the name of each file mapping as the
	// first sample in it is read, while the rest are: a symbolizer can
	// start indexing the file then.
	FileUsed func(file string)
	// BuildIDDir is perf's build-ID cache ($PERF_BUILDID_DIR, by default
	// $HOME/.debug), where a recording made with --call-graph dwarf finds
	// the files it unwinds through when they are no longer where they
	// were recorded; "" for none.
	BuildIDDir string
	// Replay, if not nil, is called once the jitdump files the recording
	// references are known (as in Conversion.JITFiles), before the
	// samples are read; the JITReplay it returns, if not nil, names the
	// JIT code each sample hit by the sample's time (see JITReplay).
	Replay func(jitdumps []string) JITReplay
	// JITFrames, if not nil, is called once the jitdump files the
	// recording references and its processes are known (as in
	// Conversion.JITFiles and Conversion.PIDs), when
	// --call-graph dwarf stacks are to be unwound; the function it
	// returns, if not nil, gives the call frame information of the JIT
	// code at pc, and bias, what its addresses are less than the code's
	// (0 for a JIT object's, relocated to load addresses), or nil if
	// there is none: a stack is then unwound through that code by its
	// frame pointer. It is called from one goroutine.
	JITFrames func(jitdumps []string, pids []uint32) func(pc uint64) (t *cfi.Table, bias uint64)
	// Proc is the proc file system (/proc) through which the JIT files
	// of recorded processes still running in containers (other mount
	// namespaces) are found, as perf report finds them; "" takes the
	// files as recorded.
	Proc string
}

// A JITReplay tells what JIT code an address held at a time: code that
// was moved, or whose memory was reused for other code, ran at addresses
// that hold something else at the end of the recording.
type JITReplay interface {
	// Replaced reports whether any code was moved or loaded over other
	// code: only then do the samples' times matter.
	Replaced() bool
	// Code returns the function, file, line and start line of the code
	// that held addr in process pid at time t (CLOCK_MONOTONIC
	// nanoseconds), and a key telling that code apart from other code
	// at the same address, if it is not the code there at the end; ok is
	// false for the code there at the end (the JIT stage names it, from
	// whichever JIT source it prefers) and when nothing is known.
	Code(pid uint32, addr, t uint64) (fn, file string, line, startLine int64, key uint64, ok bool)
}

// clockMonotonic is CLOCK_MONOTONIC, the clock of perf record -k 1 and of
// jitdump timestamps.
const clockMonotonic = 1

// mmapping is one executable mapping of a process.
type mmapping struct {
	start, limit, offset uint64
	file                 string
	buildID              []byte
	m                    *profile.Mapping // made on first use
	// The file's call frame information, once the unwinder looked for it
	// (nil if there is none to use).
	cfi      *cfi.File
	cfiKnown bool
}

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
func (f *File) Profile(opts Options) (*profile.Profile, *Conversion, error) {
	conv := &Conversion{}
	// The kernel's symbols are read while the records are: perf's copy
	// of the recorded kernel's, or this kernel's if it is the one
	// recorded.
	kallsymsDone := make(chan struct{})
	var kallsymsRead *kallsyms // nil if unreadable
	var kallsymsFrom string
	go func() {
		defer close(kallsymsDone)
		if id := f.BuildIDs["[kernel.kallsyms]"]; len(id) > 1 && opts.BuildIDDir != "" {
			path := CachePath(opts.BuildIDDir, fmt.Sprintf("%x", id), "kallsyms")
			if k, err := readKallsyms(path); err == nil && !k.empty() {
				kallsymsRead, kallsymsFrom = k, path
				return
			}
		}
		if opts.Kallsyms != "" && (f.OSRelease == "" || f.OSRelease == opts.KernelRelease) {
			kallsymsRead, _ = readKallsyms(opts.Kallsyms)
			kallsymsFrom = opts.Kallsyms
		}
	}()
	// The kernel's relocation: the address its MMAP record gives a symbol
	// (_text: the record's file name is the kernel's followed by it),
	// which a symbol table of another boot (KASLR) has elsewhere.
	var refSym string
	var refAddr uint64
	procs := map[uint32][]*mmapping{} // executable mappings by pid
	parent := map[uint32]uint32{}
	comm := map[uint32]string{} // by tid: the last
	// By tid, each command it had and from when (in time order): exec
	// changes a process's (sh -c 'exec java ...'), prctl a thread's.
	commAt := map[uint32][]timedComm{}
	var kernel []*mmapping
	type jitMMap struct {
		pid  uint32
		file string
	}
	var jitMMaps []jitMMap          // the jitdumps mapped, in order
	pids := map[uint32]int{}        // samples by process
	image := map[uint32]*mmapping{} // by pid: the executable it runs (the first mapped since its exec)
	// The side records, in the order of their times (see Record.Time):
	// a process that moved to another CPU when it exec'd may have its
	// new executable's MMAP before the COMM of its exec in the file.
	var side []Record
	err := f.records(false, func(r *Record) bool {
		switch r.Type {
		case RecordMMAP, RecordMMAP2, RecordComm, RecordFork:
			side = append(side, *r)
		}
		return true
	})
	slices.SortStableFunc(side, func(a, b Record) int { return cmp.Compare(a.Time, b.Time) })
	recorded := map[uint32]bool{}
	for i := range side {
		r := &side[i]
		if r.PID != ^uint32(0) {
			recorded[r.PID] = true
		}
		switch r.Type {
		case RecordMMAP, RecordMMAP2:
			exec := r.Prot&4 != 0 || (r.Type == RecordMMAP && r.Misc&(1<<13) == 0)
			base := filepath.Base(r.Filename)
			if strings.HasPrefix(base, "jit-") && strings.HasSuffix(base, ".dump") {
				jitMMaps = append(jitMMaps, jitMMap{r.PID, r.Filename})
				continue
			}
			if !exec || r.Len == 0 {
				continue
			}
			mm := &mmapping{start: r.Addr, limit: r.Addr + r.Len, offset: r.Pgoff, file: r.Filename, buildID: r.BuildID}
			if r.PID == ^uint32(0) { // the kernel and its modules
				if sym, ok := strings.CutPrefix(r.Filename, "[kernel.kallsyms]"); ok {
					mm.file, mm.offset = "[kernel.kallsyms]", 0
					if sym != "" && refSym == "" {
						refSym, refAddr = sym, r.Pgoff
					}
				}
				kernel = append(kernel, mm)
				continue
			}
			if perfmap.Anonymous(r.Filename) {
				mm.file = ""
			}
			procs[r.PID] = append(procs[r.PID], mm)
			if _, ok := image[r.PID]; !ok && isExecutable(mm.file) {
				image[r.PID] = mm
			}
		case RecordComm:
			comm[r.TID] = r.Comm
			commAt[r.TID] = append(commAt[r.TID], timedComm{r.Time, r.Comm})
			if r.Exec && r.PID == r.TID {
				delete(image, r.PID) // the next executable mapped is the new image's
			}
		case RecordFork:
			if r.PPID != r.PID { // a new process, not a thread
				parent[r.PID] = r.PPID
			}
			// The new thread has its parent's command until it sets
			// its own (threads name themselves after they start).
			if c := cmp.Or(comm[r.PTID], comm[r.PPID]); c != "" && r.TID != r.PTID {
				commAt[r.TID] = append(commAt[r.TID], timedComm{r.Time, c})
			}
		}
	}
	// A damaged record ends its file: the mappings before it are kept,
	// and the samples before it are in the profile (below).
	var damaged *FormatError
	if !errors.As(err, &damaged) && err != nil {
		return nil, nil, err
	}
	conv.PIDs = slices.Sorted(maps.Keys(recorded))
	proc := newProcFS(opts.Proc)
	jitSeen := map[string]bool{}
	for _, m := range jitMMaps {
		if file := proc.path(m.pid, comm[m.pid], m.file); !jitSeen[file] {
			jitSeen[file] = true
			conv.JITFiles = append(conv.JITFiles, file)
		}
	}
	var replay JITReplay
	if opts.Replay != nil && len(conv.JITFiles) > 0 {
		replay = opts.Replay(slices.Clone(conv.JITFiles))
	}
	if replay != nil && !replay.Replaced() {
		replay = nil // no code moved or reused: times do not matter
	}
	if replay != nil && !f.sameClockAsJIT() {
		conv.Notes = append(conv.Notes, "JIT code was moved or reused during the recording, but its sample times are not CLOCK_MONOTONIC, the jitdump's clock: "+
			"each JIT address is named after the last code there; record with perf record -k 1 to have samples named after the code that ran")
		replay = nil
	}
	for _, list := range procs {
		// A later mapping at the same place replaces an earlier one.
		slices.SortStableFunc(list, func(a, b *mmapping) int { return cmp.Compare(a.start, b.start) })
	}

	p := &profile.Profile{}
	// The events, each a pair of sample types: all the recording's but
	// perf's dummy event, which only carries side records (perf record
	// -a adds it): it has no samples, and pprof would show it, the last
	// sample type, by default.
	var events []*Attr
	for i := range f.Attrs {
		if a := &f.Attrs[i]; a.Type != 1 || a.Config != 9 { // PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY
			events = append(events, a)
		}
	}
	if len(events) == 0 {
		for i := range f.Attrs {
			events = append(events, &f.Attrs[i])
		}
	}
	for i, a := range events {
		name := a.Name
		if name == "" {
			name = eventName(a.Type, a.Config, i)
		}
		unit := "count"
		if a.Type == 1 && (a.Config == 0 || a.Config == 1) { // PERF_TYPE_SOFTWARE cpu-clock, task-clock
			unit = "nanoseconds"
		}
		samples := "samples"
		if len(events) > 1 {
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
	attrIndex := map[*Attr]int{}
	for i, a := range events {
		attrIndex[a] = i
	}

	var ksyms *kallsyms
	<-kallsymsDone
	if len(kernel) > 0 {
		switch {
		case kallsymsRead != nil && !kallsymsRead.empty():
			ksyms = kallsymsRead
			ksyms.relocate(refSym, refAddr)
		case opts.Kallsyms == "":
		case f.OSRelease != "" && f.OSRelease != opts.KernelRelease:
			conv.Notes = append(conv.Notes, fmt.Sprintf("kernel frames are not named: recorded on Linux %s, this is %s, and perf's build-ID cache has no copy of its symbols", f.OSRelease, opts.KernelRelease))
		default:
			conv.Notes = append(conv.Notes, "kernel frames are not named: "+kallsymsFrom+" gives no addresses (run as root, or lower kernel.kptr_restrict)")
		}
	}

	// mappingOf returns the profile's mapping of mm, added when first
	// asked; the file's user is told, unless quiet.
	mappingOf := func(mm *mmapping, quiet bool) *profile.Mapping {
		if mm.m == nil {
			mm.m = &profile.Mapping{ID: uint64(len(p.Mapping) + 1), Start: mm.start, Limit: mm.limit, Offset: mm.offset, File: mm.file}
			if id := mm.buildID; id != nil {
				mm.m.BuildID = fmt.Sprintf("%x", id)
			} else if id := f.BuildIDs[mm.file]; id != nil {
				mm.m.BuildID = fmt.Sprintf("%x", id)
			}
			if opts.FileUsed != nil && !quiet && mm.file != "" && !strings.HasPrefix(mm.file, "[") {
				opts.FileUsed(mm.file)
			}
			if mm.file == "[kernel.kallsyms]" {
				mm.m.KernelRelocationSymbol = "_text"
				if ksyms != nil {
					mm.m.HasFunctions = true
				}
			}
			p.Mapping = append(p.Mapping, mm.m)
		}
		return mm.m
	}
	find := func(list []*mmapping, addr uint64) *mmapping {
		// The mappings starting at or below addr, the highest (and of
		// equal starts the latest) first; a few steps back are enough
		// for the small overlaps real processes have.
		i := sort.Search(len(list), func(i int) bool { return list[i].start > addr })
		for j := i - 1; j >= 0 && j >= i-64; j-- {
			if addr < list[j].limit {
				return list[j]
			}
		}
		return nil
	}
	lookup := func(pid uint32, addr uint64) *mmapping {
		if addr >= 1<<63 {
			return find(kernel, addr)
		}
		for hops := 0; hops < 64; hops++ {
			if mm := find(procs[pid], addr); mm != nil {
				return mm
			}
			pp, ok := parent[pid]
			if !ok || pp == pid {
				break
			}
			pid = pp
		}
		return nil
	}

	noted := map[string]bool{}
	finder := &fileFinder{buildIDDir: opts.BuildIDDir, buildIDs: f.BuildIDs}
	vdso := &vdsoNamer{finder: finder, tables: map[string]*funcTable{}}
	var jitFrames func(uint64) (*cfi.Table, uint64)
	if opts.JITFrames != nil && f.unwound() {
		jitFrames = opts.JITFrames(slices.Clone(conv.JITFiles), conv.PIDs)
	}
	unw := newUnwinder(f, finder, lookup, jitFrames, func(n string) {
		if !noted[n] {
			noted[n] = true
			conv.Notes = append(conv.Notes, n)
		}
	})

	type locKey struct {
		m    *profile.Mapping
		addr uint64
	}
	locs := map[locKey]*profile.Location{}
	funcs := map[string]*profile.Function{}
	locationOf := func(pid uint32, addr uint64) *profile.Location {
		mm := lookup(pid, addr)
		var m *profile.Mapping
		if mm != nil {
			m = mappingOf(mm, false)
		}
		k := locKey{m, addr}
		if l := locs[k]; l != nil {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr, Mapping: m}
		name := ""
		switch {
		case ksyms != nil && addr >= 1<<63:
			name = ksyms.lookup(addr)
		case mm != nil && mm.file == "[vdso]":
			if name = vdso.name(mm, addr); name != "" {
				m.HasFunctions = true
			}
		}
		if name != "" {
			fn := funcs[name]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
			}
			l.Line = []profile.Line{{Function: fn}}
		}
		locs[k] = l
		p.Location = append(p.Location, l)
		return l
	}

	// Locations by pid, then address: a sample's frames are all of one
	// pid, and a map with integer keys is the fast kind.
	byPID := map[uint32]map[uint64]*profile.Location{}
	lastPID, lastLocs := ^uint32(0), map[uint64]*profile.Location(nil)
	location := func(pid uint32, addr uint64) *profile.Location {
		if pid != lastPID || lastLocs == nil {
			lastLocs = byPID[pid]
			if lastLocs == nil {
				lastLocs = map[uint64]*profile.Location{}
				byPID[pid] = lastLocs
			}
			lastPID = pid
		}
		l := lastLocs[addr]
		if l == nil {
			l = locationOf(pid, addr)
			lastLocs[addr] = l
		}
		return l
	}
	// Code since moved or replaced gets locations of its own, named
	// here: the JIT stage knows only what is there at the end.
	replayed := map[[3]uint64]*profile.Location{} // by pid, address and code
	replayFuncs := map[[3]string]*profile.Function{}
	replayedLocation := func(pid uint32, addr, t uint64) *profile.Location {
		if replay == nil || addr >= 1<<63 {
			return nil
		}
		if mm := lookup(pid, addr); mm == nil || mm.file != "" {
			return nil // JIT code lives in anonymous memory
		}
		fn, file, line, start, key, ok := replay.Code(pid, addr, t)
		if !ok {
			return nil
		}
		k := [3]uint64{uint64(pid), addr, key}
		if l := replayed[k]; l != nil {
			return l
		}
		fk := [3]string{fn, file, strconv.FormatInt(start, 10)}
		f := replayFuncs[fk]
		if f == nil {
			f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn, SystemName: fn, Filename: file, StartLine: start}
			replayFuncs[fk] = f
			p.Function = append(p.Function, f)
		}
		m := location(pid, addr).Mapping // the memory's mapping, made first
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: addr, Mapping: m,
			Line: []profile.Line{{Function: f, Line: line}}}
		replayed[k] = l
		p.Location = append(p.Location, l)
		return l
	}

	var first, last uint64
	nsamples := 0
	// An event's share of a sample (see adds below).
	type eventAdd struct {
		event int // index in events
		value int64
	}
	var adds []eventAdd
	lastRead := map[uint64]uint64{} // by event id: its count at its previous sample
	same := map[string]*profile.Sample{}
	var key []byte
	var stack []*profile.Location
	var unwound []uint64
	err = f.Records(func(r *Record) bool {
		if r.Type != RecordSample {
			return true
		}
		if _, ok := attrIndex[r.Attr]; !ok && len(r.Group) == 0 {
			return true // the dummy event's
		}
		nsamples++
		// What the sample adds to each event: its period to its own,
		// or, for a group whose leader samples, to each event of the
		// group what it counted since that event's previous sample (as
		// perf report counts them; the first sample adds what was
		// counted since the start).
		adds = adds[:0]
		for _, g := range r.Group {
			if a := f.byID[g.ID]; a != nil {
				if _, ok := attrIndex[a]; !ok {
					continue
				}
				d := g.Value - lastRead[g.ID]
				if g.Value < lastRead[g.ID] {
					d = 0
				}
				lastRead[g.ID] = g.Value
				adds = append(adds, eventAdd{attrIndex[a], int64(d)})
			}
		}
		if len(adds) == 0 {
			adds = append(adds, eventAdd{attrIndex[r.Attr], int64(r.Period)})
		}
		pids[r.PID]++
		if r.Time != 0 {
			if first == 0 || r.Time < first {
				first = r.Time
			}
			last = max(last, r.Time)
		}
		stack = stack[:0]
		frames := r.Callchain
		if unw != nil && len(r.RegsUser) > 0 {
			// The kernel's callchain (to its user context marker), then
			// the user stack unwound, unless the callchain has a longer
			// user part of its own.
			kernel, user := r.Callchain, 0
			if k := slices.Index(r.Callchain, markerUser); k >= 0 {
				kernel, user = r.Callchain[:k], len(r.Callchain)-k-1
			}
			unwound = append(append(unwound[:0], kernel...), markerUser)
			unwound = unw.unwind(unwound, r.PID, r.RegsUser, r.StackUser)
			if len(unwound)-len(kernel)-1 > user {
				frames = unwound
			}
		}
		if len(frames) == 0 {
			frames = []uint64{r.IP}
		}
		exact := true
		for _, ip := range frames {
			if IsContextMarker(ip) {
				// The first frame of a context is where the thread was
				// in it (user code at its entry to the kernel), not a
				// return address.
				exact = true
				continue
			}
			if !exact && ip > 0 {
				ip-- // a return address: the call is before it
			}
			exact = false
			if l := replayedLocation(r.PID, ip, r.Time); l != nil {
				stack = append(stack, l)
				continue
			}
			stack = append(stack, location(r.PID, ip))
		}
		if len(stack) == 0 {
			return true
		}
		c := commOf(commAt[r.TID], comm[r.TID], r.Time)
		if c == "" {
			c = commOf(commAt[r.PID], comm[r.PID], r.Time)
		}
		// Samples with the same stack, thread and command are one sample
		// with the counts added: memory grows with the distinct stacks,
		// not the length of the recording.
		key = binary.LittleEndian.AppendUint32(key[:0], r.PID)
		key = binary.LittleEndian.AppendUint32(key, r.TID)
		key = append(append(key, c...), 0)
		for _, l := range stack {
			key = binary.LittleEndian.AppendUint64(key, l.ID)
		}
		s := same[string(key)]
		if s != nil {
			for _, a := range adds {
				s.Value[2*a.event]++
				s.Value[2*a.event+1] += a.value
			}
			return true
		}
		vals := make([]int64, len(p.SampleType))
		for _, a := range adds {
			vals[2*a.event]++
			vals[2*a.event+1] += a.value
		}
		s = &profile.Sample{Location: slices.Clone(stack), Value: vals,
			NumLabel: map[string][]int64{"pid": {int64(r.PID)}, "tid": {int64(r.TID)}}}
		if c != "" {
			s.Label = map[string][]string{"comm": {c}}
		}
		same[string(key)] = s
		p.Sample = append(p.Sample, s)
		return true
	})
	if errors.As(err, &damaged) {
		if nsamples == 0 {
			return nil, nil, err
		}
		in := ""
		if damaged.File != f.Name {
			in = damaged.File + ": "
		}
		conv.Notes = append(conv.Notes, fmt.Sprintf("%s%s at offset %#x: the records after it are lost, the profile has the %d samples read", in, damaged.Msg, damaged.Off, nsamples))
	} else if err != nil {
		return nil, nil, err
	}
	if f.Unfinished {
		if nsamples == 0 {
			return nil, nil, f.errorf(f.dataOff, "the recording was not finished (perf record was stopped before it completed the file) and has no samples")
		}
		conv.Notes = append(conv.Notes, fmt.Sprintf("the recording was not finished (perf record was stopped before it completed the file): read to its last whole record, %d samples, without the build IDs and event names perf writes at the end", nsamples))
	}
	if last > first {
		p.DurationNanos = int64(last - first)
	}
	for pid := range pids {
		if m := proc.perfMap(pid, comm[pid]); m != "" {
			conv.JITFiles = append(conv.JITFiles, m)
		}
	}
	slices.Sort(conv.JITFiles)
	if len(p.Mapping) == 0 {
		p.Mapping = []*profile.Mapping{{ID: 1}}
	}
	putMainFirst(p, func() *profile.Mapping {
		// The executable of the process with the most samples that has
		// one (not the kernel's idle task; a JVM's java launcher, though
		// its time is in libjvm.so and JIT code; python3, not the shell
		// that started it), or of its parent, if it forked without exec.
		byCount := slices.Collect(maps.Keys(pids))
		slices.SortFunc(byCount, func(a, b uint32) int {
			return cmp.Or(cmp.Compare(pids[b], pids[a]), cmp.Compare(a, b))
		})
		for _, pid := range byCount {
			for hops := 0; hops < 64; hops++ {
				if mm := image[pid]; mm != nil {
					return mappingOf(mm, true)
				}
				pp, ok := parent[pid]
				if !ok || pp == pid {
					break
				}
				pid = pp
			}
		}
		return nil
	})
	return p, conv, p.CheckValid()
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

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// kallsyms is a kernel symbol table, sorted by address.
type kallsyms struct {
	addrs []uint64
	names []string
	delta uint64 // the recorded boot's addresses less the table's
}

func (k *kallsyms) empty() bool { return len(k.addrs) == 0 }

// relocate makes the table one of the boot recorded: the kernel placed
// at another address (KASLR) had symbol sym at addr, where the table has
// it elsewhere. An unknown sym leaves the table as it is.
func (k *kallsyms) relocate(sym string, addr uint64) {
	if sym == "" {
		return
	}
	for i, n := range k.names {
		if n == sym {
			k.delta = addr - k.addrs[i]
			return
		}
	}
}

// lookup returns the name of the symbol at or below addr.
func (k *kallsyms) lookup(addr uint64) string {
	addr -= k.delta
	i, found := slices.BinarySearch(k.addrs, addr)
	if !found {
		i--
	}
	if i < 0 {
		return ""
	}
	return k.names[i]
}

// readKallsyms reads the text symbols of /proc/kallsyms ("ADDRESS TYPE
// NAME", then a module name for module symbols) with a non-zero address
// (zeros are what an unprivileged reader sees).
func readKallsyms(path string) (*kallsyms, error) {
	fd, err := regfile.OpenLimited(path, 256<<20) // a FIFO would block, /dev/urandom never end
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	k := &kallsyms{}
	sc := bufio.NewScanner(fd)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || (fields[1] != "t" && fields[1] != "T") {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		k.addrs = append(k.addrs, addr)
		k.names = append(k.names, fields[2])
	}
	idx := make([]int, len(k.addrs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(k.addrs[a], k.addrs[b]) })
	addrs, names := make([]uint64, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		addrs[i], names[i] = k.addrs[j], k.names[j]
	}
	k.addrs, k.names = addrs, names
	return k, sc.Err()
}

// A timedComm is a command a thread had from a time on.
type timedComm struct {
	time uint64
	comm string
}

// commOf returns the command a thread had at time t, by its commands
// cs (in time order), or last, its last, when cs does not tell (one
// command, samples without times).
func commOf(cs []timedComm, last string, t uint64) string {
	if len(cs) < 2 || t == 0 {
		return last
	}
	i, _ := slices.BinarySearchFunc(cs, t, func(c timedComm, t uint64) int {
		if c.time <= t {
			return -1
		}
		return 1
	})
	return cs[max(i-1, 0)].comm
}

// isExecutable reports whether the mapped file is an executable's: not a
// shared library, the kernel or the vDSO (their names in brackets) or
// anonymous memory.
func isExecutable(file string) bool {
	base := filepath.Base(file)
	return file != "" && !strings.HasPrefix(base, "[") && !strings.Contains(base, ".so")
}

// putMainFirst moves to the front the mapping pprof should take for the
// main binary (it takes the first): the one main returns (added to the
// profile), or if it returns nil, the executable with the most samples
// at its own code, not a shared library, the kernel or anonymous memory.
func putMainFirst(p *profile.Profile, main func() *profile.Mapping) {
	best := -1
	if m := main(); m != nil {
		best = slices.Index(p.Mapping, m)
	}
	if best < 0 {
		count := map[*profile.Mapping]int{}
		for _, s := range p.Sample {
			if m := s.Location[0].Mapping; m != nil {
				count[m]++
			}
		}
		for i, m := range p.Mapping {
			if isExecutable(m.File) && (best < 0 || count[m] > count[p.Mapping[best]]) {
				best = i
			}
		}
	}
	if best > 0 {
		m := p.Mapping[best]
		copy(p.Mapping[1:best+1], p.Mapping[:best])
		p.Mapping[0] = m
	}
	for i, m := range p.Mapping {
		m.ID = uint64(i + 1)
	}
}
