package elfrel

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// compressedSection returns data as the contents of an SHF_COMPRESSED
// ELF64 section: the compression header, then the zlib stream.
func compressedSection(t *testing.T, data []byte) []byte {
	t.Helper()
	le := binary.LittleEndian
	out := le.AppendUint32(nil, uint32(elf.COMPRESS_ZLIB))
	out = le.AppendUint32(out, 0)
	out = le.AppendUint64(out, uint64(len(data)))
	out = le.AppendUint64(out, 1)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return append(out, z.Bytes()...)
}

// TestDWOLoader: a split DWARF file's sections load under the names
// without ".dwo", the others not at all; SectionRange gives the bytes
// Section gives, compressed or not, and refuses a range past the end.
func TestDWOLoader(t *testing.T) {
	info := make([]byte, 300)
	for i := range info {
		info[i] = byte(i * 7)
	}
	str := []byte(strings.Repeat("name\x00", 40))
	data := elftest.File{Sections: []elftest.Section{
		{Name: ".debug_info.dwo", Type: elf.SHT_PROGBITS, Data: info},
		{Name: ".debug_str.dwo", Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Data: compressedSection(t, str)},
		{Name: ".debug_line.dwo", Type: elf.SHT_PROGBITS, Data: []byte{1, 2, 3}},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: []byte{4, 5, 6}},
		{Name: ".debug_cu_index", Type: elf.SHT_PROGBITS, Data: []byte{5, 0, 0, 0}},
	}}.Bytes()
	f, err := NewFile(bytes.NewReader(data), int64(len(data)), "x.dwo")
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.DWOLoader()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{".debug_info": info, ".debug_str": str, ".debug_cu_index": {5, 0, 0, 0}, ".debug_line": nil} {
		if got, err := l.Section(name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Section(%q) = %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	if l.Compressed(".debug_info") || !l.Compressed(".debug_str") {
		t.Errorf("Compressed: .debug_info %v, .debug_str %v; want false, true", l.Compressed(".debug_info"), l.Compressed(".debug_str"))
	}
	for _, r := range [][2]uint64{{0, 0}, {0, 300}, {17, 100}, {299, 1}} {
		if got, err := l.SectionRange(".debug_info", r[0], r[1]); err != nil || !bytes.Equal(got, info[r[0]:r[0]+r[1]]) {
			t.Errorf("SectionRange(.debug_info, %d, %d): %v", r[0], r[1], err)
		}
		if r[0]+r[1] <= uint64(len(str)) {
			if got, err := l.SectionRange(".debug_str", r[0], r[1]); err != nil || !bytes.Equal(got, str[r[0]:r[0]+r[1]]) {
				t.Errorf("SectionRange(.debug_str, %d, %d): %v", r[0], r[1], err)
			}
		}
	}
	for _, r := range [][2]uint64{{0, 301}, {300, 1}, {1 << 63, 1 << 63}, {1, ^uint64(0)}} {
		_, err := l.SectionRange(".debug_info", r[0], r[1])
		var fe *FormatError
		if !errors.As(err, &fe) || fe.File != "x.dwo" {
			t.Errorf("SectionRange(.debug_info, %#x, %#x): %v; want a format error naming x.dwo", r[0], r[1], err)
		}
	}
	if _, err := l.SectionRange(".debug_line", 0, 1); err == nil {
		t.Error("SectionRange of a section not loaded: no error")
	}

	// Without .debug_info.dwo, it is not split DWARF.
	plain := elftest.File{Sections: []elftest.Section{{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: []byte{1}}}}.Bytes()
	f, err = NewFile(bytes.NewReader(plain), int64(len(plain)), "y.o")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DWOLoader(); !errors.Is(err, ErrNoDWARF) {
		t.Errorf("DWOLoader of an object without .debug_info.dwo: %v; want ErrNoDWARF", err)
	}
}
