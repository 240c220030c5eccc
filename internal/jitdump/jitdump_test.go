package jitdump

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// writer builds jitdump files for the tests.
type writer struct {
	bo  binary.ByteOrder
	buf bytes.Buffer
	ts  uint64 // the timestamp of the records written next; 0 means 7
}

func newWriter(bo binary.ByteOrder, flags uint64) *writer {
	w := &writer{bo: bo}
	w.u32(Magic)
	w.u32(1)
	w.u32(fileHeaderSize)
	w.u32(62) // EM_X86_64
	w.u32(0)
	w.u32(4242)
	w.u64(1)
	w.u64(flags)
	return w
}

func (w *writer) u32(v uint32) { binary.Write(&w.buf, w.bo, v) }
func (w *writer) u64(v uint64) { binary.Write(&w.buf, w.bo, v) }

// record appends a record of type id with body.
func (w *writer) record(id uint32, body []byte) {
	w.u32(id)
	w.u32(uint32(recordHeaderSize + len(body)))
	if w.ts == 0 {
		w.u64(7)
	} else {
		w.u64(w.ts)
	}
	w.buf.Write(body)
}

func (w *writer) body(f func(b *writer)) []byte {
	b := &writer{bo: w.bo}
	f(b)
	return b.buf.Bytes()
}

func (w *writer) load(addr, size, index uint64, name string) {
	w.record(recCodeLoad, w.body(func(b *writer) {
		b.u32(4242)
		b.u32(4243)
		b.u64(addr)
		b.u64(addr)
		b.u64(size)
		b.u64(index)
		b.buf.WriteString(name + "\x00")
		b.buf.Write(make([]byte, size))
	}))
}

func (w *writer) move(oldAddr, newAddr, size, index uint64) {
	w.record(recCodeMove, w.body(func(b *writer) {
		b.u32(4242)
		b.u32(4243)
		b.u64(newAddr)
		b.u64(oldAddr)
		b.u64(newAddr)
		b.u64(size)
		b.u64(index)
	}))
}

func (w *writer) debug(addr uint64, lines ...Line) {
	w.record(recCodeDebugInfo, w.body(func(b *writer) {
		b.u64(addr)
		b.u64(uint64(len(lines)))
		for _, l := range lines {
			b.u64(l.Addr + ELFHeaderSkew)
			b.u32(uint32(l.Line))
			b.u32(0)
			b.buf.WriteString(l.File + "\x00")
		}
	}))
}

func read(t *testing.T, data []byte) (*Dump, error) {
	t.Helper()
	return Read(bytes.NewReader(data), int64(len(data)), "x.dump")
}

// TestRead checks the final state for both byte orders: loads, a move,
// a later load over the same addresses, debug info with the +0x40 skew
// undone and "\xff" meaning the previous file, an unwinding record and an
// unknown one skipped, garbage in the header's flags, and CODE_CLOSE.
func TestRead(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		w := newWriter(bo, 0xdeadbeefcafe) // LLVM 19 ORC's flags are garbage too
		w.debug(0x1000, Line{Addr: 0x1000, File: "/a.js", Line: 3}, Line{Addr: 0x1010, File: "\xff", Line: 4})
		w.load(0x1000, 0x20, 1, "JS:*a /a.js:3:1")
		w.load(0x2000, 0x10, 2, "b")
		w.move(0x2000, 0x3000, 0x10, 2)
		w.record(recUnwindingInfo, make([]byte, 24))
		w.record(99, []byte("future"))
		w.load(0x1010, 0x10, 3, "c") // over a's second half: c wins, a is dropped
		w.record(recCodeClose, nil)
		w.load(0x5000, 0x10, 4, "after close")
		d, err := read(t, w.buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if d.Machine != 62 || d.PID != 4242 || len(d.Warnings) != 0 {
			t.Errorf("machine %d pid %d warnings %q", d.Machine, d.PID, d.Warnings)
		}
		var got []string
		for _, c := range d.Code {
			got = append(got, c.Name)
		}
		if strings.Join(got, ",") != "c,b" || d.Lookup(0x3005).Name != "b" || d.Lookup(0x2005) != nil || d.Lookup(0x1005) != nil {
			t.Fatalf("%v: code %q", bo, got)
		}
		if b := d.Lookup(0x3005); b.Loaded != 7 || len(b.Moves) != 1 || b.Moves[0].Time != 7 || b.Moves[0].From != 0x2000 || b.Moves[0].To != 0x3000 {
			t.Errorf("%v: timeline of b: loaded %d, moves %+v", bo, b.Loaded, b.Moves)
		}
	}
	// Lines, without the overlapping load.
	w := newWriter(binary.LittleEndian, 0)
	w.debug(0x1000, Line{Addr: 0x1000, File: "/a.js", Line: 3}, Line{Addr: 0x1010, File: "\xff", Line: 4})
	w.load(0x1000, 0x20, 1, "JS:*a /a.js:3:1")
	w.move(0x1000, 0x9000, 0x20, 1)
	d, err := read(t, w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	c := d.Lookup(0x9018)
	if c == nil {
		t.Fatal("moved code not found")
	}
	lines, err := d.Lines(bytes.NewReader(w.buf.Bytes()), c)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[uint64]Line{0x9000: {0x9000, "/a.js", 3}, 0x900f: {0x9000, "/a.js", 3}, 0x9010: {0x9010, "/a.js", 4}, 0x901f: {0x9010, "/a.js", 4}} {
		if l, ok := LineAt(lines, addr); !ok || l != want {
			t.Errorf("LineAt(%#x) = %+v, %v; want %+v", addr, l, ok, want)
		}
	}
}

// TestBadInput: every broken file gives an error naming the problem, or
// the records before the damage with a warning; never a panic.
func TestBadInput(t *testing.T) {
	good := func() *writer {
		w := newWriter(binary.LittleEndian, 0)
		w.load(0x1000, 0x20, 1, "a")
		return w
	}
	for _, tc := range []struct {
		name    string
		data    func() []byte
		wantErr string // Read fails with this
		warn    string // or warns with this
		code    int    // pieces of code kept
	}{
		{name: "empty", data: func() []byte { return nil }, wantErr: "too short"},
		{name: "wrong magic", data: func() []byte { b := good().buf.Bytes(); copy(b, "ELF\x7f"); return b }, wantErr: "bad magic"},
		{name: "header size past the end", data: func() []byte {
			b := good().buf.Bytes()
			binary.LittleEndian.PutUint32(b[8:], 1<<30)
			return b
		}, wantErr: "header size"},
		{name: "truncated record", data: func() []byte { b := good().buf.Bytes(); return b[:len(b)-5] }, warn: "record of type 0 claims", code: 0},
		{name: "record size too small", data: func() []byte {
			w := good()
			w.u32(recCodeLoad)
			w.u32(4)
			w.u64(0)
			return w.buf.Bytes()
		}, warn: "claims 4 bytes", code: 1},
		{name: "code size past the record", data: func() []byte {
			w := good()
			w.record(recCodeLoad, w.body(func(b *writer) {
				b.u32(1)
				b.u32(1)
				b.u64(0x5000)
				b.u64(0x5000)
				b.u64(1 << 40)
				b.u64(9)
				b.buf.WriteString("big\x00")
			}))
			return w.buf.Bytes()
		}, warn: "code of 1099511627776 bytes", code: 1},
		{name: "unterminated name", data: func() []byte {
			w := good()
			w.record(recCodeLoad, append(make([]byte, 40), "noterminator"...))
			return w.buf.Bytes()
		}, warn: "unterminated", code: 1},
		{name: "huge line count", data: func() []byte {
			w := good()
			w.record(recCodeDebugInfo, w.body(func(b *writer) { b.u64(0x1000); b.u64(1 << 60) }))
			return w.buf.Bytes()
		}, warn: "cannot fit", code: 1},
		{name: "garbage file names", data: func() []byte {
			w := newWriter(binary.LittleEndian, 0)
			w.debug(0x1000, Line{Addr: 0x1000, File: "\x01\x02garbage", Line: 3})
			w.load(0x1000, 0x20, 1, "a")
			return w.buf.Bytes()
		}, warn: "1 line tables whose file names are not text were left out (JIT writers leave such records; harmless: the code keeps its names and its other lines)", code: 1},
		{name: "zero-size and wrapping code", data: func() []byte {
			w := good()
			w.load(0x2000, 0, 2, "empty")
			w.record(recCodeLoad, w.body(func(b *writer) {
				b.u32(1)
				b.u32(1)
				b.u64(^uint64(0) - 4)
				b.u64(^uint64(0) - 4)
				b.u64(16)
				b.u64(3)
				b.buf.WriteString("wraps\x00")
				b.buf.Write(make([]byte, 16))
			}))
			return w.buf.Bytes()
		}, code: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := read(t, tc.data())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "x.dump") {
					t.Fatalf("error %v, want one naming x.dump and saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(d.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q, want %q", d.Warnings, tc.warn)
			}
			if len(d.Code) != tc.code {
				t.Errorf("%d pieces of code, want %d", len(d.Code), tc.code)
			}
		})
	}
}

// TestV8LineSkew reads the jitdump Node.js 20 wrote for the checked-in
// fixture (testdata/node) and checks that undoing the +0x40 puts V8's line
// entries where its code is: the first one of nearly every function is
// at the function's first byte (V8 starts each line table at pc offset
// 0). Taken as written, as perf and samply take them, no function's
// entries start at its first byte, and the last ones of some lie past
// its end.
func TestV8LineSkew(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/node/golden/prof/jit-*.dump")
	if len(paths) != 1 {
		t.Fatalf("fixture jitdump: %q", paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	d, err := read(t, data)
	if err != nil {
		t.Fatal(err)
	}
	withLines, atStart, pastEndUncorrected := 0, 0, 0
	for i := range d.Code {
		c := d.Code[i]
		lines, err := d.Lines(bytes.NewReader(data), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) == 0 {
			continue
		}
		withLines++
		if lines[0].Addr == c.Addr {
			atStart++
		}
		if last := lines[len(lines)-1].Addr + ELFHeaderSkew; last-c.Addr >= c.Size {
			pastEndUncorrected++
		}
	}
	if withLines < 20 || atStart*10 < withLines*9 {
		t.Errorf("%d functions with lines, %d of them with the first entry at their start", withLines, atStart)
	}
	if pastEndUncorrected == 0 {
		t.Errorf("no function would have entries past its end without the correction: is the fixture exercising it?")
	}
	t.Logf("%d functions with line tables; uncorrected, %d would have entries past their end", withLines, pastEndUncorrected)
}

// FuzzRead: no input panics, and what is kept is sorted and disjoint.
func FuzzRead(f *testing.F) {
	w := newWriter(binary.LittleEndian, 0)
	w.debug(0x1000, Line{Addr: 0x1000, File: "/a.js", Line: 3})
	w.load(0x1000, 0x20, 1, "a")
	w.move(0x1000, 0x2000, 0x20, 1)
	f.Add(w.buf.Bytes())
	f.Add(newWriter(binary.BigEndian, 0).buf.Bytes())
	// LLVM's ORC: one unwinding record, its header first with the
	// .eh_frame's address, for the loads after it.
	w = newWriter(binary.LittleEndian, 0)
	cie := []byte{12, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 0}
	w.unwinding(cie, 12, true, 0, binary.LittleEndian.AppendUint64([]byte{1, 0x0c, 0xff, 0xff}, 0x3000)...)
	w.load(0x1000, 0x20, 1, "a")
	w.load(0x2000, 0x20, 2, "b")
	f.Add(w.buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Read(bytes.NewReader(data), int64(len(data)), "f.dump")
		if err != nil {
			return
		}
		for i := 1; i < len(d.Code); i++ {
			if d.Code[i].Addr < d.Code[i-1].Addr+d.Code[i-1].Size {
				t.Fatalf("code %d overlaps code %d", i, i-1)
			}
		}
		for i := range d.Code {
			c := d.Code[i]
			d.Lookup(c.Addr)
			if lines, err := d.Lines(bytes.NewReader(data), c); err == nil {
				for _, l := range lines {
					if l.Addr < c.Addr || l.Addr-c.Addr >= c.Size {
						t.Fatalf("line at %#x outside its code [%#x, +%#x)", l.Addr, c.Addr, c.Size)
					}
				}
				LineAt(lines, c.Addr)
			}
			if eh, err := d.EHFrame(bytes.NewReader(data), c); err == nil && (len(eh) > len(data) || (eh != nil) != c.HasEHFrame()) {
				t.Fatalf("%d bytes of .eh_frame from a %d-byte file (has %v)", len(eh), len(data), c.HasEHFrame())
			}
			if c.EHFrameAddr() != 0 && !c.HasEHFrame() {
				t.Fatalf("an .eh_frame address %#x without an .eh_frame", c.EHFrameAddr())
			}
			// The final state is what the timeline holds at the end:
			// At agrees with Lookup long after the last record.
			if got, at := d.At(c.Addr, forever); got == nil || !d.Final(got, c.Addr) || at != c.Addr {
				t.Fatalf("At(%#x, end) = %v at %#x; the final state has %q there", c.Addr, got, at, c.Name)
			}
		}
		for _, p := range d.places {
			if got, at := d.At(p.lo, p.from); got != nil && (at < got.Addr || at-got.Addr >= got.Size) {
				t.Fatalf("At(%#x, %d) gives final address %#x outside its code [%#x, +%#x)", p.lo, p.from, at, got.Addr, got.Size)
			}
		}
	})
}

// BenchmarkRead100MB reads a 100 MB jitdump (code loads of 400 bytes,
// each after a 20-entry line table, some moved), streamed from a file as
// pprof reads it, and reports the heap the final state keeps per piece
// of code: the code bytes and line tables stay in the file.
func BenchmarkRead100MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "jit-1.dump")
	w := newWriter(binary.LittleEndian, 0)
	n := 0
	for w.buf.Len() < 100<<20 {
		addr := 0x7f0000000000 + uint64(n)*0x200
		lines := make([]Line, 20)
		for i := range lines {
			lines[i] = Line{Addr: addr + uint64(i)*20, File: "/srv/app/lib/module.js", Line: 10 + i}
		}
		w.debug(addr, lines...)
		w.load(addr, 400, uint64(n), fmt.Sprintf("JS:*function_number_%d /srv/app/lib/module.js:10:3", n))
		if n%50 == 49 {
			w.move(addr, addr+0x100000000, 400, uint64(n))
		}
		n++
	}
	if err := os.WriteFile(path, w.buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(w.buf.Len())
	b.SetBytes(size)
	b.ResetTimer()
	var kept uint64
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := Read(f, size, path)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		if len(d.Code) != n {
			b.Fatalf("%d pieces of code, want %d", len(d.Code), n)
		}
		runtime.KeepAlive(d)
		f.Close()
	}
	b.ReportMetric(float64(kept)/float64(n), "kept-B/code")
	b.ReportMetric(float64(kept)/float64(size), "kept/file")
}

// TestAt replays a timeline: code loaded, moved away, its place reused,
// and checks what each address held at each time, and where that byte
// is in the final state (where its lines are).
func TestAt(t *testing.T) {
	w := newWriter(binary.LittleEndian, 0)
	w.ts = 100
	w.debug(0x1000, Line{Addr: 0x1000, File: "/a.js", Line: 3}, Line{Addr: 0x1008, File: "/a.js", Line: 4})
	w.load(0x1000, 0x20, 1, "a") // a at 0x1000 from 100
	w.ts = 200
	w.load(0x2000, 0x10, 2, "b") // b at 0x2000 from 200
	w.ts = 300
	w.move(0x1000, 0x3000, 0x20, 1) // a moves to 0x3000 at 300
	w.ts = 400
	w.load(0x1000, 0x10, 3, "c") // c over a's old place at 400
	w.ts = 500
	w.load(0x2000, 0x10, 4, "d") // d replaces b at 500
	d, err := read(t, w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !d.Replaced() {
		t.Errorf("Replaced() = false for a dump with a move and a reload")
	}
	for _, tc := range []struct {
		addr, time uint64
		want       string
		final      uint64 // the address in the final state
		isFinal    bool
	}{
		{0x1008, 99, "", 0, false},
		{0x1008, 100, "a", 0x3008, false},
		{0x1008, 299, "a", 0x3008, false},
		{0x1008, 300, "", 0, false}, // a moved away, c not yet loaded
		{0x1018, 450, "", 0, false}, // c is smaller than a was
		{0x1008, 400, "c", 0x1008, true},
		{0x3008, 299, "", 0, false},
		{0x3008, 300, "a", 0x3008, true},
		{0x2004, 250, "b", 0x2004, false},
		{0x2004, 500, "d", 0x2004, true},
		{0x2004, 1 << 62, "d", 0x2004, true},
	} {
		c, final := d.At(tc.addr, tc.time)
		name := ""
		if c != nil {
			name = c.Name
		}
		if name != tc.want || final != tc.final || (c != nil && d.Final(c, tc.addr) != tc.isFinal) {
			t.Errorf("At(%#x, %d) = %q at %#x (final %v), want %q at %#x (final %v)", tc.addr, tc.time, name, final, c != nil && d.Final(c, tc.addr), tc.want, tc.final, tc.isFinal)
		}
	}
	// a's lines, read for its final place, serve the sample at its old
	// one through the final address At gives.
	c, final := d.At(0x1008, 150)
	lines, err := d.Lines(bytes.NewReader(w.buf.Bytes()), c)
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := LineAt(lines, final); !ok || l.Line != 4 {
		t.Errorf("line of a at 0x1008 at time 150: %+v %v, want 4", l, ok)
	}
	one := newWriter(binary.LittleEndian, 0)
	one.load(0x1000, 0x20, 1, "a")
	if d, _ := read(t, one.buf.Bytes()); d.Replaced() {
		t.Errorf("Replaced() = true for a dump of one load")
	}
}

// TestMoveOverCode: code moved over other code's memory replaces it, in
// the final state as in the timeline, though the other code was loaded
// after it.
func TestMoveOverCode(t *testing.T) {
	w := newWriter(binary.LittleEndian, 0)
	w.ts = 10
	w.load(0x4000, 0x10, 1, "e")
	w.ts = 20
	w.load(0x5000, 0x10, 2, "f")
	w.ts = 30
	w.move(0x4000, 0x5000, 0x10, 1)
	d, err := read(t, w.buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Lookup(0x5004); c == nil || c.Name != "e" || len(d.Code) != 1 {
		t.Errorf("final state at 0x5004: %v (%d pieces), want e alone", c, len(d.Code))
	}
	for _, tc := range []struct {
		time uint64
		want string
	}{{25, "f"}, {30, "e"}, {forever, "e"}} {
		if c, _ := d.At(0x5004, tc.time); c == nil || c.Name != tc.want {
			t.Errorf("At(0x5004, %d) = %v, want %s", tc.time, c, tc.want)
		}
	}
}

// unwinding writes a CODE_UNWINDING_INFO record holding ehFrame and an
// .eh_frame_hdr of hdr bytes, the header first or last: hdrBytes if
// given, else version 1 then bytes 1 (DW_EH_PE_uleb128 pointers, which
// give no address).
func (w *writer) unwinding(ehFrame []byte, hdr int, hdrFirst bool, mapped uint64, hdrBytes ...byte) {
	w.record(recUnwindingInfo, w.body(func(b *writer) {
		b.u64(uint64(len(ehFrame) + hdr))
		b.u64(uint64(hdr))
		b.u64(mapped)
		h := bytes.Repeat([]byte{1}, hdr)
		copy(h, hdrBytes)
		if hdrFirst {
			b.buf.Write(h)
		}
		b.buf.Write(ehFrame)
		if !hdrFirst {
			b.buf.Write(h)
		}
	}))
}

// TestUnwindingInfo: the .eh_frame of a CODE_UNWINDING_INFO record goes
// with the next CODE_LOAD, whether the writer put its .eh_frame_hdr
// before it (LLVM's ORC, the specification) or after it (V8, perf's
// reader), with any mapped_size (LLVM's ORC writes 0); with the
// following ones too when the header gives the .eh_frame's address
// absolutely (LLVM's ORC: one record for all the code of an object),
// until the next unwinding record. A record with nothing but the header
// (V8's empty tables) or whose sizes make no sense gives none.
func TestUnwindingInfo(t *testing.T) {
	le := binary.LittleEndian
	// A CIE (length 12, id 0, ...) then an FDE: the bytes are only
	// located here, not parsed.
	eh := le.AppendUint32(nil, 12)
	eh = le.AppendUint32(eh, 0)
	eh = append(eh, 1, 'z', 'R', 0, 1, 0x78, 0x10, 0)
	eh = append(eh, bytes.Repeat([]byte{0xee}, 20)...)
	eh2 := append(slices.Clone(eh), 0xdd)
	// LLVM's ORC's header: version 1, eh_frame_ptr DW_EH_PE_sdata8 |
	// DW_EH_PE_absptr, no table.
	orc := le.AppendUint64([]byte{1, 0x0c, 0xff, 0xff}, 0x7f0012345018)
	for _, tc := range []struct {
		name            string
		write           func(w *writer) // before the load of f
		writeAfter      func(w *writer) // between f and after
		want, wantAfter []byte
		wantAddr        uint64
	}{
		{name: "header last", write: func(w *writer) { w.unwinding(eh, 20, false, 64) }, want: eh},
		{name: "header first", write: func(w *writer) { w.unwinding(eh, 20, true, 64) }, want: eh},
		{name: "mapped_size 0", write: func(w *writer) { w.unwinding(eh, 20, false, 0) }, want: eh},
		{name: "absolute address", write: func(w *writer) { w.unwinding(eh, 12, true, 0, orc...) },
			want: eh, wantAfter: eh, wantAddr: 0x7f0012345018},
		{name: "absolute address, header last", write: func(w *writer) { w.unwinding(eh, 12, false, 0, orc...) },
			want: eh, wantAfter: eh, wantAddr: 0x7f0012345018},
		{name: "absolute address, then another record",
			write:      func(w *writer) { w.unwinding(eh, 12, true, 0, orc...) },
			writeAfter: func(w *writer) { w.unwinding(eh2, 20, false, 64) },
			want:       eh, wantAfter: eh2, wantAddr: 0x7f0012345018},
		{name: "absolute address, then an empty record",
			write:      func(w *writer) { w.unwinding(eh, 12, true, 0, orc...) },
			writeAfter: func(w *writer) { w.unwinding(nil, 20, false, 0) },
			want:       eh, wantAddr: 0x7f0012345018},
		{name: "header cut short", write: func(w *writer) { w.unwinding(eh, 8, true, 0, orc[:8]...) }, want: eh},
		{name: "V8's empty table", write: func(w *writer) { w.unwinding(nil, 20, false, 0) }},
		{name: "header larger than the data", write: func(w *writer) {
			w.record(recUnwindingInfo, w.body(func(b *writer) { b.u64(8); b.u64(16); b.u64(8); b.buf.Write(make([]byte, 8)) }))
		}},
		{name: "size past the record", write: func(w *writer) {
			w.record(recUnwindingInfo, w.body(func(b *writer) { b.u64(1 << 40); b.u64(16); b.u64(8) }))
		}},
		{name: "no CIE", write: func(w *writer) { w.unwinding(bytes.Repeat([]byte{7}, 40), 20, false, 64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWriter(le, 0)
			w.load(0x1000, 0x10, 1, "before")
			tc.write(w)
			w.load(0x2000, 0x10, 2, "f")
			if tc.writeAfter != nil {
				tc.writeAfter(w)
			}
			w.load(0x3000, 0x10, 3, "after")
			data := w.buf.Bytes()
			d, err := read(t, data)
			if err != nil {
				t.Fatal(err)
			}
			if c := d.Lookup(0x1000); c.HasEHFrame() {
				t.Errorf("%s has an .eh_frame", c.Name)
			}
			for _, want := range []struct {
				addr uint64
				eh   []byte
			}{{0x2000, tc.want}, {0x3000, tc.wantAfter}} {
				c := d.Lookup(want.addr)
				got, err := d.EHFrame(bytes.NewReader(data), c)
				if err != nil || !bytes.Equal(got, want.eh) || c.HasEHFrame() != (want.eh != nil) {
					t.Errorf("%s: .eh_frame %x (has %v), %v; want %x", c.Name, got, c.HasEHFrame(), err, want.eh)
				}
				wantAddr := tc.wantAddr
				if want.eh == nil || (want.addr == 0x3000 && tc.writeAfter != nil) {
					wantAddr = 0
				}
				if a := c.EHFrameAddr(); a != wantAddr {
					t.Errorf("%s: .eh_frame at %#x, want %#x", c.Name, a, wantAddr)
				}
			}
		})
	}
}
