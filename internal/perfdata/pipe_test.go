package perfdata

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// record returns a little-endian record of type typ with body.
func record(typ uint32, misc uint16, body []byte) []byte {
	le := binary.LittleEndian
	out := le.AppendUint32(nil, typ)
	out = le.AppendUint16(out, misc)
	out = le.AppendUint16(out, uint16(8+len(body)))
	return append(out, body...)
}

// toPipe returns the little-endian recording b as perf record -o -
// writes it: the 16-byte header, an attribute record per attribute, a
// feature record per feature section (but the event names, which come
// as event updates instead), then the data section, in which the
// records at the indexes of extras are preceded by an AUXTRACE record
// and a tracing data record, each followed by its data.
func toPipe(t testing.TB, b []byte, extras ...int) []byte {
	t.Helper()
	le := binary.LittleEndian
	out := append([]byte(Magic), le.AppendUint64(nil, 16)...)
	attrSize := int(le.Uint64(b[16:]))
	attrsOff, attrsN := int(le.Uint64(b[24:])), int(le.Uint64(b[32:]))
	f, err := open(t, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < attrsN; i += attrSize {
		e := b[attrsOff+i : attrsOff+i+attrSize]
		attr := e[:attrSize-16]
		idsOff, idsN := int(le.Uint64(e[attrSize-16:])), int(le.Uint64(e[attrSize-8:]))
		out = append(out, record(recordHeaderAttr, 0, append(slices.Clone(attr), b[idsOff:idsOff+idsN]...))...)
		if name := f.Attrs[i/attrSize].Name; name != "" && idsN >= 8 {
			body := le.AppendUint64(nil, eventUpdateName)
			body = le.AppendUint64(body, le.Uint64(b[idsOff:]))
			body = append(body, name...)
			body = append(body, make([]byte, 8-len(name)%8)...)
			out = append(out, record(recordEventUpdate, 0, body)...)
		}
	}
	data, dataOff := dataSection(b)
	tab := dataOff + len(data)
	k := 0
	for bit := range numFeatures {
		if le.Uint64(b[72+8*(bit/64):])&(1<<(bit%64)) == 0 {
			continue
		}
		e := b[tab+16*k:]
		k++
		if bit == featEventDesc {
			continue
		}
		soff, sn := int(le.Uint64(e)), int(le.Uint64(e[8:]))
		out = append(out, record(recordHeaderFeature, 0, append(le.AppendUint64(nil, uint64(bit)), b[soff:soff+sn]...))...)
	}
	for i, off := 0, 0; off < len(data); i++ {
		if slices.Contains(extras, i) {
			out = append(out, auxtrace(1000)...)
			out = append(out, record(recordHeaderTracingData, 0, le.AppendUint64(nil, 24))...)
			out = append(out, bytes.Repeat([]byte{0xff}, 24)...)
		}
		n := int(le.Uint16(data[off+6:]))
		out = append(out, data[off:off+n]...)
		off += n
	}
	return out
}

// auxtrace returns an AUXTRACE record and the n bytes of trace that
// follow it, which look like records of type 9 claiming 4 bytes.
func auxtrace(n int) []byte {
	le := binary.LittleEndian
	body := le.AppendUint64(nil, uint64(n))
	body = append(body, make([]byte, 40)...) // offset, reference, idx, tid, cpu, reserved
	out := record(recordAuxtrace, 0, body)
	for range n / 8 {
		out = append(out, 9, 0, 0, 0, 0, 0, 4, 0)
	}
	return out
}

// TestPipeMode: a real recording written as pipe mode writes it, with an
// AUX area trace and tracing data among its records, gives the records,
// attributes, features and event names of the file, and the same
// profile; cut inside a record, it is read to its last whole one.
func TestPipeMode(t *testing.T) {
	plain := goldenRecording(t)
	all, err := recordList(t, plain)
	if err != nil {
		t.Fatal(err)
	}
	// Pipe mode has its header in records too.
	header := func(line string) bool {
		return strings.HasPrefix(line, "64 ") || strings.HasPrefix(line, "78 ") || strings.HasPrefix(line, "80 ")
	}
	want := slices.DeleteFunc(all, header)
	pipe := toPipe(t, plain, 0, 100, 101)
	ff, _ := open(t, plain)
	pf, err := open(t, pipe)
	if err != nil {
		t.Fatal(err)
	}
	if !pf.Pipe || pf.Hostname != ff.Hostname || pf.OSRelease != ff.OSRelease || pf.Arch != ff.Arch ||
		!slices.Equal(pf.CmdLine, ff.CmdLine) || len(pf.BuildIDs) != len(ff.BuildIDs) || len(pf.BuildIDs) == 0 ||
		len(pf.Attrs) != 1 || pf.Attrs[0].Name != "cpu-clock" || pf.Attrs[0].SampleType != ff.Attrs[0].SampleType {
		t.Errorf("pipe mode: %q %q %q %q %d build ids, attrs %+v; file: %q %q %q %q %d build ids", pf.Hostname, pf.OSRelease, pf.Arch, pf.CmdLine,
			len(pf.BuildIDs), pf.Attrs, ff.Hostname, ff.OSRelease, ff.Arch, ff.CmdLine, len(ff.BuildIDs))
	}
	var got []string
	err = pf.Records(func(r *Record) bool {
		switch r.Type {
		case RecordFinishedRound, recordAuxtrace, recordHeaderTracingData:
		default:
			if l := recordLine(r); !header(l) {
				got = append(got, l)
			}
		}
		return true
	})
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%d records, want %d, first difference at %d; %v", len(got), len(want), firstDiff(got, want), err)
	}
	pp, _, err := pf.Profile(Options{})
	if err != nil {
		t.Fatal(err)
	}
	fp, _, _ := ff.Profile(Options{})
	if pp.String() != fp.String() {
		t.Errorf("pipe mode's profile differs from the file's:\n%s\nfile:\n%s", pp, fp)
	}
	// Cut anywhere (inside a record, most of the time): read to the
	// last whole record.
	prev := int64(0)
	for n := len(pipe) / 4; n <= len(pipe); n += len(pipe) / 8 {
		cut, err := open(t, pipe[:n])
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := cut.Profile(Options{})
		if err != nil || totalCount(p) <= prev || totalCount(p) > totalCount(fp) {
			t.Errorf("cut at %d of %d bytes: %v, %d samples of %d (%d cut before)", n, len(pipe), err, totalCount(p), totalCount(fp), prev)
		}
		prev = totalCount(p)
	}
}

// TestTrailingData: in a recording file too, an AUX area trace that
// follows its AUXTRACE record is skipped, and one claiming more than the
// file has is an error.
func TestTrailingData(t *testing.T) {
	plain := goldenRecording(t)
	want, err := recordList(t, plain)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	data, _ := dataSection(plain)
	with := append(append(slices.Clone(data[:0:0]), auxtrace(4096)...), data...)
	got, err := recordList(t, withData(plain, with))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%d records, want %d; %v", len(got), len(want), err)
	}
	bad := auxtrace(64)
	le.PutUint64(bad[8:], 1<<40)
	if _, err := recordList(t, withData(plain, append(bad, data...))); err == nil || !strings.Contains(err.Error(), "followed by 1099511627776 bytes of data, past the end") {
		t.Errorf("trace past the end: %v", err)
	}
}
