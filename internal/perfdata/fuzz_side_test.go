package perfdata

import (
	"bytes"
	"testing"

	"github.com/jitpprof/pprof/internal/perftest"
)

// FuzzSideRecords: any data section of side records (MMAP, MMAP2, COMM,
// FORK, EXIT, FINISHED_ROUND, compressed or not; seeds under
// testdata/fuzz/FuzzSideRecords) is scanned and converted without a
// panic, and what the scan keeps stays within its limits: the mappings
// of a process, the commands of a thread, the jitdumps, the records held
// for ordering.
func FuzzSideRecords(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &perftest.Recording{Records: [][]byte{data}}
		b := r.Bytes()
		pf, err := Open(bytes.NewReader(b), int64(len(b)), "f.data")
		if err != nil {
			return
		}
		rec, err := pf.Scan("")
		if err != nil {
			return
		}
		for pid, list := range rec.procs {
			if len(list) > maxMappings {
				t.Fatalf("process %d: %d mappings", pid, len(list))
			}
		}
		if len(rec.kernel) > maxMappings || len(rec.JITDumps) > maxJITDumps {
			t.Fatalf("%d kernel mappings, %d jitdumps", len(rec.kernel), len(rec.JITDumps))
		}
		perThread := map[uint32]int{}
		for i, c := range rec.commAt {
			if perThread[c.tid]++; perThread[c.tid] > maxComms {
				t.Fatalf("thread %d: more than %d commands", c.tid, maxComms)
			}
			if i > 0 && (rec.commAt[i-1].tid > c.tid || rec.commAt[i-1].tid == c.tid && rec.commAt[i-1].comm == c.comm) {
				t.Fatalf("commands %+v then %+v: not sorted by thread, or a repeat kept", rec.commAt[i-1], c)
			}
		}
		if p, _, err := rec.Profile(Options{}); err == nil {
			if err := p.CheckValid(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
