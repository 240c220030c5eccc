package jitsnap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/regfile"
)

// File name extensions of a dumped object, as the mapping stage reads
// them (profile.Load).
const (
	// ElfExt ends the name of the object itself, NAME.elf.
	ElfExt = ".elf"
	// MetaExt ends the name of its section index, NAME.meta.
	MetaExt = ".meta"
)

// Meta returns the NAME.meta document of an object: every section with
// a non-zero load address, in section header order, as
//
//	{"sections":[
//	{"name":".text","start":140675611394048,"size":1047634},
//	...
//	]}
//
// byte for byte what the dump listener writes for the same object.
func Meta(secs []elfrel.Section) []byte {
	var b bytes.Buffer
	b.WriteString(`{"sections":[`)
	first := true
	for _, s := range secs {
		if s.Addr == 0 {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString("\n{\"name\":")
		writeJSONString(&b, s.Name)
		b.WriteString(`,"start":`)
		b.WriteString(strconv.FormatUint(s.Addr, 10))
		b.WriteString(`,"size":`)
		b.WriteString(strconv.FormatUint(s.Size, 10))
		b.WriteByte('}')
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// writeJSONString quotes s as the listener does: '"' and '\' escaped,
// control characters as \u00XX, all other bytes as they are.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// WriteObject stores obj as dir/NAME.elf and dir/NAME.meta and reports
// whether it wrote anything: files that exist with the same contents are
// left untouched. Each file is written to a temporary name in dir,
// synced and renamed into place, .elf before .meta, so a reader that sees
// NAME.meta finds NAME.elf complete, and a crash leaves no partial file
// under either name. Something other than a regular file under either
// name (a FIFO, say) is never opened, only replaced. An object from
// Collect is copied from the target a chunk at a time and must still
// have the hash in its name. dir must exist.
func WriteObject(dir string, obj Object) (written bool, err error) {
	if obj.Name == "" || obj.Name != filepath.Base(obj.Name) || obj.Name[0] == '.' {
		return false, fmt.Errorf("object name %q is not a plain file name", obj.Name)
	}
	elfPath := filepath.Join(dir, obj.Name+ElfExt)
	metaPath := filepath.Join(dir, obj.Name+MetaExt)
	meta := Meta(obj.Sections)
	img, size := obj.image()
	var want *uint64
	if obj.mem != nil && obj.Data == nil {
		want = &obj.hash
	}
	for _, f := range []struct {
		path string
		r    io.ReaderAt
		size int64
		hash *uint64
	}{{elfPath, img, size, want}, {metaPath, bytes.NewReader(meta), int64(len(meta)), nil}} {
		same, err := sameContents(f.path, f.r, f.size)
		if err != nil {
			return written, err
		}
		if same {
			continue
		}
		if err := writeAtomically(f.path, f.r, f.size, f.hash); err != nil {
			return written, err
		}
		written = true
	}
	return written, nil
}

// sameContents reports whether the file at path is a regular file that
// holds exactly the size bytes of r. It compares a chunk at a time, and
// opens nothing but a regular file.
func sameContents(path string, r io.ReaderAt, size int64) (bool, error) {
	f, err := regfile.Open(path)
	var notRegular *regfile.NotRegularError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &notRegular) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() != size {
		return false, nil
	}
	have := make([]byte, min(size, copyChunk))
	want := make([]byte, len(have))
	for off := int64(0); off < size; {
		n := min(int64(len(have)), size-off)
		if _, err := io.ReadFull(f, have[:n]); err != nil {
			return false, fmt.Errorf("comparing with %s: %w", path, err)
		}
		if _, err := r.ReadAt(want[:n], off); err != nil && !(errors.Is(err, io.EOF) && off+n == size) {
			return false, err
		}
		if !bytes.Equal(have[:n], want[:n]) {
			return false, nil
		}
		off += n
	}
	return true, nil
}

// errChanged is why an object is not saved whose bytes in the target
// changed between the time it was checked and the time it was copied.
var errChanged = errors.New("its bytes changed in the target while they were copied (the JIT freed or rewrote it)")

// writeAtomically copies the size bytes of r to path through a
// temporary file in the same directory (named ".NAME.*.tmp", which the
// mapping stage ignores) and rename(2), a chunk at a time. With hash, the
// bytes copied must have that xxHash64.
func writeAtomically(path string, r io.ReaderAt, size int64, hash *uint64) (err error) {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	d := xxhash.New()
	buf := make([]byte, min(size, copyChunk))
	for off := int64(0); off < size; {
		chunk := buf[:min(int64(len(buf)), size-off)]
		if _, err := r.ReadAt(chunk, off); err != nil && !(errors.Is(err, io.EOF) && off+int64(len(chunk)) == size) {
			return err
		}
		d.Write(chunk)
		if _, err := tmp.Write(chunk); err != nil {
			return err
		}
		off += int64(len(chunk))
	}
	if hash != nil && d.Sum64() != *hash {
		return errChanged
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
