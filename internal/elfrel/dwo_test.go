package elfrel

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/testenv"
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

// TestZstandardSections: clang's -gz=zstd object loads the same DWARF
// as the same object uncompressed, relocations applied; a stream cut
// short is an error naming the file and the section.
func TestZstandardSections(t *testing.T) {
	clang := testenv.Tool(t, "clang-19", "clang-19")
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	// Enough functions that compressing each debug section pays (LLVM
	// leaves a section uncompressed otherwise).
	var code strings.Builder
	for i := range 200 {
		fmt.Fprintf(&code, "static int sq%d(int x) { return x * x + %d; }\nint f%d(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq%d(i); return s; }\n", i, i, i, i)
	}
	if err := os.WriteFile(src, []byte(code.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sections := func(obj string) map[string][]byte {
		t.Helper()
		l := openLoader(t, obj)
		out := map[string][]byte{}
		for _, name := range l.names {
			data, err := l.Section(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out[name] = data
		}
		return out
	}
	compile := func(name string, args ...string) string {
		obj := filepath.Join(dir, name)
		if b, err := exec.Command(clang, append([]string{"-O1", "-g", "-c", "-o", obj, src}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("clang: %v\n%s", err, b)
		}
		return obj
	}
	plain, zstd := compile("plain.o"), compile("zstd.o", "-gz=zstd")
	want, got := sections(plain), sections(zstd)
	if len(want) < 4 || !reflect.DeepEqual(got, want) {
		t.Errorf("the -gz=zstd object's %d DWARF sections differ from the plain one's %d", len(got), len(want))
	}

	// Cut the Zstandard stream of .debug_info short: every byte after
	// its header becomes 0.
	f, err := Open(zstd)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Sections[f.Section(".debug_info")]
	f.Close()
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		t.Fatalf(".debug_info of %s is not compressed", zstd)
	}
	data, err := os.ReadFile(zstd)
	if err != nil {
		t.Fatal(err)
	}
	clear(data[s.Offset+chdrSize+8 : s.Offset+s.Size])
	bad := filepath.Join(dir, "bad.o")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openLoader(t, bad).Section(".debug_info")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != bad || fe.Section != ".debug_info" || !strings.Contains(err.Error(), "cannot decompress") {
		t.Errorf("a broken Zstandard stream: %v; want a format error naming %s and .debug_info", err, bad)
	}
}

// openLoader opens the file at path, closed when the test ends, and
// returns its DebugLoader.
func openLoader(t *testing.T, path string) *DebugLoader {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	l, err := f.DebugLoader()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
