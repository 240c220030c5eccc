package jitsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
)

// indexUnit is one row of a .debug_cu_index that cuIndex writes.
type indexUnit struct {
	id          uint64
	offs, sizes []uint32 // one per column
	slot        int      // where its signature goes
	rowOverride uint32   // if not 0, the row the slot names
}

// byteOrder is what cuIndex writes with.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// cuIndex writes a .debug_cu_index of the given version (2 or 5) with
// columns cols, nslots slots and units.
func cuIndex(bo byteOrder, version int, cols []uint32, nslots int, units []indexUnit) []byte {
	var b []byte
	if version == 5 {
		b = bo.AppendUint16(b, 5)
		b = bo.AppendUint16(b, 0)
	} else {
		b = bo.AppendUint32(b, uint32(version))
	}
	b = bo.AppendUint32(b, uint32(len(cols)))
	b = bo.AppendUint32(b, uint32(len(units)))
	b = bo.AppendUint32(b, uint32(nslots))
	sigs, rows := make([]uint64, nslots), make([]uint32, nslots)
	for i, u := range units {
		sigs[u.slot], rows[u.slot] = u.id, uint32(i+1)
		if u.rowOverride != 0 {
			rows[u.slot] = u.rowOverride
		}
	}
	for _, s := range sigs {
		b = bo.AppendUint64(b, s)
	}
	for _, r := range rows {
		b = bo.AppendUint32(b, r)
	}
	for _, c := range cols {
		b = bo.AppendUint32(b, c)
	}
	for _, u := range units {
		for _, o := range u.offs {
			b = bo.AppendUint32(b, o)
		}
	}
	for _, u := range units {
		for _, s := range u.sizes {
			b = bo.AppendUint32(b, s)
		}
	}
	return b
}

// testPackage opens a DWARF package, prog.dwp, of the given sections
// (in the order of their names).
func testPackage(t *testing.T, sections map[string][]byte) *dwpPackage {
	t.Helper()
	return testPackageCounted(t, sections, new(int64))
}

// testPackageCounted is testPackage, adding to *read the bytes read from
// the file.
func testPackageCounted(t *testing.T, sections map[string][]byte, read *int64) *dwpPackage {
	t.Helper()
	var f elftest.File
	for _, name := range slices.Sorted(maps.Keys(sections)) {
		f.Sections = append(f.Sections, elftest.Section{Name: name, Type: elf.SHT_PROGBITS, Data: sections[name]})
	}
	data := f.Bytes()
	ef, err := elfrel.NewFile(countingReader{bytes.NewReader(data), read}, int64(len(data)), "prog.dwp")
	if err != nil {
		t.Fatal(err)
	}
	p, err := openPackage(ef)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseCUIndex reads the index of both versions in both byte orders,
// and refuses indexes whose counts or rows do not fit.
func TestParseCUIndex(t *testing.T) {
	cols := []uint32{sectInfo, sectAbbrev, sectStrOffsets, sectRnglists}
	units := []indexUnit{
		{id: 0x1111, offs: []uint32{0, 0, 0, 0}, sizes: []uint32{100, 20, 30, 40}, slot: 3},
		{id: 0x2222, offs: []uint32{100, 20, 30, 40}, sizes: []uint32{50, 10, 8, 12}, slot: 6},
	}
	for _, bo := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, version := range []int{2, 5} {
			x, err := parseCUIndex(cuIndex(bo, version, cols, 8, units), bo)
			if err != nil {
				t.Fatalf("%v version %d: %v", bo, version, err)
			}
			if x.version != version || !reflect.DeepEqual(x.rows, map[uint64]uint32{0x1111: 0, 0x2222: 1}) {
				t.Errorf("%v version %d: version %d, rows %v", bo, version, x.version, x.rows)
			}
			if off, size, ok := x.contribution(1, sectStrOffsets); off != 30 || size != 8 || !ok {
				t.Errorf("%v version %d: unit 2's string offsets at %d, %d bytes, %v; want 30, 8", bo, version, off, size, ok)
			}
			if _, _, ok := x.contribution(0, 7); ok {
				t.Errorf("%v version %d: a contribution to a section that has no column", bo, version)
			}
		}
	}

	le := binary.LittleEndian
	good := cuIndex(le, 5, cols, 8, units)
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "unexpected end"},
		{"cut in the header", good[:10], "unexpected end"},
		{"version 3", cuIndex(le, 3, cols, 8, units), "unsupported index version"},
		{"more slots than bytes", func() []byte {
			b := bytes.Clone(good)
			le.PutUint32(b[12:], 1<<30)
			return b
		}(), "do not fit"},
		{"more units than bytes", func() []byte {
			b := bytes.Clone(good)
			le.PutUint32(b[8:], 1<<31)
			return b
		}(), "do not fit"},
		{"more units than slots", func() []byte {
			b := bytes.Clone(good)
			le.PutUint32(b[8:], 9)
			return b
		}(), "do not fit"},
		{"a slot names a row past the units", cuIndex(le, 5, cols, 8, []indexUnit{
			{id: 1, offs: []uint32{0, 0, 0, 0}, sizes: []uint32{1, 1, 1, 1}, slot: 0, rowOverride: 9},
		}), "names row 9 of 1"},
		{"cut in the tables", good[:len(good)-1], "do not fit"},
	} {
		_, err := parseCUIndex(tt.data, le)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// TestPackageUnitOutOfRange: a unit whose part of .debug_info.dwo the
// index puts past the section's end is an error naming the package, not
// a panic or a read of other bytes.
func TestPackageUnitOutOfRange(t *testing.T) {
	le := binary.LittleEndian
	index := cuIndex(le, 5, []uint32{sectInfo, sectAbbrev}, 4, []indexUnit{
		{id: 7, offs: []uint32{16, 0}, sizes: []uint32{64, 4}, slot: 1},
	})
	p := testPackage(t, map[string][]byte{
		".debug_info.dwo":   make([]byte, 32),
		".debug_abbrev.dwo": make([]byte, 4),
		".debug_cu_index":   index,
	})
	if p.unit(8) != nil {
		t.Error("a unit the index does not have")
	}
	u := p.unit(7)
	if got := u.Size(".debug_info"); got != 64 {
		t.Errorf("size of the unit's .debug_info: %d, want 64", got)
	}
	if b, err := u.Section(".debug_abbrev"); err != nil || len(b) != 4 {
		t.Errorf("the unit's .debug_abbrev: %d bytes, %v; want 4", len(b), err)
	}
	_, err := u.Section(".debug_info")
	var fe *elfrel.FormatError
	if !errors.As(err, &fe) || fe.File != "prog.dwp" || !strings.Contains(err.Error(), "not within the section") {
		t.Errorf("the unit's .debug_info: %v; want a format error naming prog.dwp", err)
	}
}

// FuzzCUIndex: any bytes parse or fail, without a panic, and what parses
// is consistent: every row a slot names is a unit's, with a cell for
// each column.
func FuzzCUIndex(f *testing.F) {
	cols := []uint32{sectInfo, sectAbbrev, sectStrOffsets, sectRnglists}
	units := []indexUnit{
		{id: 0x1111, offs: []uint32{0, 0, 0, 0}, sizes: []uint32{100, 20, 30, 40}, slot: 3},
		{id: 0x2222, offs: []uint32{100, 20, 30, 40}, sizes: []uint32{50, 10, 8, 12}, slot: 6},
	}
	f.Add(cuIndex(binary.LittleEndian, 5, cols, 8, units))
	f.Add(cuIndex(binary.LittleEndian, 2, cols[:3], 4, units[:1]))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := parseCUIndex(data, binary.LittleEndian)
		if err != nil {
			return
		}
		if len(x.offs) != len(x.sizes) || len(x.cols) > 0 && len(x.offs)%len(x.cols) != 0 {
			t.Fatalf("%d offsets, %d sizes, %d columns", len(x.offs), len(x.sizes), len(x.cols))
		}
		for _, row := range x.rows {
			if len(x.cols) > 0 && int(row) >= len(x.offs)/len(x.cols) {
				t.Fatalf("row %d of %d", row, len(x.offs)/len(x.cols))
			}
			for _, c := range x.cols {
				x.contribution(row, c)
			}
		}
	})
}

// TestPackageUnitStrings: a unit of a package reads only the strings its
// offsets name, into a table of its own, with the offsets rewritten to
// match; an offset past the section reads as "".
func TestPackageUnitStrings(t *testing.T) {
	le := binary.LittleEndian
	index := cuIndex(le, 5, []uint32{sectInfo, sectStrOffsets}, 4, []indexUnit{
		{id: 7, offs: []uint32{0, 8}, sizes: []uint32{4, 24}, slot: 2},
	})
	offs := le.AppendUint32(nil, 20) // unit_length: version, padding, 4 entries
	offs = le.AppendUint16(offs, 5)
	offs = le.AppendUint16(offs, 0)
	for _, o := range []uint32{4, 0, 4, 99} {
		offs = le.AppendUint32(offs, o)
	}
	other := make([]byte, 8) // the contribution of another unit, before this one's
	p := testPackage(t, map[string][]byte{
		".debug_info.dwo":        make([]byte, 4),
		".debug_str_offsets.dwo": append(other, offs...),
		".debug_str.dwo":         []byte("aaa\x00bbb\x00ccc\x00"),
		".debug_cu_index":        index,
	})
	u := p.unit(7)
	str, err := u.Section(".debug_str")
	if err != nil || string(str) != "\x00aaa\x00bbb\x00" {
		t.Errorf("the unit's strings: %q, %v; want only bbb and aaa, after an empty one", str, err)
	}
	got, err := u.Section(".debug_str_offsets")
	if err != nil || len(got) != len(offs) || !bytes.Equal(got[:8], offs[:8]) {
		t.Fatalf("the unit's string offsets: %v, %v; want its part with the header as it was", got, err)
	}
	for i, want := range []uint32{5, 1, 5, 0} {
		if o := le.Uint32(got[8+4*i:]); o != want {
			t.Errorf("offset %d: %d, want %d", i, o, want)
		}
	}
}

// countingReader adds to *n the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n *int64
}

func (c countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	*c.n += int64(n)
	return n, err
}

// TestPackageUnitStringsBounded: a unit whose string offsets name every
// byte of a long string, and strings longer than maxDWPString, costs
// about the section's size to read, and as much in memory, not the sum
// of the strings' lengths; each offset still reads the string at it,
// "" where it is too long or has no NUL before the end.
func TestPackageUnitStringsBounded(t *testing.T) {
	le := binary.LittleEndian
	long := strings.Repeat("a", maxDWPString+10) // its first 10 offsets are too long
	many := strings.Repeat("d", 60000)
	strSec := long + "\x00bb\x00" + many + "\x00" + strings.Repeat("c", 100)
	manyAt := uint64(len(long) + 4)
	want := map[uint64]string{
		0: "", 9: "", 10: long[10:], 11: long[11:], 1000: long[1000:],
		uint64(len(long)): "", uint64(len(long)) + 1: "bb", uint64(len(long)) + 2: "b",
		manyAt + 60000: "", manyAt + 60001: "", manyAt + 60050: "", // no NUL after
		uint64(len(strSec)) + 5: "", // past the end
	}
	for o := manyAt; o < manyAt+4096; o++ {
		want[o] = many[o-manyAt:]
	}
	olds := slices.Sorted(maps.Keys(want))
	slices.Reverse(olds) // the order of the offsets does not matter
	offs := le.AppendUint32(nil, uint32(4+4*len(olds)))
	offs = le.AppendUint16(offs, 5)
	offs = le.AppendUint16(offs, 0)
	for _, o := range olds {
		offs = le.AppendUint32(offs, uint32(o))
	}
	index := cuIndex(le, 5, []uint32{sectInfo, sectStrOffsets}, 4, []indexUnit{
		{id: 7, offs: []uint32{0, 0}, sizes: []uint32{4, uint32(len(offs))}, slot: 2},
	})
	var read int64
	p := testPackageCounted(t, map[string][]byte{
		".debug_info.dwo":        make([]byte, 4),
		".debug_str_offsets.dwo": offs,
		".debug_str.dwo":         []byte(strSec),
		".debug_cu_index":        index,
	}, &read)
	before := read
	u := p.unit(7)
	str, err := u.Section(".debug_str")
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.Section(".debug_str_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if n, max := read-before, int64(len(strSec)+len(offs)); n > max {
		t.Errorf("read %d bytes for the unit's strings, want at most %d, the size of its parts and .debug_str.dwo", n, max)
	}
	if len(str) > len(strSec) {
		t.Errorf("the unit's strings take %d bytes, more than the %d of .debug_str.dwo", len(str), len(strSec))
	}
	for i, o := range olds {
		off := le.Uint32(got[8+4*i:])
		s := str[off:]
		if k := bytes.IndexByte(s, 0); k >= 0 {
			s = s[:k]
		}
		if string(s) != want[o] {
			t.Errorf("string at %d: %d bytes %.10q, want %d bytes %.10q", o, len(s), s, len(want[o]), want[o])
		}
	}
}

// TestPackageReadBudget: the units of a package read in all at most
// dwpReadFactor times its DWARF sections' size and dwpReadSlack, however
// many of them its index points at the same bytes; past that, a unit's
// sections are an error naming the package.
func TestPackageReadBudget(t *testing.T) {
	le := binary.LittleEndian
	const info = 1000
	var units []indexUnit
	for i := range 50 { // all at the same bytes
		units = append(units, indexUnit{id: uint64(100 + i), offs: []uint32{0}, sizes: []uint32{info}, slot: i})
	}
	p := testPackage(t, map[string][]byte{
		".debug_info.dwo": make([]byte, info),
		".debug_cu_index": cuIndex(le, 5, []uint32{sectInfo}, 64, units),
	})
	if want := int64(dwpReadFactor*info + dwpReadSlack); p.limit != want || p.budget.Load() != want {
		t.Errorf("budget %d of %d, want %d", p.budget.Load(), p.limit, want)
	}
	p.budget.Store(10 * info) // as if the rest had been read
	var ok int
	for _, x := range units {
		b, err := p.unit(x.id).Section(".debug_info")
		if err == nil && len(b) == info {
			ok++
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "prog.dwp: the units looked up so far read more than") {
			t.Fatalf("unit %#x: %d bytes, %v; want an error naming prog.dwp and the budget", x.id, len(b), err)
		}
	}
	if ok != 10 {
		t.Errorf("%d units read, want 10, the budget's", ok)
	}
}
