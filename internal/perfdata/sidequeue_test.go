package perfdata

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/procfs"
)

// TestSideQueueAsFullSort: putting the side records in time order a
// round at a time gives the recording that sorting them all at once
// gives (the oracle: every side record collected, stably sorted by time,
// then applied), on the real recordings of testdata/perf/golden.
func TestSideQueueAsFullSort(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "perf", "golden", "*.data"))
	if len(paths) < 3 {
		t.Fatalf("golden recordings: %q", paths)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := open(t, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Scan("")
		if err != nil {
			t.Fatal(err)
		}
		var all []sideRecord
		rounds := 0
		f.records(false, func(r *Record) bool {
			switch r.Type {
			case RecordMMAP, RecordMMAP2, RecordComm, RecordFork:
				all = append(all, sideRecord{typ: r.Type, misc: r.Misc, exec: r.Exec, prot: r.Prot, pid: r.PID, tid: r.TID,
					ppid: r.PPID, ptid: r.PTID, time: r.Time, addr: r.Addr, len: r.Len, pgoff: r.Pgoff,
					name: r.Filename + r.Comm, buildID: slices.Clone(r.BuildID)})
			case RecordFinishedRound:
				rounds++
			}
			return true
		})
		slices.SortStableFunc(all, func(a, b sideRecord) int { return cmp.Compare(a.time, b.time) })
		want := newRecording(f, procfs.New(""))
		for i := range all {
			want.side(&all[i])
		}
		want.done()
		name := filepath.Base(path)
		if rounds == 0 {
			t.Errorf("%s: no FINISHED_ROUND records", name)
		}
		if g, w := describe(got), describe(want); g != w {
			t.Errorf("%s: a round at a time:\n%s\nall at once:\n%s", name, g, w)
		}
	}
}

// describe writes what a recording says of its processes, for
// comparisons.
func describe(rec *Recording) string {
	var b strings.Builder
	for _, pid := range slices.Sorted(func(yield func(uint32) bool) {
		for pid := range rec.procs {
			if !yield(pid) {
				return
			}
		}
	}) {
		for _, mm := range rec.procs[pid] {
			fmt.Fprintf(&b, "pid %d: [%#x, %#x) %#x %s %x\n", pid, mm.start, mm.limit, mm.offset, mm.file, mm.buildID)
		}
		if mm := rec.image[pid]; mm != nil {
			fmt.Fprintf(&b, "pid %d runs %s\n", pid, mm.file)
		}
		fmt.Fprintf(&b, "pid %d parent %d, last command %q\n", pid, rec.parent[pid], rec.lastComm(pid))
	}
	for _, c := range rec.commAt {
		fmt.Fprintf(&b, "tid %d: %q from %d\n", c.tid, rec.names.name(c.comm), c.time)
	}
	fmt.Fprintf(&b, "kernel %d mappings, pids %v, jitdumps %q, notes %q", len(rec.kernel), rec.PIDs, rec.JITDumps, rec.notes)
	return b.String()
}

// TestSideRecordLimits: a flood of one side record costs one entry; a
// process's mappings and a thread's commands stop at their limits, said
// once each.
func TestSideRecordLimits(t *testing.T) {
	var side []sideRecord
	for i := range 100000 {
		side = append(side, mmap2(10, uint64(i), 0x400000, 0x1000, "/bin/prog"), comm(10, 10, uint64(i), "prog", false))
	}
	for i := range maxMappings + 10 {
		side = append(side, mmap2(11, 1000000, 0x10000000+uint64(i)*0x1000, 0x1000, "/lib/x.so"))
	}
	for i := range maxComms + 10 {
		side = append(side, comm(12, 13, uint64(i), fmt.Sprint(i%2), false))
	}
	rec := synthetic([]Attr{cpuClock(true)}, side...)
	if n := len(rec.procs[10]); n != 1 {
		t.Errorf("a flood of one mapping: %d mappings", n)
	}
	if n := len(rec.procs[11]); n != maxMappings {
		t.Errorf("%d mappings, want %d", n, maxMappings)
	}
	n10, n13 := 0, 0
	for _, c := range rec.commAt {
		switch c.tid {
		case 10:
			n10++
		case 13:
			n13++
		}
	}
	if n10 != 1 || n13 != maxComms {
		t.Errorf("commands: %d of a flood of one, want 1; %d of a thread changing it, want %d", n10, n13, maxComms)
	}
	want := []string{
		"process or thread 11 has more than 65536 executable mappings: the later ones are left out",
		"process or thread 13 changed its command more than 4096 times: the later changes are left out",
	}
	if !slices.Equal(rec.notes, want) {
		t.Errorf("notes %q, want %q", rec.notes, want)
	}
	if got := rec.commAtTime(&commCache{}, 12, 13, uint64(maxComms-1)); got != fmt.Sprint((maxComms-1)%2) {
		t.Errorf("command at the last change kept: %q", got)
	}
}
