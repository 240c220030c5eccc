package perfdata

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// build writes a minimal perf.data: one cpu-clock attribute sampling IP,
// TID, PERIOD and CALLCHAIN, an MMAP2, a COMM and two samples, and a
// hostname feature.
func build(bo binary.ByteOrder) []byte {
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
		w(ip, uint32(7), uint32(7), uint64(250000), uint64(3), MarkerUser, ip, uint64(0x400050))
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
	o(uint64(1)<<featHostname, uint64(0), uint64(0), uint64(0))
	// the attribute: type 1 (software), size, config 0 (cpu-clock), period, sample_type
	attr := make([]byte, 120)
	bo.PutUint32(attr, 1)
	bo.PutUint32(attr[4:], 120)
	bo.PutUint64(attr[16:], 4000)
	bo.PutUint64(attr[24:], SampleIP|SampleTID|SamplePeriod|SampleCallchain)
	bo.PutUint64(attr[40:], 1<<10|1<<18|1<<25) // freq, sample_id_all, use_clockid
	bo.PutUint32(attr[92:], 1)                 // clockid: CLOCK_MONOTONIC (perf record -k 1)
	bo.PutUint64(attr[96:], 0xf0)              // sample_regs_intr
	out.Write(attr)
	o(idsOff, int64(8))
	o(uint64(33))
	out.Write(data.Bytes())
	hostname := []byte("host\x00\x00\x00\x00")
	o(featOff+16, int64(4+len(hostname)))
	o(uint32(len(hostname)))
	out.Write(hostname)
	return out.Bytes()
}

// MarkerUser starts the user part of a callchain.
const MarkerUser = ^uint64(0) - 512 + 1

func open(t *testing.T, data []byte) (*File, error) {
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
		{"empty", nil, "too short"},
		{"truncated header", good[:40], "header"},
		{"wrong magic", edit(func(b []byte) []byte { copy(b, "PERFILE1"); return b }), "bad magic"},
		{"pipe mode", edit(func(b []byte) []byte { le.PutUint64(b[8:], 16); return b }), "pipe-mode"},
		{"attribute size not a multiple", edit(func(b []byte) []byte { le.PutUint64(b[32:], 100); return b }), "not a multiple"},
		{"data past the end", edit(func(b []byte) []byte { le.PutUint64(b[48:], 1<<40); return b }), "outside the"},
		{"feature pointing outside", edit(func(b []byte) []byte {
			tab := len(b) - 16 - 4 - 8
			le.PutUint64(b[tab:], 1<<40)
			return b
		}), "feature 3 section"},
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
