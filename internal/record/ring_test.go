//go:build linux

package record

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeRing returns a ring over a buffer of size bytes in ordinary
// memory, with its tail at tail, holding recs from there on (wrapping
// around the end), its head after them.
func fakeRing(size int, tail uint64, recs [][]byte) *ring {
	r := &ring{fd: -1, data: make([]byte, size), meta: &unix.PerfEventMmapPage{}}
	off := tail
	for _, rec := range recs {
		for i, c := range rec {
			r.data[(off+uint64(i))%uint64(size)] = c
		}
		off += uint64(len(rec))
	}
	r.meta.Data_tail, r.meta.Data_head = tail, off
	return r
}

// testRecord returns a record of type typ with body.
func testRecord(typ uint32, misc uint16, body []byte) []byte {
	b := binary.NativeEndian.AppendUint32(nil, typ)
	b = binary.NativeEndian.AppendUint16(b, misc)
	b = binary.NativeEndian.AppendUint16(b, uint16(8+len(body)))
	return append(b, body...)
}

// mmap2Body returns the body of an MMAP2 record of file with prot.
func mmap2Body(file string, prot uint32) []byte {
	b := make([]byte, 8+24+24)
	b = binary.NativeEndian.AppendUint32(b, prot)
	b = binary.NativeEndian.AppendUint32(b, 2)
	b = append(b, file...)
	return append(b, make([]byte, 8-len(file)%8)...)
}

// TestDrain copies records from a ring buffer whose content wraps around
// its end, a record cut in two by it: the bytes written are the records,
// whole and in order; samples are counted and executable mappings named,
// the one that wraps too; the tail moves to the head.
func TestDrain(t *testing.T) {
	sample := testRecord(recordSample, 2, make([]byte, 16))
	exe := testRecord(recordMMAP2, 2, mmap2Body("/usr/lib/libwrapped.so", unix.PROT_READ|unix.PROT_EXEC))
	data := testRecord(recordMMAP2, 2, mmap2Body("/data", unix.PROT_READ))
	kernel := testRecord(recordMMAP, 1, append(make([]byte, 32), "[kernel.kallsyms]_text\x00\x00"...))
	for _, tc := range []struct {
		name string
		tail uint64
		recs [][]byte
	}{
		{name: "inside", tail: 8, recs: [][]byte{sample, exe, data}},
		{name: "wrapping mapping", tail: 256 - 24, recs: [][]byte{sample, exe, sample}},
		{name: "wrapping sample", tail: 256 - 8, recs: [][]byte{sample, data, kernel}},
		{name: "ending at the end", tail: 256 - 48, recs: [][]byte{sample, sample}},
		{name: "full", tail: 1 << 40, recs: [][]byte{exe, data, sample, sample, sample, testRecord(99, 0, nil)}},
		{name: "empty", tail: 100 * 8, recs: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeRing(256, tc.tail, tc.recs)
			var out bytes.Buffer
			var files []string
			st := &drainStats{mapped: func(f string, kernel bool) {
				if kernel {
					f = "kernel " + f
				}
				files = append(files, f)
			}}
			if err := r.drain(&out, st); err != nil {
				t.Fatal(err)
			}
			if want := slices.Concat(tc.recs...); !bytes.Equal(out.Bytes(), want) {
				t.Errorf("written:\n%x\nwant:\n%x", out.Bytes(), want)
			}
			wantSamples, wantFiles := 0, []string(nil)
			for _, rec := range tc.recs {
				switch {
				case len(rec) > 16 && bytes.Equal(rec, sample):
					wantSamples++
				case bytes.Equal(rec, exe):
					wantFiles = append(wantFiles, "/usr/lib/libwrapped.so")
				case bytes.Equal(rec, kernel):
					wantFiles = append(wantFiles, "kernel [kernel.kallsyms]_text")
				}
			}
			if int(st.samples) != wantSamples || !slices.Equal(files, wantFiles) {
				t.Errorf("got %d samples, files %q; want %d, %q", st.samples, files, wantSamples, wantFiles)
			}
			if r.meta.Data_tail != r.meta.Data_head {
				t.Errorf("tail %#x, head %#x", r.meta.Data_tail, r.meta.Data_head)
			}
		})
	}
}

// TestDrainDamaged refuses a head beyond the buffer and a record whose
// size is impossible, without moving the tail.
func TestDrainDamaged(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *ring
	}{
		{name: "head too far", r: func() *ring {
			r := fakeRing(64, 0, nil)
			r.meta.Data_head = 65
			return r
		}()},
		{name: "size zero", r: fakeRing(64, 0, [][]byte{{9, 0, 0, 0, 0, 0, 0, 0}})},
		{name: "size past the head", r: fakeRing(64, 0, [][]byte{testRecord(recordSample, 0, make([]byte, 8))[:8]})},
	} {
		if err := tc.r.drain(&bytes.Buffer{}, &drainStats{}); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if tc.r.meta.Data_tail != 0 {
			t.Errorf("%s: tail moved to %#x", tc.name, tc.r.meta.Data_tail)
		}
	}
}

// TestParseMapsLine reads lines of /proc/PID/maps: file names with
// spaces, the vDSO, anonymous memory, and bad lines.
func TestParseMapsLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want mapsLine
		ok   bool
	}{
		{line: "55f1c0a00000-55f1c0a13000 r-xp 00004000 fe:00 247072                     /usr/bin/dash",
			want: mapsLine{start: 0x55f1c0a00000, end: 0x55f1c0a13000, offset: 0x4000, perms: "r-xp", major: 0xfe, inode: 247072, file: "/usr/bin/dash"}, ok: true},
		{line: "7f00-8000 r-xp 00000000 00:00 0                          [vdso]",
			want: mapsLine{start: 0x7f00, end: 0x8000, perms: "r-xp", file: "[vdso]"}, ok: true},
		{line: "7f00-8000 rwxp 00000000 00:00 0 ",
			want: mapsLine{start: 0x7f00, end: 0x8000, perms: "rwxp"}, ok: true},
		{line: "1000-2000 r-xs 00001000 08:01 12 /tmp/my lib 0.so (deleted)",
			want: mapsLine{start: 0x1000, end: 0x2000, offset: 0x1000, perms: "r-xs", major: 8, minor: 1, inode: 12, file: "/tmp/my lib 0.so (deleted)"}, ok: true},
		{line: "2000-1000 r-xp 00000000 00:00 0"},
		{line: "zz-1000 r-xp 00000000 00:00 0"},
		{line: "1000-2000 r-x 00000000 00:00 0"},
		{line: ""},
	} {
		got, ok := parseMapsLine(tc.line)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%q: got %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestParseCPUList reads CPU lists as sysfs writes them.
func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want []int
	}{
		{s: "0", want: []int{0}},
		{s: "0-3", want: []int{0, 1, 2, 3}},
		{s: "0-1,4,6-7", want: []int{0, 1, 4, 6, 7}},
		{s: ""},
		{s: "3-1"},
		{s: "a"},
		{s: "0-99999999"},
	} {
		got, ok := parseCPUList(tc.s)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.s, got, ok, tc.want)
		}
	}
}
