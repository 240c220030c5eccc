package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// build writes a minimal perf.data: one cpu-clock attribute sampling IP,
// TID, PERIOD and CALLCHAIN, an MMAP2, a COMM and two samples, and a
// hostname feature.
func build(bo binary.ByteOrder) []byte { return buildWith(bo, false) }

// buildWith is build, and with dwarf the attribute samples the user
// registers bp, sp and ip and 32 bytes of the user stack too (perf record
// --call-graph dwarf), and an arch feature says x86_64.
func buildWith(bo binary.ByteOrder, dwarf bool) []byte {
	var data bytes.Buffer
	rec := func(typ uint32, misc uint16, body []byte) {
		binary.Write(&data, bo, typ)
		binary.Write(&data, bo, misc)
		binary.Write(&data, bo, uint16(8+len(body)))
		data.Write(body)
	}
	var b bytes.Buffer
	w := func(vs ...any) {
		for _, v := range vs {
			binary.Write(&b, bo, v)
		}
	}
	b.Reset()
	w(uint32(7), uint32(7), uint64(0x400000), uint64(0x1000), uint64(0), uint32(8), uint32(1), uint64(42), uint64(0), uint32(5), uint32(2))
	b.WriteString("/bin/prog\x00\x00\x00\x00\x00\x00\x00")
	rec(RecordMMAP2, 0, bytes.Clone(b.Bytes()))
	b.Reset()
	w(uint32(7), uint32(7))
	b.WriteString("prog\x00\x00\x00\x00")
	rec(RecordComm, 1<<13, bytes.Clone(b.Bytes()))
	for _, ip := range []uint64{0x400100, 0x400200} {
		b.Reset()
		w(ip, uint32(7), uint32(7), uint64(250000), uint64(3), markerUser, ip, uint64(0x400050))
		if dwarf {
			w(uint64(2), uint64(0x7ff0), uint64(0x7f00), ip) // regs: ABI 64, bp, sp, ip
			w(uint64(32), uint64(0x400060), uint64(0), uint64(0), uint64(0), uint64(32))
		}
		rec(RecordSample, 2, bytes.Clone(b.Bytes()))
	}
	rec(99, 0, make([]byte, 8)) // unknown: skipped by size

	const attrSize = 120 + 16
	var out bytes.Buffer
	o := func(vs ...any) {
		for _, v := range vs {
			binary.Write(&out, bo, v)
		}
	}
	magic := []byte(Magic)
	if bo == binary.BigEndian {
		magic = []byte("2ELIFREP")
	}
	attrsOff := int64(fileHeaderSize)
	idsOff := attrsOff + attrSize
	dataOff := idsOff + 8
	featOff := dataOff + int64(data.Len())
	out.Write(magic)
	o(uint64(fileHeaderSize), uint64(attrSize), attrsOff, int64(attrSize), dataOff, int64(data.Len()), int64(0), int64(0))
	features := uint64(1) << featHostname
	if dwarf {
		features |= 1 << featArch
	}
	o(features, uint64(0), uint64(0), uint64(0))
	// the attribute: type 1 (software), size, config 0 (cpu-clock), period, sample_type
	attr := make([]byte, 120)
	bo.PutUint32(attr, 1)
	bo.PutUint32(attr[4:], 120)
	bo.PutUint64(attr[16:], 4000)
	st := uint64(SampleIP | SampleTID | SamplePeriod | SampleCallchain)
	if dwarf {
		st |= SampleRegsUser | SampleStackUser
		bo.PutUint64(attr[80:], 1<<6|1<<7|1<<8) // sample_regs_user
		bo.PutUint32(attr[88:], 32)             // sample_stack_user
	}
	bo.PutUint64(attr[24:], st)
	bo.PutUint64(attr[40:], 1<<10|1<<18|1<<25) // freq, sample_id_all, use_clockid
	bo.PutUint32(attr[92:], 1)                 // clockid: CLOCK_MONOTONIC (perf record -k 1)
	bo.PutUint64(attr[96:], 0xf0)              // sample_regs_intr
	out.Write(attr)
	o(idsOff, int64(8))
	o(uint64(33))
	out.Write(data.Bytes())
	hostname := []byte("host\x00\x00\x00\x00")
	arch := []byte("x86_64\x00\x00")
	entries := int64(1)
	if dwarf {
		entries = 2
	}
	o(featOff+16*entries, int64(4+len(hostname)))
	if dwarf {
		o(featOff+16*entries+int64(4+len(hostname)), int64(4+len(arch)))
	}
	o(uint32(len(hostname)))
	out.Write(hostname)
	if dwarf {
		o(uint32(len(arch)))
		out.Write(arch)
	}
	return out.Bytes()
}

// dataSection returns the data section of the little-endian recording b
// and its offset in b.
func dataSection(b []byte) (data []byte, off int) {
	le := binary.LittleEndian
	off, n := int(le.Uint64(b[40:])), int(le.Uint64(b[48:]))
	return b[off : off+n], off
}

// recordAt returns the offset in the little-endian recording b of its
// data section's record n (counting from 0) and how many of the records
// before it are samples.
func recordAt(b []byte, n int) (off, samples int) {
	le := binary.LittleEndian
	_, off = dataSection(b)
	for range n {
		if le.Uint32(b[off:]) == RecordSample {
			samples++
		}
		off += int(le.Uint16(b[off+6:]))
	}
	return off, samples
}

func open(t testing.TB, data []byte) (*File, error) {
	t.Helper()
	return Open(bytes.NewReader(data), int64(len(data)), "x.data")
}

func TestReadBothByteOrders(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		f, err := open(t, build(bo))
		if err != nil {
			t.Fatalf("%v: %v", bo, err)
		}
		if f.Hostname != "host" || len(f.Attrs) != 1 || f.Attrs[0].IDs[0] != 33 {
			t.Errorf("%v: hostname %q attrs %+v", bo, f.Hostname, f.Attrs)
		}
		if a := f.Attrs[0]; !a.UseClockID || a.ClockID != 1 || a.SampleRegsIntr != 0xf0 || !a.Freq || !a.SampleIDAll {
			t.Errorf("%v: attribute flags and clock %+v", bo, a)
		}
		p, _, err := f.Profile(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sample) != 2 || len(p.Sample[0].Location) != 2 || p.Sample[0].Location[0].Address != 0x400100 ||
			p.Sample[0].Location[1].Address != 0x40004f || p.Sample[0].Label["comm"][0] != "prog" ||
			p.Sample[0].Value[1] != 250000 || p.Mapping[0].File != "/bin/prog" || p.SampleType[1].Unit != "nanoseconds" {
			t.Errorf("%v: profile %v", bo, p)
		}
	}
}

// TestBadInput: broken files give an error naming the file and the
// offset, never a panic or a hang.
func TestBadInput(t *testing.T) {
	good := build(binary.LittleEndian)
	le := binary.LittleEndian
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "x.data: too short to be a perf.data file (0 bytes; the header alone is 104)"},
		{"truncated header", good[:40], "x.data: too short to be a perf.data file (40 bytes; the header alone is 104)"},
		{"wrong magic", edit(func(b []byte) []byte { copy(b, "PERFILE1"); return b }), "bad magic"},
		{"pipe mode of garbage", edit(func(b []byte) []byte { le.PutUint64(b[8:], 16); return b }), "record of type"},
		{"pipe mode without attributes", []byte("PERFILE2\x10\x00\x00\x00\x00\x00\x00\x00"), "without an attribute record"},
		{"attribute size not a multiple", edit(func(b []byte) []byte { le.PutUint64(b[32:], 100); return b }), "not a multiple"},
		{"data section impossible", edit(func(b []byte) []byte { le.PutUint64(b[48:], 1<<63-1); return b }), "is impossible"},
		{"attributes past the end", edit(func(b []byte) []byte { le.PutUint64(b[24:], 1<<40); return b }),
			"x.data: truncated at byte 532 of 1099511627912 (the recording was cut short) inside its event attributes"},
		{"event ids twice", edit(func(b []byte) []byte {
			// A second attribute whose ids are the first one's.
			b = append(b[:fileHeaderSize+136], b[fileHeaderSize:]...)
			le.PutUint64(b[32:], 2*136)
			le.PutUint64(b[40:], le.Uint64(b[40:])+136)
			return b
		}), "overlaps the section"},
		{"record past the end", edit(func(b []byte) []byte {
			le.PutUint16(b[fileHeaderSize+136+8+6:], 0xfff0)
			return b
		}), "claims"},
		{"record size zero", edit(func(b []byte) []byte {
			le.PutUint16(b[fileHeaderSize+136+8+6:], 0)
			return b
		}), "claims 0 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := open(t, tc.data)
			if err == nil {
				_, _, err = f.Profile(Options{})
			}
			if err == nil || !strings.Contains(err.Error(), "x.data") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming x.data and saying %q", err, tc.want)
			}
		})
	}
}

// FuzzPerfData: no input panics or hangs.
func FuzzPerfData(f *testing.F) {
	f.Add(build(binary.LittleEndian))
	f.Add(build(binary.BigEndian))
	f.Add(buildWith(binary.LittleEndian, true))
	f.Add(compressRecording(f, build(binary.LittleEndian), 1, 64, 16, RecordCompressed2))
	f.Add(toPipe(f, build(binary.LittleEndian), 1))
	if b, err := os.ReadFile("testdata/fuzz-seed.data"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := Open(bytes.NewReader(data), int64(len(data)), "f.data")
		if err != nil {
			return
		}
		pf.Profile(Options{})
	})
}

// TestSampleRegsAndStack decodes the fields --call-graph dwarf adds (the
// user registers and stack), behind the RAW data and branch stack that
// precede them when an event has those too, and refuses samples cut
// inside them.
func TestSampleRegsAndStack(t *testing.T) {
	le := binary.LittleEndian
	attr := Attr{SampleType: SampleIP | SampleTID | SampleCallchain | SampleRaw | SampleBranch | SampleRegsUser | SampleStackUser,
		RegsUser: 1<<6 | 1<<7 | 1<<8, BranchSampleTy: 1 << 17}
	f := &File{Name: "x.data", ByteOrder: le, Attrs: []Attr{attr}}
	var b []byte
	u64 := func(vs ...uint64) {
		for _, v := range vs {
			b = le.AppendUint64(b, v)
		}
	}
	u64(0x401000)                               // ip
	b = append(b, 7, 0, 0, 0, 8, 0, 0, 0)       // pid, tid
	u64(2, MarkerKernel, 0xffffffff81000000)    // callchain
	b = append(b, 4, 0, 0, 0, 'r', 'a', 'w', 0) // raw: size 4, data
	u64(1, 99, 1, 2, 3)                         // branches: 1, hw_idx, one entry
	u64(2, 0x7010, 0x7000, 0x401000)            // regs: abi 64, bp, sp, ip
	u64(16, 0x1111, 0x2222, 8)                  // stack: 16 bytes, 8 filled
	var rec Record
	if !f.sample(&rec, b) {
		t.Fatal("sample not decoded")
	}
	if !slices.Equal(rec.RegsUser, []uint64{0x7010, 0x7000, 0x401000}) || len(rec.StackUser) != 8 || le.Uint64(rec.StackUser) != 0x1111 ||
		rec.PID != 7 || rec.TID != 8 || len(rec.Callchain) != 2 {
		t.Errorf("decoded %+v", rec)
	}
	for cut := 1; cut < len(b); cut++ {
		var r Record
		if f.sample(&r, b[:cut]) {
			t.Errorf("a sample cut at %d of %d bytes decodes", cut, len(b))
		}
	}
	// A kernel thread: no registers (ABI none), no stack.
	k := b[:8+8+24+8+8+8+24]
	k = le.AppendUint64(k, 0)
	k = le.AppendUint64(k, 0)
	rec = Record{}
	if !f.sample(&rec, k) || len(rec.RegsUser) != 0 || len(rec.StackUser) != 0 {
		t.Errorf("kernel thread's sample: %+v", rec)
	}
}

// TestDwarfRecording: a recording with user registers and stacks is
// unwound; a file it cannot read ends the stacks with a note naming it,
// and a user callchain the kernel gave, longer than what was unwound,
// stays.
func TestDwarfRecording(t *testing.T) {
	f, err := open(t, buildWith(binary.LittleEndian, true))
	if err != nil {
		t.Fatal(err)
	}
	if f.Arch != "x86_64" || f.Attrs[0].RegsUser != 1<<6|1<<7|1<<8 {
		t.Fatalf("arch %q, regs %#x", f.Arch, f.Attrs[0].RegsUser)
	}
	p, conv, err := f.Profile(Options{BuildIDDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 2 || len(p.Sample[0].Location) != 2 || p.Sample[0].Location[0].Address != 0x400100 {
		t.Errorf("samples %v", p.Sample)
	}
	if len(conv.Notes) != 1 || !strings.Contains(conv.Notes[0], "user stacks end at /bin/prog") {
		t.Errorf("notes %q", conv.Notes)
	}
}

// TestDamagedRecordKeepsTheRest: a damaged record in the middle of a real
// recording ends it there: the profile has the samples before it, and a
// note names the offset; damage before the first sample is an error.
func TestDamagedRecordKeepsTheRest(t *testing.T) {
	b := goldenRecording(t)
	le := binary.LittleEndian
	data, dataOff := dataSection(b)
	off, samples := recordAt(b, 199) // the 200th record
	broken := slices.Clone(b)
	le.PutUint16(broken[off+6:], 4)
	f, err := open(t, broken)
	if err != nil {
		t.Fatal(err)
	}
	p, conv, err := f.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := totalCount(p); got != int64(samples) || samples < 100 {
		t.Errorf("%d samples, want the %d before the damage", got, samples)
	}
	want := fmt.Sprintf("claims 4 bytes, outside [8, %d] at offset %#x: the records after it are lost, the profile has the %d samples read", dataOff+len(data)-off, off, samples)
	if len(conv.Notes) != 1 || !strings.Contains(conv.Notes[0], want) {
		t.Errorf("notes %q, want one saying %q", conv.Notes, want)
	}
	// Damage before any sample.
	first := slices.Clone(b)
	le.PutUint16(first[dataOff+6:], 4)
	if f, err = open(t, first); err == nil {
		_, _, err = f.Profile(Options{})
	}
	if err == nil || !strings.Contains(err.Error(), "x.data: record of type") {
		t.Errorf("damage before the first sample: error %v", err)
	}
}

// totalCount returns the sum of p's sample counts (its first value).
func totalCount(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	return n
}

// TestUnfinishedRecording: a recording perf record did not finish (its
// header without a data size, the file cut inside a record and without
// its feature sections) is read to its last whole record, its event named
// from its type, with a note; one cut before its first sample is an error.
// A finished recording without records is not taken for one.
func TestUnfinishedRecording(t *testing.T) {
	b := goldenRecording(t)
	le := binary.LittleEndian
	_, dataOff := dataSection(b)
	off, samples := recordAt(b, 500)
	for _, cut := range []int{0, 5, 20} { // inside the 501st record, or at its start
		u := slices.Clone(b[:off+cut])
		le.PutUint64(u[48:], 0)
		f, err := open(t, u)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Unfinished || f.Hostname != "" {
			t.Errorf("unfinished %v, hostname %q", f.Unfinished, f.Hostname)
		}
		p, conv, err := f.Profile(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := totalCount(p); got != int64(samples) {
			t.Errorf("cut %d: %d samples, want %d", cut, got, samples)
		}
		if p.SampleType[0].Type != "samples" || p.PeriodType.Type != "cpu-clock" {
			t.Errorf("cut %d: sample type %v, period type %v", cut, p.SampleType[0], p.PeriodType)
		}
		want := fmt.Sprintf("not finished (perf record was stopped before it completed the file): read to its last whole record, %d samples", samples)
		if len(conv.Notes) != 1 || !strings.Contains(conv.Notes[0], want) {
			t.Errorf("cut %d: notes %q, want one saying %q", cut, conv.Notes, want)
		}
	}
	// A finished recording with no records has its feature table where
	// the data would start: not unfinished.
	empty, err := open(t, withData(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	if empty.Unfinished || empty.Hostname == "" {
		t.Errorf("a finished recording without records: unfinished %v, hostname %q", empty.Unfinished, empty.Hostname)
	}
	u := slices.Clone(b[:dataOff+10])
	le.PutUint64(u[48:], 0)
	f, err := open(t, u)
	if err == nil {
		_, _, err = f.Profile(Options{})
	}
	if err == nil || !strings.Contains(err.Error(), "x.data: the recording was not finished") || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("unfinished before any sample: error %v", err)
	}
}
