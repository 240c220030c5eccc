package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// goldenRecording returns testdata/perf/golden/single.data, a real
// recording (perf record -g, uncompressed).
func goldenRecording(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "perf", "golden", "single.data"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compressRecording returns the little-endian recording b with its data
// section after the first keep records compressed as perf record -z
// does: chunk bytes of records at a time (records whole) into one
// Zstandard stream, flushed after each chunk, whose output is cut into
// compressed records (of type typ) of at most piece bytes, each chunk's
// followed by a FINISHED_ROUND. A decompressed record can so span two
// compressed records.
func compressRecording(t testing.TB, b []byte, keep, chunk, piece int, typ uint32) []byte {
	t.Helper()
	le := binary.LittleEndian
	data, _ := dataSection(b)
	var recs [][]byte
	for off := 0; off < len(data); {
		n := int(le.Uint16(data[off+6:]))
		recs = append(recs, data[off:off+n])
		off += n
	}
	var out bytes.Buffer
	for _, r := range recs[:keep] {
		out.Write(r)
	}
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	round := le.AppendUint64(le.AppendUint32(nil, RecordFinishedRound), 8<<48)[:8]
	le.PutUint16(round[6:], 8)
	flush := func() {
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		for p := z.Bytes(); len(p) > 0; {
			n := min(len(p), piece)
			size := 8 + n
			if typ == RecordCompressed2 {
				size = (16 + n + 7) &^ 7
			}
			hdr := le.AppendUint32(nil, typ)
			hdr = le.AppendUint16(hdr, 0)
			hdr = le.AppendUint16(hdr, uint16(size))
			out.Write(hdr)
			if typ == RecordCompressed2 {
				out.Write(le.AppendUint64(nil, uint64(n)))
			}
			out.Write(p[:n])
			out.Write(make([]byte, size-len(hdr)-n-8*btoi(typ == RecordCompressed2)))
			p = p[n:]
		}
		z.Reset()
		out.Write(round)
	}
	pending := 0
	for _, r := range recs[keep:] {
		enc.Write(r)
		if pending += len(r); pending >= chunk {
			flush()
			pending = 0
		}
	}
	flush()
	return withData(b, out.Bytes())
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withData returns the little-endian recording b with data as its data
// section, its feature table and sections moved after it.
func withData(b, data []byte) []byte {
	le := binary.LittleEndian
	dataOff, dataN := int(le.Uint64(b[40:])), int(le.Uint64(b[48:]))
	nfeat := 0
	for i := range 4 {
		nfeat += bits.OnesCount64(le.Uint64(b[72+8*i:]))
	}
	tab := dataOff + dataN
	delta := len(data) - dataN
	out := slices.Clone(b[:dataOff])
	le.PutUint64(out[48:], uint64(len(data)))
	out = append(out, data...)
	for k := range nfeat {
		e := b[tab+16*k:]
		out = le.AppendUint64(out, uint64(int(le.Uint64(e))+delta))
		out = le.AppendUint64(out, le.Uint64(e[8:]))
	}
	return append(out, b[tab+16*nfeat:]...)
}

// recordList returns what Records passes for b, a line per record.
func recordList(t testing.TB, b []byte) ([]string, error) {
	t.Helper()
	f, err := open(t, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = f.Records(func(r *Record) bool {
		if r.Type == RecordFinishedRound || r.Type == recordAuxtrace || r.Type == recordHeaderTracingData {
			return true
		}
		out = append(out, recordLine(r))
		return true
	})
	return out, err
}

// recordLine prints what a record says.
func recordLine(r *Record) string {
	return fmt.Sprintf("%d %d %d %d %x %d %q %q %d %x", r.Type, r.PID, r.TID, r.Addr, r.IP, r.Time, r.Filename, r.Comm, r.Period, r.Callchain)
}

// TestCompressedRecords: a recording compressed as perf record -z
// compresses it, with either kind of compressed record, in pieces of any
// size, gives the records of the recording uncompressed, in order.
func TestCompressedRecords(t *testing.T) {
	plain := goldenRecording(t)
	want, err := recordList(t, plain)
	if err != nil || len(want) < 1000 {
		t.Fatalf("%d records, %v", len(want), err)
	}
	for _, tc := range []struct {
		keep, chunk, piece int
		typ                uint32
	}{
		{5, 64 << 10, 0xfff0 - 16, RecordCompressed},
		{5, 64 << 10, 0xfff0 - 16, RecordCompressed2},
		{0, 4096, 100, RecordCompressed},
		{3, 1000, 7, RecordCompressed2},
		{3, 1 << 30, 1 << 10, RecordCompressed}, // one flush at the end
	} {
		t.Run(fmt.Sprintf("keep%d-chunk%d-piece%d-type%d", tc.keep, tc.chunk, tc.piece, tc.typ), func(t *testing.T) {
			z := compressRecording(t, plain, tc.keep, tc.chunk, tc.piece, tc.typ)
			got, err := recordList(t, z)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d records, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
	// Stopping early stops in the stream too.
	f, err := open(t, compressRecording(t, plain, 0, 4096, 100, RecordCompressed))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := f.Records(func(*Record) bool { n++; return n < 10 }); err != nil || n != 10 {
		t.Errorf("stopped after %d records, %v", n, err)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCompressedBadInput: damaged compressed records give an error
// naming the file and the problem.
func TestCompressedBadInput(t *testing.T) {
	plain := goldenRecording(t)
	le := binary.LittleEndian
	z := compressRecording(t, plain, 0, 4096, 1000, RecordCompressed2)
	// The first compressed record.
	_, dataOff := dataSection(z)
	first := dataOff
	for le.Uint32(z[first:]) != RecordCompressed2 {
		first += int(le.Uint16(z[first+6:]))
	}
	edit := func(f func(b []byte)) []byte { b := slices.Clone(z); f(b); return b }
	// A stream of 256 MiB of records from some kilobytes: more than 4,096
	// times the file and 64 MiB.
	var bomb bytes.Buffer
	enc, _ := zstd.NewWriter(&bomb)
	rec := make([]byte, 0xfff8)
	le.PutUint32(rec, 99)
	le.PutUint16(rec[6:], uint16(len(rec)))
	for range (256 << 20) / len(rec) {
		enc.Write(rec)
	}
	enc.Close()
	var bombData []byte
	if n := dataOff + bomb.Len(); 64<<20+expansion*n > 256<<20 {
		t.Fatalf("the bomb's %d bytes do not exceed the bound", n)
	}
	for p := bomb.Bytes(); len(p) > 0; {
		n := min(len(p), 0xff00)
		bombData = le.AppendUint32(bombData, RecordCompressed)
		bombData = le.AppendUint16(bombData, 0)
		bombData = le.AppendUint16(bombData, uint16(8+n))
		bombData = append(bombData, p[:n]...)
		p = p[n:]
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not zstd", edit(func(b []byte) { copy(b[first+16:], "not zstd") }), "cannot decompress"},
		{"data size past the record", edit(func(b []byte) { le.PutUint64(b[first+8:], 1<<20) }), "claims 1048576 bytes of data"},
		{"stream cut inside a record", withData(z, cutStream(t, 4000)), "end inside a record"},
		{"record size zero in the stream", withData(z, cutStream(t, 0)), "claims 0 bytes"},
		{"expands too much", withData(z, bombData), "times the file's size"}, // 256 MiB from about 40 KB
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recordList(t, tc.data)
			if err == nil || !strings.Contains(err.Error(), "x.data") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming x.data and saying %q", err, tc.want)
			}
		})
	}
}

// cutStream returns a data section of one compressed record holding a
// record of type 99 claiming 8000 bytes and n bytes of it, or, for n 0,
// a record claiming 0 bytes.
func cutStream(t *testing.T, n int) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 8+n)
	le.PutUint32(rec, 99)
	if n > 0 {
		le.PutUint16(rec[6:], 8000)
	}
	var z bytes.Buffer
	enc, err := zstd.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(rec)
	enc.Close()
	out := le.AppendUint32(nil, RecordCompressed)
	out = le.AppendUint16(out, 0)
	out = le.AppendUint16(out, uint16(8+z.Len()))
	return append(out, z.Bytes()...)
}

// TestUnfinishedCompressed: a compressed recording perf record did not
// finish, cut anywhere, is read to its last whole record without an
// error, with one note.
func TestUnfinishedCompressed(t *testing.T) {
	le := binary.LittleEndian
	z := compressRecording(t, goldenRecording(t), 5, 4096, 1000, RecordCompressed)
	data, dataOff := dataSection(z)
	prev := int64(-1)
	for cut := dataOff + 200; cut < dataOff+len(data); cut += 777 {
		u := slices.Clone(z[:cut])
		le.PutUint64(u[48:], 0)
		f, err := open(t, u)
		if err != nil {
			t.Fatal(err)
		}
		p, conv, err := f.Profile(Options{})
		if err != nil {
			if strings.Contains(err.Error(), "no samples") {
				continue
			}
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(conv.Notes) != 1 || !strings.Contains(conv.Notes[0], "not finished") {
			t.Errorf("cut at %d: notes %q", cut, conv.Notes)
		}
		n := totalCount(p)
		if n < prev {
			t.Errorf("cut at %d: %d samples, fewer than %d cut earlier", cut, n, prev)
		}
		prev = n
	}
	if prev < 1000 {
		t.Errorf("%d samples at the last cut", prev)
	}
}

// TestThreadData: a recording of perf record --threads, its records in
// the header file and in per-thread files (data.0 compressed, data.1
// not), gives the records of the one-file recording, in the order of
// the files; damage in a thread's file names that file.
func TestThreadData(t *testing.T) {
	plain := goldenRecording(t)
	want, err := recordList(t, plain)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	data, dataOff := dataSection(plain)
	// Cut the data section after its 10th record and in the middle.
	cut := func(n int) int { off, _ := recordAt(plain, n); return off - dataOff }
	a, b := cut(10), cut(len(want)/2)
	header := withData(plain, data[:a])
	// data.0: the middle records, compressed as perf record -z does.
	thread0, _ := dataSection(compressRecording(t, withData(plain, data[a:b]), 0, 4096, 1000, RecordCompressed))
	thread1 := data[b:]

	list := func(thread1 []byte) ([]string, error) {
		f, err := open(t, header)
		if err != nil {
			t.Fatal(err)
		}
		f.AddThreadData(bytes.NewReader(thread0), int64(len(thread0)), "x.data/data.0")
		f.AddThreadData(bytes.NewReader(thread1), int64(len(thread1)), "x.data/data.1")
		var out []string
		err = f.Records(func(r *Record) bool {
			if r.Type != RecordFinishedRound {
				out = append(out, recordLine(r))
			}
			return true
		})
		return out, err
	}
	got, err := list(thread1)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%d records, want %d, first difference at %d; %v", len(got), len(want), firstDiff(got, want), err)
	}
	if _, err := list(thread1[:len(thread1)-3]); err == nil || !strings.HasPrefix(err.Error(), "x.data/data.1: ") {
		t.Errorf("a thread's file cut: error %v, want one naming x.data/data.1", err)
	}
	// Damage in data.0 loses the rest of data.0 only: the records of the
	// header file and data.1 are left (listed apart: cut counts the
	// FINISHED_ROUND records recordList leaves out).
	head, _ := recordList(t, header)
	tail, _ := recordList(t, withData(plain, thread1))
	bad := slices.Clone(thread0)
	le.PutUint16(bad[6:], 4)
	thread0 = bad
	got, err = list(thread1)
	if err == nil || !strings.HasPrefix(err.Error(), "x.data/data.0: record of type") || !slices.Equal(got, slices.Concat(head, tail)) {
		t.Errorf("data.0 damaged: %d records, want %d; %v", len(got), len(head)+len(tail), err)
	}
}
