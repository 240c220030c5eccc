package perfdata

import (
	"cmp"
	"fmt"
	"slices"
)

// Limits on what the side records of one recording may make pprof keep:
// real processes are far below them, and a hostile recording of
// millions of records (a few KiB of them, compressed) past them costs
// what they allow, each said once.
const (
	// maxMappings bounds the executable mappings of one process (and of
	// the kernel and its modules): a JVM or browser maps a few
	// thousand.
	maxMappings = 1 << 16
	// maxComms bounds the commands one thread had over time.
	maxComms = 1 << 12
	// maxJITDumps bounds the jitdump files the processes mapped.
	maxJITDumps = 1 << 12
	// maxQueued bounds the side records waiting to be put in time
	// order (28 MiB of them).
	maxQueued = 1 << 19
)

// A sideQueue puts the side records of a recording in the order of their
// times before the Recording takes them in, as perf report does (its
// ordered events, tools/perf/util/ordered-events.c): perf writes a round
// of each CPU's buffer in turn, then a FINISHED_ROUND record, so that
// once a round is finished, every record up to the last time of the round
// before it is known. Records are held until then, compactly: a
// recording of millions of records holds about a round's worth at a
// time. Without rounds (per-thread files of perf record --threads, a
// hostile file), at most maxQueued are held, and the oldest half applied
// when there are more.
type sideQueue struct {
	rec      *Recording
	q        []queued
	maxTime  uint64 // the latest time so far
	lastTime uint64 // the latest at the FINISHED_ROUND before the last
	overflow bool
}

// queued is a side record waiting for its turn, its strings interned.
type queued struct {
	time             uint64
	addr, len, pgoff uint64
	pid, tid         uint32
	a, b             uint32 // MMAP: the file and build ID; COMM: the command; FORK: ppid, ptid
	prot             uint32
	misc             uint16
	typ              uint8
	exec             bool
}

// record takes in one record of the recording.
func (sq *sideQueue) record(r *Record) bool {
	rec := sq.rec
	rec.sideBand.scan(r)
	switch r.Type {
	case RecordMMAP, RecordMMAP2, RecordComm, RecordFork:
	case RecordFinishedRound:
		sq.flush(sq.lastTime)
		sq.lastTime = sq.maxTime
		return true
	default:
		return true
	}
	e := queued{time: r.Time, pid: r.PID, tid: r.TID, misc: r.Misc, typ: uint8(r.Type)}
	switch r.Type {
	case RecordMMAP, RecordMMAP2:
		e.addr, e.len, e.pgoff, e.prot = r.Addr, r.Len, r.Pgoff, r.Prot
		e.a, e.b = rec.names.index(r.Filename), rec.names.bytesIndex(r.BuildID)
	case RecordComm:
		e.a, e.exec = rec.names.index(r.Comm), r.Exec
	case RecordFork:
		e.a, e.b = r.PPID, r.PTID
	}
	sq.maxTime = max(sq.maxTime, r.Time)
	sq.q = append(sq.q, e)
	if len(sq.q) >= maxQueued {
		if !sq.overflow {
			sq.overflow = true
			rec.notes = append(rec.notes, fmt.Sprintf("more than %d side records (mappings, commands, forks) without a round (FINISHED_ROUND) to order them by: some may be taken out of time order", maxQueued))
		}
		sq.sort()
		sq.apply(len(sq.q) / 2)
	}
	return true
}

// sort puts the queue in time order, records of the same time in the
// order they came.
func (sq *sideQueue) sort() {
	slices.SortStableFunc(sq.q, func(a, b queued) int { return cmp.Compare(a.time, b.time) })
}

// flush applies the records up to time limit, in time order.
func (sq *sideQueue) flush(limit uint64) {
	sq.sort()
	n, _ := slices.BinarySearchFunc(sq.q, limit, func(e queued, t uint64) int {
		if e.time <= t {
			return -1
		}
		return 1
	})
	sq.apply(n)
}

// apply applies the first n records of the queue and drops them.
func (sq *sideQueue) apply(n int) {
	rec := sq.rec
	for i := range sq.q[:n] {
		e := &sq.q[i]
		r := sideRecord{typ: uint32(e.typ), misc: e.misc, exec: e.exec, prot: e.prot, pid: e.pid, tid: e.tid,
			time: e.time, addr: e.addr, len: e.len, pgoff: e.pgoff}
		switch r.typ {
		case RecordMMAP, RecordMMAP2:
			r.name, r.buildID = rec.names.name(e.a), rec.names.bytes(e.b)
		case RecordComm:
			r.name = rec.names.name(e.a)
		case RecordFork:
			r.ppid, r.ptid = e.a, e.b
		}
		rec.side(&r)
	}
	k := copy(sq.q, sq.q[n:])
	sq.q = sq.q[:k]
	if cap(sq.q) > 4*len(sq.q)+1024 {
		sq.q = slices.Clone(sq.q) // a burst is over: its room goes back
	}
}

// addMapping adds mm, a mapping of process pid (^0: the kernel), to its
// mappings list, unless list has maxMappings already, or ends with the
// same mapping (a flood of one record), and returns list and the mapping
// the process has there, nil if none was added.
func (rec *Recording) addMapping(pid uint32, list []*mmapping, mm *mmapping) ([]*mmapping, *mmapping) {
	for i := len(list) - 1; i >= 0 && i >= len(list)-8; i-- {
		o := list[i]
		if o.start != mm.start {
			continue
		}
		if o.limit == mm.limit && o.offset == mm.offset && o.file == mm.file && string(o.buildID) == string(mm.buildID) {
			return list, o // already the latest there
		}
		break
	}
	if len(list) >= maxMappings {
		rec.overLimit(pid, fmt.Sprintf("has more than %d executable mappings: the later ones are left out", maxMappings))
		return list, nil
	}
	return append(list, mm), mm
}

// addComm adds to the history of thread tid the command comm (in names)
// from time t; own says it comes from a COMM record of its own (not from
// its parent, at a fork).
func (rec *Recording) addComm(tid uint32, t uint64, comm uint32, own bool) {
	th, ok := rec.threads[tid]
	if !ok {
		th = thread{last: noName, hist: noName}
	}
	if own {
		th.last = comm
	}
	switch {
	case th.n > 0 && th.hist == comm: // no change
	case th.n >= maxComms:
		rec.overLimit(tid, fmt.Sprintf("changed its command more than %d times: the later changes are left out", maxComms))
	default:
		rec.commAt = append(rec.commAt, timedComm{tid: tid, comm: comm, time: t})
		th.hist = comm
		th.n++
	}
	rec.threads[tid] = th
}

// overLimit notes, once per process or thread id, what a limit left out.
func (rec *Recording) overLimit(id uint32, what string) {
	if rec.over[id] {
		return
	}
	rec.over[id] = true
	who := fmt.Sprintf("process or thread %d", id)
	if id == ^uint32(0) {
		who = "the kernel"
	}
	if len(rec.over) <= 8 {
		rec.notes = append(rec.notes, who+" "+what)
	} else if len(rec.over) == 9 {
		rec.notes = append(rec.notes, "more processes and threads are past the limits on side records; only the first 8 are named")
	}
}

// noName is the index of no string.
const noName = ^uint32(0)

// An interner keeps one copy of each command and file name, and build
// ID, of a recording: a flood of records repeating them costs an index
// each.
type interner struct {
	ids  map[string]uint32
	list []string
}

// index returns the index of s, noName for "".
func (in *interner) index(s string) uint32 {
	if s == "" {
		return noName
	}
	if i, ok := in.ids[s]; ok {
		return i
	}
	if in.ids == nil {
		in.ids = map[string]uint32{}
	}
	i := uint32(len(in.list))
	in.list = append(in.list, s)
	in.ids[s] = i
	return i
}

// bytesIndex returns the index of b, noName for nil.
func (in *interner) bytesIndex(b []byte) uint32 {
	if b == nil {
		return noName
	}
	if i, ok := in.ids[string(b)]; ok {
		return i
	}
	return in.index(string(b))
}

// name returns the string of index i.
func (in *interner) name(i uint32) string {
	if i == noName {
		return ""
	}
	return in.list[i]
}

// string returns the interned copy of s.
func (in *interner) string(s string) string { return in.name(in.index(s)) }

// bytes returns the bytes of index i, nil for noName; they must not be
// changed.
func (in *interner) bytes(i uint32) []byte {
	if i == noName {
		return nil
	}
	return []byte(in.list[i])
}
