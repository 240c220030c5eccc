// Package mapfile maps a file into memory, read-only, so that a reader
// of a large recording takes its bytes in place: no copy out of the page
// cache, and no page touched that is not read (a perf.data sample of
// --call-graph dwarf carries 8 KiB of stack, of which unwinding a
// shallow stack reads a few hundred bytes).
//
// A mapped file that shrinks while mapped (truncated by another process)
// makes a read of its bytes past its new end fault (SIGBUS): a reader of
// [Mapping.Bytes] turns that into an error with [Mapping.Faulted] under
// [runtime/debug.SetPanicOnFault].
package mapfile

import (
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// ErrUnsupported is returned by [Map] on systems without mmap, and for
// files too large to map whole (past the address space of 32-bit
// systems).
var ErrUnsupported = errors.New("mapfile: mapping files is not supported here")

// A Mapping is a file mapped into memory, read-only. Its methods may be
// called from several goroutines; Close must be called last.
type Mapping struct {
	data []byte
	f    *os.File
}

// Map maps the first size bytes of f (its size, as its Stat gives it).
// The mapping stays valid after f is closed; ReadAt reads f. An empty
// file maps to a Mapping of no bytes.
func Map(f *os.File, size int64) (*Mapping, error) {
	if size < 0 {
		return nil, fmt.Errorf("mapfile: %s: negative size %d", f.Name(), size)
	}
	m := &Mapping{f: f}
	if size == 0 {
		return m, nil
	}
	if int64(int(size)) != size || unsafe.Sizeof(uintptr(0)) < 8 {
		return nil, ErrUnsupported
	}
	data, err := mmap(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	m.data = data
	return m, nil
}

// Bytes returns the file's bytes. They are valid until Close, and must
// not be written.
func (m *Mapping) Bytes() []byte { return m.data }

// Len returns the number of bytes mapped.
func (m *Mapping) Len() int64 { return int64(len(m.data)) }

// ReadAt reads the bytes at off into b, as [os.File.ReadAt] does, from the
// file (which must still be open), not from the mapping: it maps no page
// into memory, and a file that shrank gives an error, not a fault. A
// reader that needs a few bytes here and there of a large file (the
// headers of its records) reads them so.
func (m *Mapping) ReadAt(b []byte, off int64) (n int, err error) { return m.f.ReadAt(b, off) }

// Faulted reports whether v, a value recovered from a panic of a
// goroutine that set [runtime/debug.SetPanicOnFault], is a memory fault
// in m's bytes: the file shrank under the mapping.
func (m *Mapping) Faulted(v any) bool {
	f, ok := v.(interface{ Addr() uintptr })
	if !ok || len(m.data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	a := f.Addr()
	return a >= start && a-start < uintptr(len(m.data))
}

// Release says that the bytes [off, off+n) will not be read again soon:
// the pages wholly inside leave the process's memory (the kernel keeps
// them in its page cache, and a later read maps them again). A reader
// that releases what it has read keeps its resident memory flat in the
// size of the file.
func (m *Mapping) Release(off, n int64) {
	ps := int64(os.Getpagesize())
	start := (off + ps - 1) / ps * ps
	end := min(off+n, int64(len(m.data))) / ps * ps
	if off < 0 || start >= end {
		return
	}
	release(m.data[start:end])
}

// Close unmaps the file; its bytes must not be used after.
func (m *Mapping) Close() error {
	if m.data == nil {
		return nil
	}
	data := m.data
	m.data = nil
	return munmap(data)
}
