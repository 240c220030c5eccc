package gopclntab

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
)

// A small table written as the Go 1.20+ linker writes one, for exact
// answers independent of any toolchain (gotable_test.go in package
// objtool compares real binaries with their DWARF). Code at textAddr:
//
//	[0x00, 0x40) main.outer, main.go, from line 10
//	  [0x00, 0x10) line 11
//	  [0x10, 0x20) main.mid inlined at line 11 (pc 0x08): inl.go:5
//	  [0x20, 0x30) main.leaf inlined in main.mid at inl.go:5 (pc 0x18): inl.go:3
//	  [0x30, 0x40) line 12
//	[0x40, 0x60) main.other, main.go, from line 20; its lines end at
//	  0x58: the rest is padding.
//	[0x60, 0x70) _cgo_f, C code cgo linked in: a name without lines.
//
// The table is written in the format of Go 1.20 and later, or of Go 1.18
// and 1.19 (no start lines, another inlinedCall).
const textAddr = 0x401000

type rng struct {
	val int32
	end uint32 // offset from text, exclusive
}

// pcvalue encodes a pc-value table from entry, as the linker does
// (cmd/internal/obj/pcln.go): value deltas zig-zag encoded, each with
// the pc delta it lasts, and a 0 at the end.
func pcvalue(entry uint32, rs []rng) []byte {
	var out []byte
	val, pc := int32(-1), entry
	for _, r := range rs {
		d := r.val - val
		out = binary.AppendUvarint(out, uint64(uint32(d<<1)^uint32(d>>31)))
		out = binary.AppendUvarint(out, uint64(r.end-pc))
		val, pc = r.val, r.end
	}
	return append(out, 0)
}

type testFunc struct {
	name         string
	entry, end   uint32
	startLine    int32
	pcfile, pcln []rng
	inl          []rng // nil: no inlining
	tree         []inlCall
}

type inlCall struct {
	name      string
	parentPc  int32
	startLine int32
}

var testFuncs = []testFunc{
	{
		name: "main.outer", entry: 0, end: 0x40, startLine: 10,
		pcfile: []rng{{0, 0x10}, {1, 0x30}, {0, 0x40}},
		pcln:   []rng{{11, 0x10}, {5, 0x20}, {3, 0x30}, {12, 0x40}},
		inl:    []rng{{-1, 0x10}, {0, 0x20}, {1, 0x30}, {-1, 0x40}},
		tree:   []inlCall{{"main.mid", 0x08, 4}, {"main.leaf", 0x18, 2}},
	},
	{
		name: "main.other", entry: 0x40, end: 0x60, startLine: 20,
		pcfile: []rng{{0, 0x58}},
		pcln:   []rng{{21, 0x50}, {22, 0x58}},
	},
	{name: "_cgo_f", entry: 0x60, end: 0x70},
}

var testFiles = []string{"main.go", "inl.go"}

// buildTable returns a table of funcs in the format of Go release
// version (118 or 120) for a 64-bit little-endian binary, its header's
// text start zero (as from Go 1.26), and the go:func.* data holding the
// inlining trees.
func buildTable(funcs []testFunc, version int) (table, gofunc []byte) {
	bo := binary.LittleEndian
	const ptrSize = 8
	var names, cutab, filetab, pctab []byte
	pctab = append(pctab, 0) // offset 0 means no table
	nameOff := func(s string) uint32 {
		off := uint32(len(names))
		names = append(append(names, s...), 0)
		return off
	}
	for _, f := range testFiles {
		cutab = bo.AppendUint32(cutab, uint32(len(filetab)))
		filetab = append(append(filetab, f...), 0)
	}
	pcOff := func(entry uint32, rs []rng) uint32 {
		if rs == nil {
			return 0
		}
		off := uint32(len(pctab))
		pctab = append(pctab, pcvalue(entry, rs)...)
		return off
	}
	gofunc = make([]byte, 8) // the trees start past offset 0
	var recs [][]byte
	for _, f := range funcs {
		var rec []byte
		fields := []uint32{f.entry, nameOff(f.name), 0, 0, 0, pcOff(f.entry, f.pcfile), pcOff(f.entry, f.pcln), 3, 0, uint32(f.startLine)}
		if version == 118 {
			fields = fields[:9]
		}
		for _, v := range fields {
			rec = bo.AppendUint32(rec, v)
		}
		rec = append(rec, 0, 0, 0, 4) // funcID, flag, pad, nfuncdata
		rec = bo.AppendUint32(rec, 0)
		rec = bo.AppendUint32(rec, 0)
		rec = bo.AppendUint32(rec, pcOff(f.entry, f.inl))
		for range 3 {
			rec = bo.AppendUint32(rec, ^uint32(0))
		}
		if f.tree == nil {
			rec = bo.AppendUint32(rec, ^uint32(0))
		} else {
			rec = bo.AppendUint32(rec, uint32(len(gofunc)))
			for _, c := range f.tree {
				if version == 118 {
					// parent, funcID, pad, file, line: not read
					gofunc = append(gofunc, make([]byte, 12)...)
					gofunc = bo.AppendUint32(gofunc, nameOff(c.name))
					gofunc = bo.AppendUint32(gofunc, uint32(c.parentPc))
					continue
				}
				gofunc = append(gofunc, 0, 0, 0, 0)
				gofunc = bo.AppendUint32(gofunc, nameOff(c.name))
				gofunc = bo.AppendUint32(gofunc, uint32(c.parentPc))
				gofunc = bo.AppendUint32(gofunc, uint32(c.startLine))
			}
		}
		recs = append(recs, rec)
	}
	var functab []byte
	recOff := uint32(8 * (len(funcs) + 1))
	for i, f := range funcs {
		functab = bo.AppendUint32(functab, f.entry)
		functab = bo.AppendUint32(functab, recOff)
		recOff += uint32(len(recs[i]))
	}
	functab = bo.AppendUint32(functab, funcs[len(funcs)-1].end)
	functab = bo.AppendUint32(functab, 0)
	for _, r := range recs {
		functab = append(functab, r...)
	}
	magic := uint32(magic120)
	if version == 118 {
		magic = magic118
	}
	header := bo.AppendUint32(nil, magic)
	header = append(header, 0, 0, 1, ptrSize)
	off := uint64(8 + 8*ptrSize)
	words := []uint64{uint64(len(funcs)), uint64(len(testFiles)), 0}
	for _, part := range [][]byte{names, cutab, filetab, pctab, functab} {
		words = append(words, off)
		off += uint64(len(part))
	}
	for _, w := range words {
		header = bo.AppendUint64(header, w)
	}
	table = bytes.Join([][]byte{header, names, cutab, filetab, pctab, functab}, nil)
	return table, gofunc
}

var (
	outerOnly = []Frame{{"main.outer", "main.go", 11, 10}}
	midFrames = []Frame{{"main.mid", "inl.go", 5, 4}, {"main.outer", "main.go", 11, 10}}
	leafFrame = []Frame{{"main.leaf", "inl.go", 3, 2}, {"main.mid", "inl.go", 5, 4}, {"main.outer", "main.go", 11, 10}}
)

// frameTests are the frames of addresses of the table of testFuncs.
var frameTests = []struct {
	pc   uint64
	want []Frame
}{
	{textAddr - 1, nil},
	{textAddr, outerOnly},
	{textAddr + 0x0f, outerOnly},
	{textAddr + 0x10, midFrames},
	{textAddr + 0x1f, midFrames},
	{textAddr + 0x20, leafFrame},
	{textAddr + 0x2f, leafFrame},
	{textAddr + 0x30, []Frame{{"main.outer", "main.go", 12, 10}}},
	{textAddr + 0x40, []Frame{{"main.other", "main.go", 21, 20}}},
	{textAddr + 0x57, []Frame{{"main.other", "main.go", 22, 20}}},
	{textAddr + 0x58, nil}, // padding
	{textAddr + 0x60, []Frame{{Func: "_cgo_f"}}},
	{textAddr + 0x70, nil},
}

// withoutStartLines returns frames as a Go 1.18 table gives them.
func withoutStartLines(frames []Frame) []Frame {
	var out []Frame
	for _, f := range frames {
		f.StartLine = 0
		out = append(out, f)
	}
	return out
}

func TestFrames(t *testing.T) {
	for _, version := range []int{120, 118} {
		table, gofunc := buildTable(testFuncs, version)
		tab, err := New(table, textAddr, gofunc)
		if err != nil {
			t.Fatal(err)
		}
		if !tab.Inlining() {
			t.Error("Inlining() = false with go:func.* given")
		}
		for _, tt := range frameTests {
			want := tt.want
			if version == 118 {
				want = withoutStartLines(want)
			}
			if got := tab.Frames(tt.pc); !reflect.DeepEqual(got, want) {
				t.Errorf("Go %d format: Frames(%#x) = %+v, want %+v", version, tt.pc, got, want)
			}
		}
		want := []Func{{"main.outer", textAddr, textAddr + 0x40}, {"main.other", textAddr + 0x40, textAddr + 0x60}, {"_cgo_f", textAddr + 0x60, textAddr + 0x70}}
		if got := tab.Funcs(); !reflect.DeepEqual(got, want) {
			t.Errorf("Go %d format: Funcs() = %+v, want %+v", version, got, want)
		}
	}
}

// Without go:func.*, inlined code gets the function it is in, without a
// line (its line is the callee's).
func TestFramesWithoutTrees(t *testing.T) {
	table, _ := buildTable(testFuncs, 120)
	tab, err := New(table, textAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Inlining() {
		t.Error("Inlining() = true without go:func.*")
	}
	for pc, want := range map[uint64][]Frame{
		textAddr:        outerOnly,
		textAddr + 0x20: {{Func: "main.outer", StartLine: 10}},
		textAddr + 0x40: {{"main.other", "main.go", 21, 20}},
	} {
		if got := tab.Frames(pc); !reflect.DeepEqual(got, want) {
			t.Errorf("Frames(%#x) = %+v, want %+v", pc, got, want)
		}
	}
}

func TestParseHeaderErrors(t *testing.T) {
	table, _ := buildTable(testFuncs, 120)
	old := append([]byte{0xfa, 0xff, 0xff, 0xff}, table[4:]...) // Go 1.16
	if _, err := New(old, textAddr, nil); !errors.Is(err, ErrVersion) {
		t.Errorf("Go 1.16 table: %v, want ErrVersion", err)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "gopclntab: 0 bytes, too short for a header"},
		{"magic", []byte("\x7fELF\x02\x01\x01\x00"), `gopclntab: unknown magic 0x7f454c46`},
		{"quantum", append(append([]byte{}, table[:6]...), 3, 8), "gopclntab: instruction size quantum 3"},
		{"truncated header", table[:40], "gopclntab: 40 bytes, too short for a header"},
		{"function count", func() []byte {
			d := append([]byte{}, table...)
			binary.LittleEndian.PutUint64(d[8:], 1<<40)
			return d
		}(), "gopclntab: 1099511627776 functions, more than the function table's"},
		{"offset", func() []byte {
			d := append([]byte{}, table...)
			binary.LittleEndian.PutUint64(d[8+5*8:], 1<<40)
			return d
		}(), "gopclntab: file table at offset 0x10000000000, past the table's"},
	} {
		_, err := New(tt.data, textAddr, nil)
		if err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(tt.want)) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// Every prefix and every single-byte change of a table gives an error or
// answers, never a panic or a loop.
func TestDamagedTables(t *testing.T) {
	table, gofunc := buildTable(testFuncs, 120)
	query := func(data, gofunc []byte) {
		tab, err := New(data, textAddr, gofunc)
		if err != nil {
			return
		}
		for pc := uint64(textAddr - 1); pc <= textAddr+0x60; pc++ {
			tab.Frames(pc)
		}
		tab.Funcs()
	}
	for n := range len(table) {
		query(table[:n], gofunc)
	}
	for n := range len(gofunc) {
		query(table, gofunc[:n])
	}
	for i := range table {
		for _, b := range []byte{0, 0x7f, 0xff} {
			d := append([]byte{}, table...)
			d[i] = b
			query(d, gofunc)
		}
	}
}

// An inlining tree whose call points back at itself ends at the bound,
// giving the function alone.
func TestInliningCycle(t *testing.T) {
	funcs := append([]testFunc{}, testFuncs...)
	funcs[0].tree = []inlCall{{"main.mid", 0x18, 4}, {"main.leaf", 0x28, 2}}
	table, gofunc := buildTable(funcs, 120)
	tab, err := New(table, textAddr, gofunc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Frame{{"main.outer", "", 0, 10}}
	if got := tab.Frames(textAddr + 0x10); !reflect.DeepEqual(got, want) {
		t.Errorf("Frames = %+v, want %+v", got, want)
	}
}

// A pc-value step that does not move the pc on, which the linker never
// writes, is taken for a damaged table: a lookup's work stays bounded by
// the function's size.
func TestPCValueStepWithoutPC(t *testing.T) {
	funcs := append([]testFunc{}, testFuncs...)
	funcs[1].pcln = []rng{{21, 0x40}, {22, 0x50}, {23, 0x58}} // a step of 0 at the entry, then on
	table, gofunc := buildTable(funcs, 120)
	tab, err := New(table, textAddr, gofunc)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Frames(textAddr + 0x44); got != nil {
		t.Errorf("Frames = %+v, want none", got)
	}
	if got, want := tab.Frames(textAddr+0x10), midFrames; !reflect.DeepEqual(got, want) {
		t.Errorf("another function: Frames = %+v, want %+v", got, want)
	}
}

// goBinary describes a Go-like executable for goELF.
type goBinary struct {
	goVersion string // in .go.buildinfo, if not ""
	pie       bool   // module data pointers in relocations only
	module    string // the section holding the module data
}

// goELF lays out a Go-like executable holding the table of testFuncs,
// in the format of Go 1.20 and later, or, if b.goVersion is before
// go1.20, of Go 1.18; go:func.* after the table in .gopclntab (as Go 1.26
// puts it) and the runtime's module data in b.module, its pointers in
// the file or in R_X86_64_RELATIVE relocations.
func goELF(t testing.TB, b goBinary) *elfrel.File {
	t.Helper()
	data := goELFBytes(b)
	f, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "go-test")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// goELFBytes lays out the file goELF opens.
func goELFBytes(b goBinary) []byte {
	version, layout := 120, module120
	if b.goVersion == "go1.18.10" || b.goVersion == "go1.19.8" {
		version, layout = 118, module119
	}
	table, gofunc := buildTable(testFuncs, version)
	const pcln, noptr, mod = 0x402000, 0x404000, 0x405000
	bo := binary.LittleEndian
	md := make([]uint64, layout.words)
	md[0] = pcln
	md[mdFuncnametab] = pcln + bo.Uint64(table[8+3*8:])
	md[mdText] = textAddr
	md[mdNoptrdata] = noptr
	md[layout.types], md[layout.etypes] = 0x403000, 0x403100
	md[layout.gofunc] = pcln + uint64(len(table))
	data := make([]byte, 8*len(md))
	var relocs []elftest.Rela
	for i, w := range md {
		if b.pie && w > 0x1000 {
			relocs = append(relocs, elftest.Rela{Off: mod + uint64(8*i), Type: uint32(elf.R_X86_64_RELATIVE), Addend: int64(w)})
			continue
		}
		bo.PutUint64(data[8*i:], w)
	}
	secs := []elftest.Section{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: make([]byte, 0x70)},
		{Name: ".gopclntab", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addr: pcln, Data: append(table, gofunc...)},
		{Name: ".noptrdata", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: noptr, Data: make([]byte, 64)},
		{Name: b.module, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: mod, Data: data},
	}
	if b.goVersion != "" {
		// debug/buildinfo's layout: magic, pointer size, flags (2: the
		// strings inline), then at 32 the version, length first.
		info := append([]byte(buildInfoMagic), 8, 2)
		info = append(info, make([]byte, 32-len(info))...)
		info = binary.AppendUvarint(info, uint64(len(b.goVersion)))
		info = append(info, b.goVersion...)
		secs = append(secs, elftest.Section{Name: ".go.buildinfo", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: 0x407000, Data: append(info, 0)})
	}
	typ := elf.ET_EXEC
	if b.pie {
		typ = elf.ET_DYN
		secs = append(secs, elftest.Section{Name: ".rela", Type: elf.SHT_RELA, Flags: elf.SHF_ALLOC, Addr: 0x406000, Data: elftest.RelaData(bo, relocs)})
	}
	return elftest.File{Type: typ, Sections: secs}.Bytes()
}

func TestOpenELF(t *testing.T) {
	for _, tt := range []struct {
		name     string
		b        goBinary
		inlining bool
	}{
		{"Go 1.26 .go.module", goBinary{"go1.26.8", false, ".go.module"}, true},
		{"PIE, pointers in relocations", goBinary{"", true, ".go.module"}, true},
		{"module data in .data", goBinary{"", false, ".data"}, true},
		{"Go 1.19 .noptrdata", goBinary{"go1.19.8", false, ".noptrdata"}, true},
		{"Go 1.19 PIE", goBinary{"go1.19.8", true, ".noptrdata"}, true},
		// Go 1.18's function data are pointers: no inlining trees.
		{"Go 1.18", goBinary{"go1.18.10", false, ".noptrdata"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := OpenELF(goELF(t, tt.b))
			if err != nil {
				t.Fatal(err)
			}
			if tab.Inlining() != tt.inlining {
				t.Fatalf("Inlining() = %v, want %v", tab.Inlining(), tt.inlining)
			}
			for _, ft := range frameTests {
				want := ft.want
				if strings.HasPrefix(tt.b.goVersion, "go1.1") {
					want = withoutStartLines(want)
				}
				if !tt.inlining && len(want) > 1 {
					want = []Frame{{Func: want[len(want)-1].Func}}
				}
				if got := tab.Frames(ft.pc); !reflect.DeepEqual(got, want) {
					t.Errorf("Frames(%#x) = %+v, want %+v", ft.pc, got, want)
				}
			}
		})
	}
	b := elftest.File{Type: elf.ET_EXEC, Sections: []elftest.Section{{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: make([]byte, 16)}}}.Bytes()
	f, err := elfrel.NewFile(bytes.NewReader(b), int64(len(b)), "c-binary")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenELF(f); !errors.Is(err, ErrNoTable) {
		t.Errorf("binary without .gopclntab: %v, want ErrNoTable", err)
	}
}

// FuzzTable reads arbitrary tables and asks for the frames of addresses
// and the functions: no input may panic or hang.
func FuzzTable(f *testing.F) {
	table, gofunc := buildTable(testFuncs, 120)
	f.Add(table, gofunc, uint64(0x20))
	f.Add(table[:100], gofunc, uint64(0x10))
	f.Fuzz(func(t *testing.T, data, gofunc []byte, pc uint64) {
		tab, err := New(data, textAddr, gofunc)
		if err != nil {
			return
		}
		tab.Frames(textAddr + pc)
		tab.Frames(textAddr + pc%0x100)
		if fs := tab.Funcs(); len(fs) > len(data)/8 {
			t.Fatalf("%d functions from %d bytes", len(fs), len(data))
		}
	})
}

// FuzzOpenELF reads arbitrary ELF files as Go binaries and asks for the
// frames of addresses: no input may panic or hang.
func FuzzOpenELF(f *testing.F) {
	for _, pie := range []bool{false, true} {
		f.Add(goELFBytes(goBinary{"go1.26.8", pie, ".go.module"}), uint64(0x20))
		f.Add(goELFBytes(goBinary{"go1.19.8", pie, ".noptrdata"}), uint64(0x20))
	}
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		ef, err := elfrel.NewFile(bytes.NewReader(data), int64(len(data)), "fuzz")
		if err != nil {
			return
		}
		tab, err := OpenELF(ef)
		if err != nil {
			return
		}
		tab.Frames(textAddr + pc%0x100)
		tab.Frames(pc)
		tab.Funcs()
	})
}
