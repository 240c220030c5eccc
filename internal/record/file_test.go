//go:build linux

package record

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/jitpprof/pprof/internal/perfdata"
)

// TestFileReadByPerfdata writes a perf.data with two events (ids, names),
// a few records, and the feature sections, and reads it back with
// package perfdata, the reader pprof uses: what was written is what is
// read.
func TestFileReadByPerfdata(t *testing.T) {
	attr := func(typ uint32, config uint64) []byte {
		b := make([]byte, 128)
		binary.NativeEndian.PutUint32(b, typ)
		binary.NativeEndian.PutUint32(b[4:], 128)
		binary.NativeEndian.PutUint64(b[8:], config)
		binary.NativeEndian.PutUint64(b[16:], 999)
		binary.NativeEndian.PutUint64(b[24:], 0x10000|0x1|0x2|0x4|0x80|0x100|0x20) // IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN
		binary.NativeEndian.PutUint64(b[40:], 1<<10|1<<18|1<<25)                   // freq, sample_id_all, use_clockid
		binary.NativeEndian.PutUint32(b[92:], 1)                                   // CLOCK_MONOTONIC
		return b
	}
	events := []event{
		{attr: attr(1, 0), name: "cpu-clock", ids: []uint64{11, 12}},
		{attr: attr(2, 372), name: "sched:sched_switch", ids: []uint64{21, 22}},
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "perf.data"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := newFileWriter(f, events)
	if err != nil {
		t.Fatal(err)
	}
	sy := &synth{w: fw, id: 11}
	sy.begin(recordComm, 0)
	sy.u32(7)
	sy.u32(8)
	sy.name("worker")
	if err := sy.end(7, 8); err != nil {
		t.Fatal(err)
	}
	sy.begin(recordMMAP2, miscUserMode)
	for _, v := range []uint64{7<<32 | 7, 0x400000, 0x1000, 0} {
		sy.u64(v)
	}
	sy.u64(0)
	sy.u64(0)
	sy.u64(0)
	sy.u32(5) // PROT_READ|PROT_EXEC
	sy.u32(2)
	sy.name("/bin/prog")
	if err := sy.end(7, 7); err != nil {
		t.Fatal(err)
	}
	// A sample of the second event: identifier, ip, pid/tid, time, cpu,
	// period, a callchain of one.
	var s []byte
	for _, v := range []uint64{22, 0x400010, 8<<32 | 7, 5000, 1, 1, 1, 0x400010} {
		s = binary.NativeEndian.AppendUint64(s, v)
	}
	rec := binary.NativeEndian.AppendUint32(nil, recordSample)
	rec = binary.NativeEndian.AppendUint16(rec, miscUserMode)
	rec = binary.NativeEndian.AppendUint16(rec, uint16(8+len(s)))
	fw.Write(append(rec, s...))
	fw.Write(finishedRound)
	ft := features{hostname: "host", osRelease: "6.1.0", version: "jitpprof", arch: "x86_64",
		cpusOnline: 2, cpusAvail: 4, cmdLine: []string{"pprof", "-record", "--", "prog"},
		buildIDs: []buildID{{file: "/bin/prog", id: []byte{0xde, 0xad, 0xbe, 0xef}}, {file: "[kernel.kallsyms]", id: bytes.Repeat([]byte{7}, 20), kernel: true}}}
	if err := fw.finish(ft); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	pf, err := perfdata.Open(f, st.Size(), f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.Attrs) != 2 || pf.Attrs[0].Name != "cpu-clock" || pf.Attrs[1].Name != "sched:sched_switch" ||
		!slices.Equal(pf.Attrs[1].IDs, []uint64{21, 22}) || !pf.Attrs[0].UseClockID || pf.Attrs[0].ClockID != 1 {
		t.Errorf("attributes: got %+v", pf.Attrs)
	}
	if pf.Hostname != "host" || pf.OSRelease != "6.1.0" || pf.Arch != "x86_64" || !slices.Equal(pf.CmdLine, ft.cmdLine) {
		t.Errorf("features: got host %q, release %q, arch %q, cmdline %q", pf.Hostname, pf.OSRelease, pf.Arch, pf.CmdLine)
	}
	if got := pf.BuildIDs["/bin/prog"]; !bytes.Equal(got, []byte{0xde, 0xad, 0xbe, 0xef}) {
		t.Errorf("build ID of /bin/prog: got %x", got)
	}
	if got := pf.BuildIDs["[kernel.kallsyms]"]; len(got) != 20 {
		t.Errorf("the kernel's build ID: got %x", got)
	}
	var got []string
	err = pf.Records(func(r *perfdata.Record) bool {
		switch r.Type {
		case perfdata.RecordComm:
			got = append(got, "comm "+r.Comm)
		case perfdata.RecordMMAP2:
			got = append(got, "mmap "+r.Filename)
		case perfdata.RecordSample:
			if r.Attr != &pf.Attrs[1] || r.TID != 8 || r.Time != 5000 || r.CPU != 1 {
				t.Errorf("sample: got %+v", r)
			}
			got = append(got, "sample")
		}
		return true
	})
	if err != nil || !slices.Equal(got, []string{"comm worker", "mmap /bin/prog", "sample"}) {
		t.Errorf("records: got %q, %v", got, err)
	}
}

// TestBuildIDOfFile reads the build ID of real binaries and compares it
// with readelf -n's.
func TestBuildIDOfFile(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("readelf (binutils) not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := exec.LookPath("sh")
	for _, path := range []string{exe, sh} {
		out, err := exec.Command(readelf, "-n", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
		got := fileBuildID(path)
		if m == nil {
			if got != nil {
				t.Errorf("%s: build ID %x, readelf finds none", path, got)
			}
			continue
		}
		if want := string(m[1]); want != hex(got) {
			t.Errorf("%s: build ID %s, readelf: %s", path, hex(got), want)
		}
	}
}

func hex(b []byte) string {
	const digits = "0123456789abcdef"
	var s []byte
	for _, c := range b {
		s = append(s, digits[c>>4], digits[c&15])
	}
	return string(s)
}

// TestGNUBuildIDNotes reads notes of both byte orders, with other notes
// before the build ID, and damaged ones.
func TestGNUBuildIDNotes(t *testing.T) {
	note := func(bo binary.AppendByteOrder, name string, typ uint32, desc []byte) []byte {
		b := bo.AppendUint32(nil, uint32(len(name)+1))
		b = bo.AppendUint32(b, uint32(len(desc)))
		b = bo.AppendUint32(b, typ)
		n := append([]byte(name), 0)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		b = append(b, n...)
		d := slices.Clone(desc)
		for len(d)%4 != 0 {
			d = append(d, 0)
		}
		return append(b, d...)
	}
	id := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for _, tc := range []struct {
		name  string
		bo    binary.ByteOrder
		notes []byte
		want  []byte
	}{
		{name: "alone", bo: binary.LittleEndian, notes: note(binary.LittleEndian, "GNU", 3, id), want: id},
		{name: "big-endian", bo: binary.BigEndian, notes: note(binary.BigEndian, "GNU", 3, id), want: id},
		{name: "after an ABI tag", bo: binary.LittleEndian,
			notes: append(note(binary.LittleEndian, "GNU", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}), note(binary.LittleEndian, "GNU", 3, id[:8])...), want: id[:8]},
		{name: "another owner", bo: binary.LittleEndian, notes: note(binary.LittleEndian, "Xen", 3, id)},
		{name: "truncated", bo: binary.LittleEndian, notes: note(binary.LittleEndian, "GNU", 3, id)[:20]},
		{name: "huge size", bo: binary.LittleEndian, notes: []byte{4, 0, 0, 0, 255, 255, 255, 255, 3, 0, 0, 0, 'G', 'N', 'U', 0}},
	} {
		if got := gnuBuildID(tc.notes, tc.bo); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %x, want %x", tc.name, got, tc.want)
		}
	}
}
