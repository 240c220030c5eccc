package perfdata

import (
	"cmp"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/cfi"
	"github.com/jitpprof/pprof/internal/perfmap"
	"github.com/jitpprof/pprof/internal/procfs"
)

// A Recording is what the side records of a perf.data recording say:
// the processes it recorded, their executable mappings over time, their
// commands and parents, where the kernel was, and the JIT files the
// processes mapped. [File.Scan] reads it in a first pass over the
// records; [Recording.Profile] then turns the samples into a profile.
type Recording struct {
	f *File
	// JITDumps are the jitdump files the recorded processes mapped
	// (perf's convention: a JIT runtime maps its jit-PID.dump so that
	// perf sees it), as they are found now (a process still running in a
	// container: through /proc/PID/root), in order.
	JITDumps []string
	// PIDs are the processes the recording has records of (their
	// mappings, commands or forks), in order: the JIT files named after
	// other processes (perf-PID.map, jit-PID.dump) are not theirs.
	PIDs []uint32

	procs  map[uint32][]*mmapping // executable mappings by pid, sorted by start
	spans  map[uint32][]span      // by pid: which of procs holds each address (see spansOf)
	parent map[uint32]uint32      // of each process forked, by pid
	// Commands: each thread's, by tid, the last and how many it had;
	// and each it had from when, sorted by tid and then time (exec
	// changes a process's, sh -c 'exec java ...', prctl a thread's).
	threads map[uint32]thread
	commAt  []timedComm
	names   interner             // of commands and files
	kernel  []*mmapping          // the kernel's and its modules'
	image   map[uint32]*mmapping // by pid: the executable it runs (the first mapped since its exec)
	proc    procfs.FS
	// The kernel's relocation: the address its MMAP record gives a symbol
	// (_text: the record's file name is the kernel's followed by it),
	// which a symbol table of another boot (KASLR) has elsewhere.
	refSym  string
	refAddr uint64
	// damaged is the error of a damaged record that ended a file's side
	// records: the mappings before it are kept.
	damaged *FormatError
	// sideBand sums up what was lost, and whether context switches were
	// recorded (see offcpu.go).
	sideBand sideBand
	// notes say what the limits of side records left out (see limits.go).
	notes    []string
	recorded map[uint32]bool  // the pids of PIDs
	jitSeen  map[jitMMap]bool // the jitdumps mapped, once each
	jitMMaps []jitMMap        // in order
	over     map[uint32]bool  // processes and threads past a limit, noted once
}

// A thread is what the recording says of one thread's commands.
type thread struct {
	last uint32 // its last command by a COMM record of its own (in names), or noName
	hist uint32 // the last command of its history (commAt)
	n    uint32 // the commands of its history
}

// A jitMMap is a jitdump mapped by a process.
type jitMMap struct {
	pid  uint32
	file string
}

// mmapping is one executable mapping of a process.
type mmapping struct {
	start, limit, offset uint64
	file                 string
	buildID              []byte
	// The file's call frame information, once the unwinder looked for it
	// (nil if there is none to use).
	cfi      *cfi.File
	cfiKnown bool
}

// sideRecord is a side record as the scan applies it.
type sideRecord struct {
	typ              uint32
	misc             uint16
	exec             bool
	prot             uint32
	pid, tid         uint32
	ppid, ptid       uint32
	time             uint64
	addr, len, pgoff uint64
	name             string // the file mapped, or the command
	buildID          []byte
}

// newRecording returns the empty recording of f, whose processes' files
// are found through proc.
func newRecording(f *File, proc procfs.FS) *Recording {
	return &Recording{f: f, procs: map[uint32][]*mmapping{}, parent: map[uint32]uint32{}, threads: map[uint32]thread{},
		image: map[uint32]*mmapping{}, proc: proc, recorded: map[uint32]bool{}, jitSeen: map[jitMMap]bool{}, over: map[uint32]bool{}}
}

// Scan reads the side records of the recording (MMAP, MMAP2, COMM, FORK)
// in the order of their times (see Record.Time): a process that moved to
// another CPU when it exec'd may have its new executable's MMAP before
// the COMM of its exec in the file; without times, in the file's order.
// They are put in order as perf report does, a round at a time (see
// sideQueue), so that memory follows what the records say, not how many
// there are. proc is the proc file system (/proc) through which the JIT
// files of recorded processes still running in containers (other mount
// namespaces) are found, as perf report finds them; "" takes the files
// as recorded. A damaged record ends its file: the records before it
// are kept, and the samples before it read by Profile.
func (f *File) Scan(proc string) (*Recording, error) {
	rec := newRecording(f, procfs.New(proc))
	q := &sideQueue{rec: rec}
	err := f.records(false, q.record)
	if !errors.As(err, &rec.damaged) && err != nil {
		return nil, err
	}
	q.flush(^uint64(0))
	rec.done()
	return rec, nil
}

// done completes the recording once every side record is applied.
func (rec *Recording) done() {
	rec.PIDs = slices.Sorted(maps.Keys(rec.recorded))
	rec.recorded, rec.jitSeen, rec.over = nil, nil, nil
	for _, m := range rec.jitMMaps {
		file := rec.proc.Path(m.pid, rec.lastComm(m.pid), m.file)
		if !slices.Contains(rec.JITDumps, file) {
			rec.JITDumps = append(rec.JITDumps, file)
		}
	}
	rec.jitMMaps = nil
	rec.index()
	// Each thread's commands, in the order they were applied (time).
	slices.SortStableFunc(rec.commAt, func(a, b timedComm) int { return cmp.Compare(a.tid, b.tid) })
	rec.commAt = slices.Clip(rec.commAt)
}

// index sorts the processes' mappings by start and makes their spans,
// once all side records are in.
func (rec *Recording) index() {
	rec.spans = make(map[uint32][]span, len(rec.procs))
	for pid, list := range rec.procs {
		// A later mapping at the same place replaces an earlier one.
		slices.SortStableFunc(list, func(a, b *mmapping) int { return cmp.Compare(a.start, b.start) })
		rec.spans[pid] = spansOf(list)
	}
}

// A span is a range of addresses one mapping holds.
type span struct {
	start, limit uint64
	mm           *mmapping
}

// spansOf returns the disjoint spans, sorted, of the mappings of list
// (sorted by start; of equal starts, the later last): each address in
// the mapping that starts highest below it and holds it, the later of
// equal starts, as find chooses. A mapping inside another splits it:
// perf inject --jit maps thousands of small files into node's text,
// one per V8 builtin there, and the text above them is still node's.
// O(n log n) to build, 2n spans at most; a lookup is a binary search.
func spansOf(list []*mmapping) []span {
	var out []span
	var stack []*mmapping // the mappings holding the current address, the one holding it on top
	at := uint64(0)
	// fill adds the spans from at up to end, popping the mappings that
	// end before it.
	fill := func(end uint64) {
		for len(stack) > 0 && at < end {
			top := stack[len(stack)-1]
			if top.limit <= at {
				stack = stack[:len(stack)-1]
				continue
			}
			to := min(top.limit, end)
			out = append(out, span{at, to, top})
			at = to
		}
		at = max(at, end)
	}
	for _, mm := range list {
		if mm.limit <= mm.start {
			continue
		}
		fill(mm.start)
		stack = append(stack, mm)
	}
	fill(^uint64(0))
	return out
}

// findSpan returns the mapping of the span of spans (from spansOf) that
// holds addr.
func findSpan(spans []span, addr uint64) *mmapping {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].limit > addr })
	if i < len(spans) && spans[i].start <= addr {
		return spans[i].mm
	}
	return nil
}

// side takes in one side record.
func (rec *Recording) side(r *sideRecord) {
	if r.pid != ^uint32(0) {
		rec.recorded[r.pid] = true
	}
	switch r.typ {
	case RecordMMAP, RecordMMAP2:
		exec := r.prot&4 != 0 || (r.typ == RecordMMAP && r.misc&(1<<13) == 0)
		base := filepath.Base(r.name)
		if strings.HasPrefix(base, "jit-") && strings.HasSuffix(base, ".dump") {
			if m := (jitMMap{r.pid, r.name}); !rec.jitSeen[m] && len(rec.jitMMaps) < maxJITDumps {
				rec.jitSeen[m] = true
				rec.jitMMaps = append(rec.jitMMaps, m)
			}
			return
		}
		if !exec || r.len == 0 {
			return
		}
		mm := &mmapping{start: r.addr, limit: r.addr + r.len, offset: r.pgoff, file: rec.names.string(r.name), buildID: r.buildID}
		if r.pid == ^uint32(0) { // the kernel and its modules
			if sym, ok := strings.CutPrefix(r.name, "[kernel.kallsyms]"); ok {
				mm.file, mm.offset = "[kernel.kallsyms]", 0
				if sym != "" && rec.refSym == "" {
					rec.refSym, rec.refAddr = sym, r.pgoff
				}
			}
			rec.kernel, _ = rec.addMapping(r.pid, rec.kernel, mm)
			return
		}
		if perfmap.Anonymous(r.name) {
			mm.file = ""
		}
		if rec.procs[r.pid], mm = rec.addMapping(r.pid, rec.procs[r.pid], mm); mm == nil {
			return
		}
		if _, ok := rec.image[r.pid]; !ok && isExecutable(mm.file) {
			rec.image[r.pid] = mm
		}
	case RecordComm:
		rec.addComm(r.tid, r.time, rec.names.index(r.name), true)
		if r.exec && r.pid == r.tid {
			delete(rec.image, r.pid) // the next executable mapped is the new image's
		}
	case RecordFork:
		if r.ppid != r.pid { // a new process, not a thread
			rec.parent[r.pid] = r.ppid
		}
		// The new thread has its parent's command until it sets its own
		// (threads name themselves after they start).
		if r.tid == r.ptid {
			break
		}
		for _, from := range []uint32{r.ptid, r.ppid} {
			if th, ok := rec.threads[from]; ok && th.last != noName {
				rec.addComm(r.tid, r.time, th.last, false)
				break
			}
		}
	}
}

// AnonymousCode reports whether a recorded process had executable
// anonymous memory: JIT code, which only the JIT objects name.
func (rec *Recording) AnonymousCode() bool {
	for _, list := range rec.procs {
		for _, mm := range list {
			if mm.file == "" {
				return true
			}
		}
	}
	return false
}

// lookup returns the mapping of process pid (or of the process it forked
// from, if it has none there) that holds addr; kernel addresses are the
// kernel's. a remembers the processes walked.
func (rec *Recording) lookup(a *ancestry, pid uint32, addr uint64) *mmapping {
	if addr >= 1<<63 {
		return find(rec.kernel, addr)
	}
	for hops := 0; hops < 64; hops++ {
		if mm := findSpan(rec.spans[pid], addr); mm != nil {
			return mm
		}
		pp, ok := a.up(pid)
		if !ok {
			break
		}
		pid = pp
	}
	return nil
}

// An ancestry finds the processes a process forked from that have
// mappings, skipping those between (a chain of thousands of processes
// forked from each other, which never mapped anything of their own),
// each process walked once. The zero ancestry of a Recording is ready.
type ancestry struct {
	rec   *Recording
	near  map[uint32]uint32 // by pid: the nearest it forked from with mappings, or ^0
	chain []uint32
}

// up returns the nearest process pid forked from (itself not) that has
// mappings, if any.
func (a *ancestry) up(pid uint32) (uint32, bool) {
	if a.near == nil {
		a.near = map[uint32]uint32{}
	}
	if v, ok := a.near[pid]; ok {
		return v, v != ^uint32(0)
	}
	rec := a.rec
	a.chain = a.chain[:0]
	found := ^uint32(0)
	for p := pid; len(a.chain) < 1<<16; {
		a.chain = append(a.chain, p)
		pp, has := rec.parent[p]
		if !has || pp == p {
			break
		}
		if len(rec.procs[pp]) > 0 {
			found = pp
			break
		}
		if v, ok := a.near[pp]; ok {
			found = v
			break
		}
		p = pp
	}
	for _, p := range a.chain {
		a.near[p] = found
	}
	return found, found != ^uint32(0)
}

// find returns the mapping of list (sorted by start) that holds addr: of
// those starting at or below addr, the highest (and of equal starts the
// latest); a few steps back are enough for the small overlaps real
// processes have.
func find(list []*mmapping, addr uint64) *mmapping {
	i := sort.Search(len(list), func(i int) bool { return list[i].start > addr })
	for j := i - 1; j >= 0 && j >= i-64; j-- {
		if addr < list[j].limit {
			return list[j]
		}
	}
	return nil
}

// commAtTime returns the command of thread tid (of process pid) at time
// t; cc remembers the last thread's commands.
func (rec *Recording) commAtTime(cc *commCache, pid, tid uint32, t uint64) string {
	if cc.pid != pid || cc.tid != tid || !cc.ok {
		*cc = commCache{pid: pid, tid: tid, ok: true, tidCS: rec.commsOf(tid), pidCS: rec.commsOf(pid),
			tidLast: rec.lastComm(tid), pidLast: rec.lastComm(pid)}
	}
	if c := commOf(cc.tidCS, cc.tidLast, t, &rec.names); c != "" {
		return c
	}
	return commOf(cc.pidCS, cc.pidLast, t, &rec.names)
}

// A commCache holds the commands of the thread a sample was last of.
type commCache struct {
	pid, tid         uint32
	ok               bool
	tidCS, pidCS     []timedComm
	tidLast, pidLast string
}

// commsOf returns the commands thread tid had, in time order.
func (rec *Recording) commsOf(tid uint32) []timedComm {
	lo, _ := slices.BinarySearchFunc(rec.commAt, tid, func(c timedComm, tid uint32) int { return cmp.Compare(c.tid, tid) })
	hi := lo
	for hi < len(rec.commAt) && rec.commAt[hi].tid == tid {
		hi++
	}
	return rec.commAt[lo:hi]
}

// lastComm returns the last command thread tid had by a COMM record of
// its own, "" if none.
func (rec *Recording) lastComm(tid uint32) string {
	if th, ok := rec.threads[tid]; ok && th.last != noName {
		return rec.names.name(th.last)
	}
	return ""
}

// mainImage returns the mapping of the executable of the process with the
// most samples (by pids) that has one, or of its parent, if it forked
// without exec: not the kernel's idle task; a JVM's java launcher,
// though its time is in libjvm.so and JIT code; python3, not the shell
// that started it.
func (rec *Recording) mainImage(pids map[uint32]int) *mmapping {
	type counted struct {
		pid uint32
		n   int
	}
	byCount := make([]counted, 0, len(pids))
	for pid, n := range pids {
		byCount = append(byCount, counted{pid, n})
	}
	slices.SortFunc(byCount, func(a, b counted) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.pid, b.pid)) })
	walked := map[uint32]bool{} // processes without an image, whose ancestors were walked
	for _, c := range byCount {
		pid := c.pid
		for hops := 0; hops < 64 && !walked[pid]; hops++ {
			if mm := rec.image[pid]; mm != nil {
				return mm
			}
			walked[pid] = true
			pp, ok := rec.parent[pid]
			if !ok || pp == pid {
				break
			}
			pid = pp
		}
	}
	return nil
}

// jitProcess reports whether process pid, or one it forked from, had
// executable anonymous memory: JIT code, which its perf map would name.
func (rec *Recording) jitProcess(a *ancestry, pid uint32) bool {
	for hops := 0; hops < 64; hops++ {
		if slices.ContainsFunc(rec.procs[pid], func(mm *mmapping) bool { return mm.file == "" }) {
			return true
		}
		pp, ok := a.up(pid)
		if !ok {
			break
		}
		pid = pp
	}
	return false
}

// A timedComm is a command a thread had from a time on.
type timedComm struct {
	tid  uint32
	comm uint32 // in Recording.names
	time uint64
}

// commOf returns the command a thread had at time t, by its commands
// cs (in time order), or last, its last, when cs does not tell (one
// command, samples without times). A process forked without exec has
// no COMM record of its own, only the command it had from its parent
// (see Recording.side): that one.
func commOf(cs []timedComm, last string, t uint64, names *interner) string {
	if last == "" && len(cs) > 0 && (len(cs) < 2 || t == 0) {
		return names.name(cs[len(cs)-1].comm)
	}
	if len(cs) < 2 || t == 0 {
		return last
	}
	i, _ := slices.BinarySearchFunc(cs, t, func(c timedComm, t uint64) int {
		if c.time <= t {
			return -1
		}
		return 1
	})
	return names.name(cs[max(i-1, 0)].comm)
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
			if len(s.Location) == 0 {
				continue
			}
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
