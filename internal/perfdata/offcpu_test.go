package perfdata

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// switchRecording builds a little-endian perf.data of two events, named
// by the event-description feature: cpu-clock (id 1) and, if block, the
// sched:sched_switch tracepoint (id 2), both sampling IDENTIFIER, IP,
// TID, TIME and CALLCHAIN with sample_id_all; and records, each a type,
// a misc field and a body (a sample_id trailer is appended to those
// that are not samples: pid, tid, time, identifier 1).
func switchRecording(block bool, recs []testRec) []byte {
	le := binary.LittleEndian
	const st = SampleIdentifier | SampleIP | SampleTID | SampleTime | SampleCallchain
	attr := func(typ uint32, config, period uint64) []byte {
		a := make([]byte, 128)
		le.PutUint32(a, typ)
		le.PutUint32(a[4:], 128)
		le.PutUint64(a[8:], config)
		le.PutUint64(a[16:], period)
		le.PutUint64(a[24:], st)
		le.PutUint64(a[40:], 1<<18|1<<25) // sample_id_all, use_clockid
		le.PutUint32(a[92:], 1)
		return a
	}
	type ev struct {
		attr []byte
		name string
		id   uint64
	}
	evs := []ev{{attr(1, 0, 1000000), "cpu-clock", 1}}
	if block {
		evs = append(evs, ev{attr(2, 372, 1), "sched:sched_switch", 2})
	}
	var data []byte
	for _, r := range recs {
		body := r.body
		if r.typ != RecordSample {
			body = le.AppendUint32(body, r.pid)
			body = le.AppendUint32(body, r.tid)
			body = le.AppendUint64(body, r.time)
			body = le.AppendUint64(body, 1)
		}
		data = le.AppendUint32(data, r.typ)
		data = le.AppendUint16(data, r.misc)
		data = le.AppendUint16(data, uint16(8+len(body)))
		data = append(data, body...)
	}
	idsOff := uint64(fileHeaderSize)
	attrsOff := idsOff + 8*uint64(len(evs))
	dataOff := attrsOff + 144*uint64(len(evs))
	var out []byte
	out = append(out, Magic...)
	for _, v := range []uint64{fileHeaderSize, 144, attrsOff, 144 * uint64(len(evs)), dataOff, uint64(len(data)), 0, 0, 1 << featEventDesc, 0, 0, 0} {
		out = le.AppendUint64(out, v)
	}
	for _, e := range evs {
		out = le.AppendUint64(out, e.id)
	}
	for i, e := range evs {
		out = append(out, e.attr...)
		out = le.AppendUint64(out, idsOff+8*uint64(i))
		out = le.AppendUint64(out, 8)
	}
	out = append(out, data...)
	desc := le.AppendUint32(nil, uint32(len(evs)))
	desc = le.AppendUint32(desc, 128)
	for _, e := range evs {
		desc = append(desc, e.attr...)
		desc = le.AppendUint32(desc, 1)
		name := append([]byte(e.name), make([]byte, 64-len(e.name))...)
		desc = le.AppendUint32(desc, uint32(len(name)))
		desc = append(desc, name...)
		desc = le.AppendUint64(desc, e.id)
	}
	tab := uint64(len(out)) + 16
	out = le.AppendUint64(out, tab)
	out = le.AppendUint64(out, uint64(len(desc)))
	return append(out, desc...)
}

// A testRec is a record for switchRecording.
type testRec struct {
	typ      uint32
	misc     uint16
	pid, tid uint32
	time     uint64
	body     []byte
}

// sampleRec returns a sample of event id by thread pid/tid at time t,
// at the callchain's leaf.
func sampleRec(id uint64, pid, tid uint32, t uint64, chain ...uint64) testRec {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, id)
	b = le.AppendUint64(b, chain[0])
	b = le.AppendUint32(b, pid)
	b = le.AppendUint32(b, tid)
	b = le.AppendUint64(b, t)
	b = le.AppendUint64(b, uint64(len(chain)))
	for _, ip := range chain {
		b = le.AppendUint64(b, ip)
	}
	return testRec{typ: RecordSample, body: b}
}

func switchRec(out bool, pid, tid uint32, t uint64) testRec {
	r := testRec{typ: RecordSwitch, pid: pid, tid: tid, time: t}
	if out {
		r.misc = MiscSwitchOut
	}
	return r
}

// offCPUByLeaf returns the off-CPU and wall time of p's samples by the
// address of their leaf, and the cpu-clock time in all.
func offCPUByLeaf(t *testing.T, p *profile.Profile) (off, wall map[uint64]int64, cpu int64) {
	t.Helper()
	idx := map[string]int{}
	for i, st := range p.SampleType {
		idx[st.Type] = i
	}
	if _, ok := idx["offcpu"]; !ok {
		t.Fatalf("sample types %v: no offcpu", p.SampleType)
	}
	off, wall = map[uint64]int64{}, map[uint64]int64{}
	for _, s := range p.Sample {
		leaf := s.Location[0].Address
		off[leaf] += s.Value[idx["offcpu"]]
		wall[leaf] += s.Value[idx["wall"]]
		cpu += s.Value[idx["cpu-clock"]]
	}
	return off, wall, cpu
}

// offCPURecords are TestOffCPU's records.
var offCPURecords = []testRec{
	// Thread 11: computes at 0x100, blocks 1000 ns (stack of its
	// sample), then leaves at 0x300 as the tracepoint says, for
	// 500 ns, its switch in written first.
	sampleRec(1, 10, 11, 100, 0x100, 0x150),
	switchRec(true, 10, 11, 200),
	switchRec(false, 10, 11, 1200),
	switchRec(false, 10, 11, 1800),
	sampleRec(2, 10, 11, 1300, 0x300, 0x350),
	switchRec(true, 10, 11, 1300),
	// Thread 12: blocked at 0x400 from 400 to the end (2000).
	sampleRec(2, 10, 12, 400, 0x400),
	switchRec(true, 10, 12, 400),
	// Thread 13: leaves at 500, exits: no off-CPU time.
	sampleRec(1, 10, 13, 450, 0x500),
	switchRec(true, 10, 13, 500),
	{typ: RecordExit, body: []byte{10, 0, 0, 0, 10, 0, 0, 0, 13, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, pid: 10, tid: 13, time: 600},
	sampleRec(1, 10, 11, 2000, 0x600),
}

// FuzzOffCPU converts recordings with context switches and the
// sched_switch tracepoint, damaged.
func FuzzOffCPU(f *testing.F) {
	f.Add(switchRecording(true, offCPURecords))
	f.Add(switchRecording(false, offCPURecords))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := Open(bytes.NewReader(data), int64(len(data)), "f.data")
		if err != nil {
			return
		}
		pf.Profile(Options{})
	})
}

// TestOffCPU converts context switches into off-CPU samples: an
// interval takes the stack of the sched:sched_switch sample taken as the
// thread left (or its last sample, without one), whatever the order of
// the records in the file (the switch in written before the switch out,
// as from another CPU's buffer); a thread that exits is not off CPU
// after; one still blocked at the end is, until the end; wall adds
// on-CPU and off-CPU time; the tracepoint's samples are no event of
// their own.
func TestOffCPU(t *testing.T) {
	recs := offCPURecords
	f, err := open(t, switchRecording(true, recs))
	if err != nil {
		t.Fatal(err)
	}
	p, conv, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	if got := strings.Join(types, ","); got != "samples,cpu-clock,offcpu,wall" || p.DefaultSampleType != "cpu-clock" {
		t.Errorf("sample types %s, default %q; want samples,cpu-clock,offcpu,wall and cpu-clock", got, p.DefaultSampleType)
	}
	off, wall, cpu := offCPUByLeaf(t, p)
	want := map[uint64]int64{0x100: 1000, 0x300: 500, 0x400: 1600}
	for leaf, w := range want {
		if off[leaf] != w {
			t.Errorf("off-CPU at %#x: got %d, want %d", leaf, off[leaf], w)
		}
	}
	if off[0x500] != 0 {
		t.Errorf("off-CPU time of the thread that exited: %d", off[0x500])
	}
	if cpu != 3*1000000 || wall[0x100] != 1000000+1000 {
		t.Errorf("cpu-clock %d, wall at 0x100 %d; want 3000000 and 1001000", cpu, wall[0x100])
	}
	if !strings.Contains(strings.Join(conv.Notes, "\n"), "where the thread left the CPU (sched:sched_switch), for 2 of them the stack of its last on-CPU sample") {
		t.Errorf("notes %q", conv.Notes)
	}

	// Without the tracepoint: every interval has the last sample's
	// stack.
	f, err = open(t, switchRecording(false, []testRec{recs[0], recs[1], recs[2], recs[11]}))
	if err != nil {
		t.Fatal(err)
	}
	p, conv, err = f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if off, _, _ := offCPUByLeaf(t, p); off[0x100] != 1000 {
		t.Errorf("off-CPU at 0x100 without the tracepoint: %d", off[0x100])
	}
	if !strings.Contains(strings.Join(conv.Notes, "\n"), "that of the thread's last on-CPU sample") {
		t.Errorf("notes %q", conv.Notes)
	}
}

// TestLostRecords counts LOST and LOST_SAMPLES records in one note.
func TestLostRecords(t *testing.T) {
	le := binary.LittleEndian
	lost := le.AppendUint64(le.AppendUint64(nil, 1), 25)
	f, err := open(t, switchRecording(false, []testRec{
		sampleRec(1, 10, 11, 100, 0x100),
		{typ: RecordLost, body: lost, pid: 10, tid: 11, time: 150},
		{typ: RecordLost, body: lost, pid: 10, tid: 11, time: 160},
		{typ: RecordLostSamples, body: le.AppendUint64(nil, 3), pid: 10, tid: 11, time: 170},
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, conv, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, note := range conv.Notes {
		if strings.Contains(note, "lost") {
			n++
			if !strings.HasPrefix(note, "x.data: 50 records and 3 samples were lost") {
				t.Errorf("note %q", note)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d notes of lost records: %q", n, conv.Notes)
	}
}
