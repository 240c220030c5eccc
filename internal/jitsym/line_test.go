package jitsym

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// lineProgram assembles a .debug_line unit: header fields for version
// (4 or 5), the directory and file tables, then the program bytes.
func lineProgram(version int, dirs []string, files [][2]any, prog []byte, lineStr *[]byte) []byte {
	le := binary.LittleEndian
	var h []byte
	h = append(h, 1)           // minimum_instruction_length
	h = append(h, 1)           // maximum_operations_per_instruction
	h = append(h, 1)           // default_is_stmt
	h = append(h, byte(256-5)) // line_base -5
	h = append(h, 14)          // line_range
	h = append(h, 13)          // opcode_base
	h = append(h, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1)
	if version >= 5 {
		strp := func(s string) []byte {
			off := len(*lineStr)
			*lineStr = append(append(*lineStr, s...), 0)
			return le.AppendUint32(nil, uint32(off))
		}
		h = append(h, 1, lnctPath, formLineStrp) // directory entry format
		h = append(h, byte(len(dirs)))
		for _, d := range dirs {
			h = append(h, strp(d)...)
		}
		h = append(h, 2, lnctPath, formString, lnctDirectoryIndex, formUdata)
		h = append(h, byte(len(files)))
		for _, f := range files {
			h = append(append(h, f[0].(string)...), 0, byte(f[1].(int)))
		}
	} else {
		for _, d := range dirs {
			h = append(append(h, d...), 0)
		}
		h = append(h, 0)
		for _, f := range files {
			h = append(append(h, f[0].(string)...), 0, byte(f[1].(int)), 0, 0)
		}
		h = append(h, 0)
	}
	var u []byte
	u = le.AppendUint16(u, uint16(version))
	if version >= 5 {
		u = append(u, 8, 0) // address_size, segment_selector_size
	}
	u = le.AppendUint32(u, uint32(len(h)))
	u = append(append(u, h...), prog...)
	return append(le.AppendUint32(nil, uint32(len(u))), u...)
}

// Line program opcodes, assembled.
func setAddress(a uint64) []byte {
	return append([]byte{0, 9, lneSetAddress}, binary.LittleEndian.AppendUint64(nil, a)...)
}
func endSequence() []byte { return []byte{0, 1, lneEndSequence} }

// special returns the special opcode advancing the address by addr and the
// line by line (line_base -5, line_range 14, opcode_base 13).
func special(addr, line int) byte { return byte(13 + (line + 5) + 14*addr) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestLineTable(t *testing.T) {
	prog := cat(
		setAddress(0x1000),
		[]byte{lnsCopy},                          // 0x1000 line 1
		[]byte{special(4, 1)},                    // 0x1004 line 2
		[]byte{lnsSetFile, 2, lnsAdvanceLine, 5}, // file 2, line 7
		[]byte{lnsSetColumn, 9, lnsCopy},         // 0x1004 again: this row wins
		[]byte{lnsAdvancePC, 8, special(0, 1)},   // 0x100c line 8
		[]byte{lnsAdvancePC, 4},
		endSequence(),                     // ends at 0x1010
		setAddress(0x3000), endSequence(), // empty: dropped
		setAddress(0x2000),
		[]byte{lnsSetFile, 9, lnsCopy}, // invalid file number
		[]byte{lnsFixedAdvancePC, 0x10, 0x00},
		endSequence(),                       // ends at 0x2010
		setAddress(0x4000), []byte{lnsCopy}, // no end_sequence: dropped
	)
	for _, version := range []int{4, 5} {
		var lineStr []byte
		dirs := []string{"inc"}
		files := [][2]any{{"a.c", 0}, {"b.h", 1}}
		if version == 5 {
			dirs = []string{"/build", "inc"}
			files = [][2]any{{"unused.c", 0}, {"a.c", 0}, {"b.h", 1}} // numbers as in v4: 1 and 2
		}
		s := &Symbolizer{}
		b := &builder{s: s, bo: binary.LittleEndian, tableAt: map[uint64]int32{}, fileIDs: map[string]int32{},
			lineBudget: 1 << 20, rowBudget: 1 << 20, pathBudget: 1 << 20}
		b.debugLine = lineProgram(version, dirs, files, prog, &lineStr)
		b.debugLineStr = lineStr
		ti, err := b.lineTable(0, lineUnit{compDir: "/build"})
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		u := &unit{table: ti}
		tests := []struct {
			name string
			addr uint64
			want Frame
			ok   bool
		}{
			{name: "below", addr: 0xfff},
			{name: "start", addr: 0x1000, want: Frame{File: "/build/a.c", Line: 1}, ok: true},
			{name: "inside", addr: 0x1003, want: Frame{File: "/build/a.c", Line: 1}, ok: true},
			{name: "last row at an address", addr: 0x1004, want: Frame{File: "/build/inc/b.h", Line: 7, Column: 9}, ok: true},
			{name: "end-1", addr: 0x100f, want: Frame{File: "/build/inc/b.h", Line: 8, Column: 9}, ok: true},
			{name: "end", addr: 0x1010},
			{name: "gap", addr: 0x1800},
			{name: "invalid file number", addr: 0x2008, ok: true},
			{name: "empty sequence", addr: 0x3000},
			{name: "unterminated sequence", addr: 0x4000},
			{name: "above", addr: ^uint64(0)},
		}
		for _, tt := range tests {
			got, ok := s.lineFrame(u, tt.addr)
			if got != tt.want || ok != tt.ok {
				t.Errorf("v%d %s: lineFrame(%#x) = %+v, %v; want %+v, %v", version, tt.name, tt.addr, got, ok, tt.want, tt.ok)
			}
		}
	}
}

func TestLineTableErrors(t *testing.T) {
	good := lineProgram(4, nil, [][2]any{{"a.c", 0}}, cat(setAddress(0x1000), []byte{lnsCopy}, endSequence()), nil)
	tests := []struct {
		name string
		data []byte
		off  uint64
		want string
	}{
		{name: "offset past end", data: good, off: 1 << 20, want: "past the end"},
		{name: "length", data: append([]byte{0xf0, 0xff, 0xff, 0x0f}, good[4:]...), want: "exceeds the section"},
		{name: "version", data: func() []byte { b := append([]byte(nil), good...); b[4] = 9; return b }(), want: "unsupported line table version 9"},
		{name: "truncated program", data: func() []byte {
			b := append([]byte(nil), good[:len(good)-2]...)
			binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
			return b
		}(), want: "unexpected end of data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &builder{s: &Symbolizer{}, bo: binary.LittleEndian, tableAt: map[uint64]int32{}, fileIDs: map[string]int32{},
				lineBudget: 1 << 20, rowBudget: 1 << 20, pathBudget: 1 << 20, debugLine: tt.data}
			_, err := b.lineTable(tt.off, lineUnit{})
			var de *decodeError
			if !errors.As(err, &de) || de.sec != ".debug_line" || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a .debug_line error containing %q", err, tt.want)
			}
		})
	}
}

// TestLineTableOddAddresses checks the two cases the row encoding must
// handle that no compiler emits: a row whose address goes back (dropped:
// no lookup of the sorted rows could find it), and rows 4 GiB or more
// after the start of their sequence (which is split there).
func TestLineTableOddAddresses(t *testing.T) {
	const far = 0x10_0000_0000
	prog := cat(
		setAddress(0x1000), []byte{lnsCopy}, // line 1
		[]byte{special(0x10, 1)},                  // 0x1010 line 2
		setAddress(0x1008), []byte{special(0, 1)}, // 0x1008 line 3: back, dropped
		setAddress(0x1020), []byte{special(0, 1)}, // 0x1020 line 4
		setAddress(0x1030), endSequence(),
		setAddress(far), []byte{lnsCopy}, // line 1
		setAddress(far+5<<30), []byte{special(0, 1)}, // line 2, 5 GiB on
		setAddress(far+5<<30+16), endSequence(),
	)
	s := &Symbolizer{}
	b := &builder{s: s, bo: binary.LittleEndian, tableAt: map[uint64]int32{}, fileIDs: map[string]int32{},
		lineBudget: 1 << 20, rowBudget: 1 << 20, pathBudget: 1 << 20}
	b.debugLine = lineProgram(4, nil, [][2]any{{"a.c", 0}}, prog, nil)
	ti, err := b.lineTable(0, lineUnit{compDir: "/b"})
	if err != nil {
		t.Fatal(err)
	}
	u := &unit{table: ti}
	tests := []struct {
		addr uint64
		line int // 0: no row
	}{
		{addr: 0x1008, line: 1},
		{addr: 0x1010, line: 2},
		{addr: 0x101f, line: 2},
		{addr: 0x1020, line: 4},
		{addr: 0x102f, line: 4},
		{addr: 0x1030},
		{addr: far, line: 1},
		{addr: far + 4<<30, line: 1},
		{addr: far + 5<<30 - 1, line: 1},
		{addr: far + 5<<30, line: 2},
		{addr: far + 5<<30 + 15, line: 2},
		{addr: far + 5<<30 + 16},
	}
	for _, tt := range tests {
		f, ok := s.lineFrame(u, tt.addr)
		if ok != (tt.line > 0) || f.Line != tt.line {
			t.Errorf("lineFrame(%#x) = line %d, %v; want line %d", tt.addr, f.Line, ok, tt.line)
		}
	}
}

// TestLineTableDenseMemory: a dense line program (three bytes a row: a
// column and a special opcode) costs memory in proportion to its size:
// the rows of a sequence are encoded a part at a time, not buffered
// whole. One of one-byte rows, denser than any compiler's, is refused
// (see bytesPerRow).
func TestLineTableDenseMemory(t *testing.T) {
	const rows = 4 << 20
	program := func(row []byte) []byte {
		prog := setAddress(0x100000)
		for range rows {
			prog = append(prog, row...)
		}
		prog = append(prog, endSequence()...)
		var lineStr []byte
		return lineProgram(4, nil, [][2]any{{"dense.c", 0}}, prog, &lineStr)
	}
	newBuilder := func(data []byte) *builder {
		return &builder{s: &Symbolizer{}, bo: binary.LittleEndian, tableAt: map[uint64]int32{}, fileIDs: map[string]int32{},
			lineBudget: 2 * int64(len(data)), rowBudget: int64(len(data))/bytesPerRow + 4096, pathBudget: 1 << 20, debugLine: data}
	}
	if _, err := newBuilder(program([]byte{special(1, 1)})).lineTable(0, lineUnit{compDir: "/src"}); err == nil ||
		!strings.Contains(err.Error(), "more than one line table row per 2 bytes of .debug_line") {
		t.Errorf("one-byte rows: got %v, want the row limit", err)
	}
	data := program([]byte{lnsSetColumn, 0, special(1, 1)})
	b := newBuilder(data)
	s := b.s
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ti, err := b.lineTable(0, lineUnit{compDir: "/src"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d rows in %d bytes: %d bytes allocated (%.1fx), %d kept", rows, len(data), alloc, float64(alloc)/float64(len(data)), len(s.lines))
	if alloc > 16*uint64(len(data)) {
		t.Errorf("a %d-byte line table of one-byte rows allocated %d bytes (%.1fx)", len(data), alloc, float64(alloc)/float64(len(data)))
	}
	u := &unit{table: ti}
	if f, ok := s.lineFrame(u, 0x100000+rows-1); !ok || f.Line != rows {
		t.Errorf("last row: %+v %v, want line %d", f, ok, rows)
	}
	if f, ok := s.lineFrame(u, 0x100000+rows/2); !ok || f.Line != rows/2+1 {
		t.Errorf("middle row: %+v %v, want line %d", f, ok, rows/2+1)
	}
}
