package perfdata

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/procfs"
	jprofile "github.com/jitpprof/pprof/profile"
)

// The converter's steps on synthetic records, no perf needed: a
// recording is made of side records given to Recording.side, then its
// samples are given to converter.record one by one.

// cpuClock is perf record's default event: cpu-clock, timed on
// CLOCK_MONOTONIC when monotonic.
func cpuClock(monotonic bool) Attr {
	return Attr{Type: 1, Config: 0, SampleType: SampleIP | SampleTID | SampleTime | SampleCallchain | SamplePeriod,
		Freq: true, UseClockID: monotonic, ClockID: clockMonotonic, IDs: []uint64{1}}
}

// synthetic returns the recording of the side records side, with events
// attrs.
func synthetic(attrs []Attr, side ...sideRecord) *Recording {
	f := &File{Name: "x.data", Attrs: attrs, BuildIDs: map[string][]byte{}, byID: map[uint64]*Attr{}}
	for i := range f.Attrs {
		for _, id := range f.Attrs[i].IDs {
			f.byID[id] = &f.Attrs[i]
		}
	}
	rec := newRecording(f, procfs.New(""))
	for i := range side {
		rec.side(&side[i])
	}
	rec.done()
	return rec
}

// mmap2 is an executable MMAP2 record of file at [addr, addr+n) in pid.
func mmap2(pid uint32, t, addr, n uint64, file string) sideRecord {
	return sideRecord{typ: RecordMMAP2, prot: 5, pid: pid, tid: pid, time: t, addr: addr, len: n, name: file}
}

// comm is a COMM record: thread tid of pid named c at time t.
func comm(pid, tid uint32, t uint64, c string, exec bool) sideRecord {
	return sideRecord{typ: RecordComm, pid: pid, tid: tid, time: t, name: c, exec: exec}
}

// fork is a FORK record: pid forked from ppid at time t.
func fork(pid, ppid uint32, t uint64) sideRecord {
	return sideRecord{typ: RecordFork, pid: pid, tid: pid, ppid: ppid, ptid: ppid, time: t}
}

// sample is a SAMPLE record of the first event.
func sample(rec *Recording, pid, tid uint32, t, period uint64, chain ...uint64) *Record {
	return &Record{Type: RecordSample, Attr: &rec.f.Attrs[0], PID: pid, TID: tid, Time: t, Period: period, IP: chain[len(chain)-1], Callchain: chain}
}

// convert runs the samples through a converter of rec.
func convert(t *testing.T, rec *Recording, opts Options, samples ...*Record) (*profile.Profile, *Conversion) {
	t.Helper()
	c := newConverter(rec, opts)
	for _, s := range samples {
		c.record(s)
	}
	p, conv, err := c.finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, conv
}

// stackOf writes a sample's stack as "FILE@ADDR" or "FUNC@ADDR", leaf
// first.
func stackOf(s *profile.Sample) string {
	var out []string
	for _, l := range s.Location {
		name := "?"
		switch {
		case len(l.Line) > 0:
			name = l.Line[0].Function.Name
		case l.Mapping != nil && l.Mapping.File != "":
			name = l.Mapping.File
		case l.Mapping != nil:
			name = "(no name)"
		}
		out = append(out, fmt.Sprintf("%s@%#x", name, l.Address))
	}
	return strings.Join(out, " ")
}

// TestConverterStacks: each context's first frame is where the thread
// was, the others return addresses, one less so that lines point at the
// call; a process forked without exec has its parent's mappings; a
// kernel address is in the kernel's mapping; labels pid, tid and comm.
func TestConverterStacks(t *testing.T) {
	rec := synthetic([]Attr{cpuClock(true)},
		comm(10, 10, 1, "prog", true),
		mmap2(10, 2, 0x400000, 0x1000, "/bin/prog"),
		mmap2(10, 2, 0x7f0000, 0x1000, "/lib/libc.so.6"),
		sideRecord{typ: RecordMMAP, pid: ^uint32(0), tid: 0, addr: 0xffffffff81000000, len: 0x1000000, pgoff: 0xffffffff81000000, name: "[kernel.kallsyms]_text"},
		fork(11, 10, 3),
	)
	for _, tc := range []struct {
		name  string
		s     *Record
		stack string
		comm  string
	}{
		{"user only", sample(rec, 10, 10, 5, 100, markerUser, 0x400100, 0x7f0200, 0x400300),
			"/bin/prog@0x400100 /lib/libc.so.6@0x7f01ff /bin/prog@0x4002ff", "prog"},
		{"kernel then user", sample(rec, 10, 10, 6, 100, MarkerKernel, 0xffffffff81000100, 0xffffffff81000200, markerUser, 0x400100, 0x400300),
			"[kernel.kallsyms]@0xffffffff81000100 [kernel.kallsyms]@0xffffffff810001ff /bin/prog@0x400100 /bin/prog@0x4002ff", "prog"},
		{"forked child in its parent's code", sample(rec, 11, 11, 7, 100, markerUser, 0x400100, 0x400300),
			"/bin/prog@0x400100 /bin/prog@0x4002ff", "prog"},
		{"an address no mapping holds", sample(rec, 10, 10, 8, 100, markerUser, 0x900000), "?@0x900000", "prog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := convert(t, rec, Options{}, tc.s)
			if len(p.Sample) != 1 {
				t.Fatalf("%d samples, want 1", len(p.Sample))
			}
			s := p.Sample[0]
			if got := stackOf(s); got != tc.stack {
				t.Errorf("stack %s, want %s", got, tc.stack)
			}
			if s.NumLabel["pid"][0] != int64(tc.s.PID) || s.NumLabel["tid"][0] != int64(tc.s.TID) || s.Label["comm"][0] != tc.comm {
				t.Errorf("labels %v %v, want pid %d tid %d comm %s", s.NumLabel, s.Label, tc.s.PID, tc.s.TID, tc.comm)
			}
			if p.Mapping[0].File != "/bin/prog" {
				t.Errorf("first mapping %s, want the executable /bin/prog", p.Mapping[0].File)
			}
			if err := p.CheckValid(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestConverterMergesSamples: samples of one stack, thread and command
// are one sample, their counts and periods added; a thread renamed
// between two samples (its command at each sample's time) gets two.
func TestConverterMergesSamples(t *testing.T) {
	rec := synthetic([]Attr{cpuClock(true)},
		comm(10, 10, 1, "prog", true),
		mmap2(10, 2, 0x400000, 0x1000, "/bin/prog"),
		comm(10, 12, 3, "prog", false),
		comm(10, 12, 50, "worker", false), // the thread names itself
	)
	p, _ := convert(t, rec, Options{},
		sample(rec, 10, 10, 10, 100, markerUser, 0x400100),
		sample(rec, 10, 10, 11, 250, markerUser, 0x400100),
		sample(rec, 10, 12, 20, 100, markerUser, 0x400100), // as "prog"
		sample(rec, 10, 12, 60, 100, markerUser, 0x400100), // as "worker"
	)
	var got []string
	for _, s := range p.Sample {
		got = append(got, fmt.Sprintf("tid %d %s: %v", s.NumLabel["tid"][0], s.Label["comm"][0], s.Value))
	}
	want := []string{"tid 10 prog: [2 350]", "tid 12 prog: [1 100]", "tid 12 worker: [1 100]"}
	if !slices.Equal(got, want) {
		t.Errorf("samples %q, want %q", got, want)
	}
	if p.DurationNanos != 50 {
		t.Errorf("duration %d ns, want 50 (the samples' first to last time)", p.DurationNanos)
	}
}

// TestConverterGroupReads: a group whose leader samples adds to each of
// its events what that event counted since its previous sample (the
// first: since the start), as perf report counts them; the dummy event
// is no sample type.
func TestConverterGroupReads(t *testing.T) {
	cycles := Attr{Type: 0, Config: 0, SampleType: SampleIP | SampleTID | SampleRead | SampleCallchain, IDs: []uint64{1}}
	instrs := Attr{Type: 0, Config: 1, SampleType: cycles.SampleType, IDs: []uint64{2}}
	dummy := Attr{Type: 1, Config: 9, IDs: []uint64{3}}
	rec := synthetic([]Attr{cycles, instrs, dummy}, mmap2(10, 0, 0x400000, 0x1000, "/bin/prog"))
	read := func(c, i uint64) *Record {
		s := sample(rec, 10, 10, 0, 0, markerUser, 0x400100)
		s.Group = []ReadValue{{Value: c, ID: 1}, {Value: i, ID: 2}}
		return s
	}
	p, _ := convert(t, rec, Options{}, read(1000, 3000), read(1500, 3200))
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	if want := []string{"cycles_samples", "cycles", "instructions_samples", "instructions"}; !slices.Equal(types, want) {
		t.Errorf("sample types %q, want %q", types, want)
	}
	if len(p.Sample) != 1 || !slices.Equal(p.Sample[0].Value, []int64{2, 1500, 2, 3200}) {
		t.Errorf("samples %v, want one with [2 1500 2 3200]", p.Sample)
	}
}

// fakeJIT is JIT code whose piece at 0x7000 was replaced at time 100:
// before it, oldfn ran there.
type fakeJIT struct{ replaced bool }

func (fakeJIT) CallFrameInfo(uint64) (*jprofile.CallFrameInfo, error) { return nil, nil }
func (j fakeJIT) Replaced() bool                                      { return j.replaced }

func (fakeJIT) CodeAt(pid uint32, addr, t uint64) (jprofile.Frame, uint64, bool) {
	if pid == 10 && addr >= 0x7000 && addr < 0x7100 && t < 100 {
		return jprofile.Frame{Func: "oldfn", File: "app.js", Line: 3, StartLine: 1}, 1, true
	}
	return jprofile.Frame{}, 0, false
}

// TestConverterReplay: a sample in JIT code (anonymous memory) that was
// replaced later gets a location named after the code that ran at its
// time; a later sample there is left to the JIT stage (no name); code in
// a file is never replayed; without CLOCK_MONOTONIC sample times nothing
// is, and a note says how to record.
func TestConverterReplay(t *testing.T) {
	side := []sideRecord{
		mmap2(10, 0, 0x400000, 0x1000, "/bin/node"),
		mmap2(10, 0, 0x7000, 0x1000, "//anon"),
		{typ: RecordMMAP2, prot: 5, pid: 10, tid: 10, addr: 0x20000, len: 0x1000, name: "/tmp/jit-10.dump"},
	}
	for _, tc := range []struct {
		name      string
		monotonic bool
		jit       fakeJIT
		want      []string
		note      string
	}{
		{"replayed", true, fakeJIT{true}, []string{"oldfn@0x7010", "//anon@0x7010", "/bin/node@0x400100"}, ""},
		{"no code replaced", true, fakeJIT{false}, []string{"//anon@0x7010", "/bin/node@0x400100"}, ""},
		{"not CLOCK_MONOTONIC", false, fakeJIT{true}, []string{"//anon@0x7010", "/bin/node@0x400100"}, "record with perf record -k 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := synthetic([]Attr{cpuClock(tc.monotonic)}, side...)
			if !slices.Equal(rec.JITDumps, []string{"/tmp/jit-10.dump"}) {
				t.Fatalf("JIT dumps %q, want the one mapped", rec.JITDumps)
			}
			p, conv := convert(t, rec, Options{JIT: tc.jit},
				sample(rec, 10, 10, 50, 1, markerUser, 0x7010),
				sample(rec, 10, 10, 150, 1, markerUser, 0x7010),
				sample(rec, 10, 10, 60, 1, markerUser, 0x400100),
			)
			var got []string
			for _, s := range p.Sample {
				got = append(got, stackOf(s))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("stacks %q, want %q", got, tc.want)
			}
			hasNote := slices.ContainsFunc(conv.Notes, func(n string) bool { return tc.note != "" && strings.Contains(n, tc.note) })
			if (tc.note != "") != hasNote {
				t.Errorf("notes %q, want one saying %q", conv.Notes, tc.note)
			}
		})
	}
}

// TestConverterMainImage: the first mapping is the executable of the
// process with the most samples; a process that forked without exec
// counts for its parent's executable; the kernel's idle task's samples
// do not count.
func TestConverterMainImage(t *testing.T) {
	rec := synthetic([]Attr{cpuClock(true)},
		mmap2(1, 0, 0x400000, 0x1000, "/bin/sh"),
		comm(1, 1, 1, "sh", true),
		comm(20, 20, 2, "java", true), // its exec: the executable is mapped next
		mmap2(20, 3, 0x500000, 0x1000, "/usr/bin/java"),
		mmap2(20, 3, 0x600000, 0x1000, "/usr/lib/jvm/lib/server/libjvm.so"),
		fork(21, 20, 4),
	)
	p, _ := convert(t, rec, Options{},
		sample(rec, 1, 1, 5, 1, markerUser, 0x400100),
		sample(rec, 21, 21, 6, 1, markerUser, 0x600100), // in libjvm, a forked child
		sample(rec, 21, 21, 7, 1, markerUser, 0x600200),
		sample(rec, 0, 0, 8, 1, MarkerKernel, 0xffffffff81000000),
		sample(rec, 0, 0, 9, 1, MarkerKernel, 0xffffffff81000000),
		sample(rec, 0, 0, 10, 1, MarkerKernel, 0xffffffff81000000),
	)
	if got := p.Mapping[0].File; got != "/usr/bin/java" {
		t.Errorf("first mapping %s, want /usr/bin/java", got)
	}
	for i, m := range p.Mapping {
		if m.ID != uint64(i+1) {
			t.Errorf("mapping %d has ID %d", i, m.ID)
		}
	}
}
