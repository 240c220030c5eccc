package mapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func writeFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestMap: the mapping holds the file's bytes, ReadAt reads them as
// os.File.ReadAt does, and they stay after Release.
func TestMap(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*os.Getpagesize()/16+5)
	f := writeFile(t, data)
	m, err := Map(f, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !bytes.Equal(m.Bytes(), data) || m.Len() != int64(len(data)) {
		t.Fatalf("Bytes: %d bytes, want the file's %d", len(m.Bytes()), len(data))
	}
	b := make([]byte, 20)
	if n, err := m.ReadAt(b, int64(len(data)-10)); n != 10 || !bytes.Equal(b[:n], data[len(data)-10:]) || err == nil {
		t.Errorf("ReadAt at the end: %d, %v", n, err)
	}
	m.Release(1, int64(len(data))) // the pages wholly inside: all but the first
	m.Release(-5, 10)
	if !bytes.Equal(m.Bytes(), data) {
		t.Error("the bytes changed after Release")
	}
	if err := m.Close(); err != nil || m.Bytes() != nil {
		t.Errorf("Close: %v, Bytes %d", err, len(m.Bytes()))
	}
	empty, err := Map(writeFile(t, nil), 0)
	if err != nil || len(empty.Bytes()) != 0 || empty.Close() != nil {
		t.Errorf("empty file: %v", err)
	}
}

// TestFaulted: a file cut while mapped faults past its new end; with
// SetPanicOnFault the fault is a panic that Faulted recognizes, and a
// panic of another kind is not one.
func TestFaulted(t *testing.T) {
	ps := os.Getpagesize()
	data := bytes.Repeat([]byte{7}, 4*ps)
	f := writeFile(t, data)
	m, err := Map(f, int64(len(data)))
	if err != nil {
		t.Skip(err)
	}
	defer m.Close()
	if err := os.Truncate(f.Name(), int64(ps)); err != nil {
		t.Fatal(err)
	}
	var sum byte
	read := func(i int) (v any) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { v = recover() }()
		sum += m.Bytes()[i]
		return nil
	}
	if v := read(0); v != nil {
		t.Fatalf("reading the first page: %v", v)
	}
	v := read(3 * ps)
	if v == nil || !m.Faulted(v) {
		t.Fatalf("reading past the new end: %v, Faulted %v", v, v != nil && m.Faulted(v))
	}
	if sum != 7 {
		t.Errorf("the first page read %d, want 7", sum)
	}
	if m.Faulted("another panic") {
		t.Error("Faulted of a string is true")
	}
	other, err := Map(writeFile(t, data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.Faulted(v) {
		t.Error("another mapping's Faulted is true")
	}
}
