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
	parent map[uint32]uint32      // of each process forked, by pid
	comm   map[uint32]string      // by tid: the last
	// By tid, each command it had and from when (in time order): exec
	// changes a process's (sh -c 'exec java ...'), prctl a thread's.
	commAt map[uint32][]timedComm
	kernel []*mmapping          // the kernel's and its modules'
	image  map[uint32]*mmapping // by pid: the executable it runs (the first mapped since its exec)
	proc   procfs.FS
	// The kernel's relocation: the address its MMAP record gives a symbol
	// (_text: the record's file name is the kernel's followed by it),
	// which a symbol table of another boot (KASLR) has elsewhere.
	refSym  string
	refAddr uint64
	// damaged is the error of a damaged record that ended a file's side
	// records: the mappings before it are kept.
	damaged *FormatError
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

// sideRecord is what the scan keeps of a side record until it has them
// all in time order.
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

// Scan reads the side records of the recording (MMAP, MMAP2, COMM, FORK)
// in the order of their times (see Record.Time): a process that moved to
// another CPU when it exec'd may have its new executable's MMAP before
// the COMM of its exec in the file; without times, in the file's order.
// proc is the proc file system (/proc) through which the JIT files of
// recorded processes still running in containers (other mount
// namespaces) are found, as perf report finds them; "" takes the files
// as recorded. A damaged record ends its file: the records before it
// are kept, and the samples before it read by Profile.
func (f *File) Scan(proc string) (*Recording, error) {
	var side []sideRecord
	err := f.records(false, func(r *Record) bool {
		switch r.Type {
		case RecordMMAP, RecordMMAP2:
			side = append(side, sideRecord{typ: r.Type, misc: r.Misc, prot: r.Prot, pid: r.PID, tid: r.TID, time: r.Time,
				addr: r.Addr, len: r.Len, pgoff: r.Pgoff, name: r.Filename, buildID: r.BuildID})
		case RecordComm:
			side = append(side, sideRecord{typ: r.Type, exec: r.Exec, pid: r.PID, tid: r.TID, time: r.Time, name: r.Comm})
		case RecordFork:
			side = append(side, sideRecord{typ: r.Type, pid: r.PID, tid: r.TID, ppid: r.PPID, ptid: r.PTID, time: r.Time})
		}
		return true
	})
	rec := &Recording{f: f, procs: map[uint32][]*mmapping{}, parent: map[uint32]uint32{}, comm: map[uint32]string{},
		commAt: map[uint32][]timedComm{}, image: map[uint32]*mmapping{}, proc: procfs.New(proc)}
	if !errors.As(err, &rec.damaged) && err != nil {
		return nil, err
	}
	slices.SortStableFunc(side, func(a, b sideRecord) int { return cmp.Compare(a.time, b.time) })
	type jitMMap struct {
		pid  uint32
		file string
	}
	var jitMMaps []jitMMap // the jitdumps mapped, in order
	recorded := map[uint32]bool{}
	for i := range side {
		rec.side(&side[i], recorded, func(pid uint32, file string) { jitMMaps = append(jitMMaps, jitMMap{pid, file}) })
	}
	rec.PIDs = slices.Sorted(maps.Keys(recorded))
	seen := map[string]bool{}
	for _, m := range jitMMaps {
		if file := rec.proc.Path(m.pid, rec.comm[m.pid], m.file); !seen[file] {
			seen[file] = true
			rec.JITDumps = append(rec.JITDumps, file)
		}
	}
	for _, list := range rec.procs {
		// A later mapping at the same place replaces an earlier one.
		slices.SortStableFunc(list, func(a, b *mmapping) int { return cmp.Compare(a.start, b.start) })
	}
	return rec, nil
}

// side takes in one side record; jitDump is told of each jitdump mapped.
func (rec *Recording) side(r *sideRecord, recorded map[uint32]bool, jitDump func(pid uint32, file string)) {
	if r.pid != ^uint32(0) {
		recorded[r.pid] = true
	}
	switch r.typ {
	case RecordMMAP, RecordMMAP2:
		exec := r.prot&4 != 0 || (r.typ == RecordMMAP && r.misc&(1<<13) == 0)
		base := filepath.Base(r.name)
		if strings.HasPrefix(base, "jit-") && strings.HasSuffix(base, ".dump") {
			jitDump(r.pid, r.name)
			return
		}
		if !exec || r.len == 0 {
			return
		}
		mm := &mmapping{start: r.addr, limit: r.addr + r.len, offset: r.pgoff, file: r.name, buildID: r.buildID}
		if r.pid == ^uint32(0) { // the kernel and its modules
			if sym, ok := strings.CutPrefix(r.name, "[kernel.kallsyms]"); ok {
				mm.file, mm.offset = "[kernel.kallsyms]", 0
				if sym != "" && rec.refSym == "" {
					rec.refSym, rec.refAddr = sym, r.pgoff
				}
			}
			rec.kernel = append(rec.kernel, mm)
			return
		}
		if perfmap.Anonymous(r.name) {
			mm.file = ""
		}
		rec.procs[r.pid] = append(rec.procs[r.pid], mm)
		if _, ok := rec.image[r.pid]; !ok && isExecutable(mm.file) {
			rec.image[r.pid] = mm
		}
	case RecordComm:
		rec.comm[r.tid] = r.name
		rec.commAt[r.tid] = append(rec.commAt[r.tid], timedComm{r.time, r.name})
		if r.exec && r.pid == r.tid {
			delete(rec.image, r.pid) // the next executable mapped is the new image's
		}
	case RecordFork:
		if r.ppid != r.pid { // a new process, not a thread
			rec.parent[r.pid] = r.ppid
		}
		// The new thread has its parent's command until it sets its own
		// (threads name themselves after they start).
		if c := cmp.Or(rec.comm[r.ptid], rec.comm[r.ppid]); c != "" && r.tid != r.ptid {
			rec.commAt[r.tid] = append(rec.commAt[r.tid], timedComm{r.time, c})
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
// kernel's.
func (rec *Recording) lookup(pid uint32, addr uint64) *mmapping {
	if addr >= 1<<63 {
		return find(rec.kernel, addr)
	}
	for hops := 0; hops < 64; hops++ {
		if mm := find(rec.procs[pid], addr); mm != nil {
			return mm
		}
		pp, ok := rec.parent[pid]
		if !ok || pp == pid {
			break
		}
		pid = pp
	}
	return nil
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
// t.
func (rec *Recording) commAtTime(pid, tid uint32, t uint64) string {
	if c := commOf(rec.commAt[tid], rec.comm[tid], t); c != "" {
		return c
	}
	return commOf(rec.commAt[pid], rec.comm[pid], t)
}

// mainImage returns the mapping of the executable of the process with the
// most samples (by pids) that has one, or of its parent, if it forked
// without exec: not the kernel's idle task; a JVM's java launcher,
// though its time is in libjvm.so and JIT code; python3, not the shell
// that started it.
func (rec *Recording) mainImage(pids map[uint32]int) *mmapping {
	byCount := slices.Collect(maps.Keys(pids))
	slices.SortFunc(byCount, func(a, b uint32) int {
		return cmp.Or(cmp.Compare(pids[b], pids[a]), cmp.Compare(a, b))
	})
	for _, pid := range byCount {
		for hops := 0; hops < 64; hops++ {
			if mm := rec.image[pid]; mm != nil {
				return mm
			}
			pp, ok := rec.parent[pid]
			if !ok || pp == pid {
				break
			}
			pid = pp
		}
	}
	return nil
}

// A timedComm is a command a thread had from a time on.
type timedComm struct {
	time uint64
	comm string
}

// commOf returns the command a thread had at time t, by its commands
// cs (in time order), or last, its last, when cs does not tell (one
// command, samples without times). A process forked without exec has
// no COMM record of its own, only the command it had from its parent
// (see Recording.side): that one.
func commOf(cs []timedComm, last string, t uint64) string {
	if last == "" && len(cs) > 0 && (len(cs) < 2 || t == 0) {
		return cs[len(cs)-1].comm
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
