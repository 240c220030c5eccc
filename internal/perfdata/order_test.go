package perfdata

import (
	"encoding/binary"
	"slices"
	"testing"
)

// TestSideRecordsInTimeOrder: perf writes the records of each CPU in
// turn, so a process that moved to another CPU when it exec'd can have
// the records of its new program before those of the shell that exec'd
// it. The real recording testdata/perf/golden/single.data (work,
// started by perf) gets, after work's exec and MMAP2, the records a
// shell run before would have had on another CPU: its exec's COMM and
// its MMAP2 of /usr/bin/dash, with earlier times. Records passes each
// side record's time from its sample_id trailer, and the main binary is
// still work, the program the process ran last.
func TestSideRecordsInTimeOrder(t *testing.T) {
	b := goldenRecording(t)
	le := binary.LittleEndian
	data, _ := dataSection(b)
	// The first COMM of an exec (work's) and the MMAP2 after it (work's code).
	var commOff, mmapOff int
	for off := 0; off < len(data); off += int(le.Uint16(data[off+6:])) {
		switch typ := le.Uint32(data[off:]); {
		case typ == RecordComm && le.Uint16(data[off+4:])&(1<<13) != 0 && commOff == 0:
			commOff = off
		case typ == RecordMMAP2 && commOff != 0:
			mmapOff = off
		}
		if mmapOff != 0 {
			break
		}
	}
	if commOff == 0 || mmapOff == 0 {
		t.Fatal("no COMM followed by an MMAP2 in single.data")
	}
	comm := data[commOff : commOff+int(le.Uint16(data[commOff+6:]))]
	mmap := data[mmapOff : mmapOff+int(le.Uint16(data[mmapOff+6:]))]
	// Their trailers: pid and tid, then the time (sample_type
	// IP|TID|TIME|CALLCHAIN|PERIOD).
	execTime := le.Uint64(comm[len(comm)-8:])
	if execTime == 0 || le.Uint64(mmap[len(mmap)-8:]) <= execTime {
		t.Fatalf("exec at %d, its MMAP2 at %d: not a real recording's times", execTime, le.Uint64(mmap[len(mmap)-8:]))
	}
	shComm := slices.Clone(comm)
	copy(shComm[16:24], "sh\x00\x00\x00\x00\x00\x00")
	le.PutUint64(shComm[len(shComm)-8:], execTime-2000)
	// MMAP2: header, pid, tid, addr, len, pgoff, 32 bytes (device, inode,
	// prot, flags), file name, trailer.
	dash := slices.Clone(mmap[:8+8+24+32])
	le.PutUint64(dash[16:], 0x5600_0000_0000) // addr: none of work's
	dash = append(dash, "/usr/bin/dash\x00\x00\x00"...)
	dash = append(dash, mmap[len(mmap)-16:]...)
	le.PutUint64(dash[len(dash)-8:], execTime-1000)
	le.PutUint16(dash[6:], uint16(len(dash)))

	end := mmapOff + len(mmap)
	moved := slices.Concat(data[:end], shComm, dash, data[end:])
	f, err := open(t, withData(b, moved))
	if err != nil {
		t.Fatal(err)
	}
	var times []uint64
	if err := f.Records(func(r *Record) bool {
		if r.Type == RecordComm && r.Exec {
			times = append(times, r.Time)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{execTime, execTime - 2000}; !slices.Equal(times, want) {
		t.Errorf("exec COMM times %d, want %d", times, want)
	}
	p, _, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Mapping[0].File, "/mnt/jitpprof-fixtures/perf/work"; got != want {
		t.Errorf("main binary %s, want %s", got, want)
	}
}

// TestCommOf: a thread's command at a time, from the commands it had.
func TestCommOf(t *testing.T) {
	var names interner
	tc := func(time uint64, c string) timedComm { return timedComm{comm: names.index(c), time: time} }
	cs := []timedComm{tc(0, "perf-exec"), tc(100, "sh"), tc(200, "java")}
	for _, tc := range []struct {
		cs   []timedComm
		time uint64
		want string
	}{
		{cs, 50, "perf-exec"},
		{cs, 100, "sh"},
		{cs, 150, "sh"},
		{cs, 200, "java"},
		{cs, 10000, "java"},
		{cs, 0, "last"},      // no time: the last
		{cs[1:], 50, "sh"},   // before the first: the first
		{cs[2:], 50, "last"}, // one: the last
		{cs[2:], 0, "last"},
		{nil, 50, "last"},
	} {
		if got := commOf(tc.cs, "last", tc.time, &names); got != tc.want {
			t.Errorf("commOf(%v, %d) = %q, want %q", tc.cs, tc.time, got, tc.want)
		}
	}
	// A process forked without exec: no COMM of its own, its parent's
	// command from the fork on.
	fromFork := []timedComm{tc(40, "nginx")}
	for _, tm := range []uint64{0, 30, 50} {
		if got := commOf(fromFork, "", tm, &names); got != "nginx" {
			t.Errorf("forked child at %d: %q, want its parent's nginx", tm, got)
		}
	}
}
