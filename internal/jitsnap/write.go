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

	"github.com/jitpprof/pprof/internal/elfrel"
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
// under either name. dir must exist.
func WriteObject(dir string, obj Object) (written bool, err error) {
	if obj.Name == "" || obj.Name != filepath.Base(obj.Name) || obj.Name[0] == '.' {
		return false, fmt.Errorf("object name %q is not a plain file name", obj.Name)
	}
	elfPath := filepath.Join(dir, obj.Name+ElfExt)
	metaPath := filepath.Join(dir, obj.Name+MetaExt)
	meta := Meta(obj.Sections)
	for _, f := range []struct {
		path string
		data []byte
	}{{elfPath, obj.Data}, {metaPath, meta}} {
		same, err := sameContents(f.path, f.data)
		if err != nil {
			return written, err
		}
		if same {
			continue
		}
		if err := writeAtomically(f.path, f.data); err != nil {
			return written, err
		}
		written = true
	}
	return written, nil
}

// sameContents reports whether the file at path exists and holds
// exactly data.
func sameContents(path string, data []byte) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false, nil
	}
	buf := make([]byte, min(len(data), 1<<20))
	for off := 0; off < len(data); {
		n, err := io.ReadFull(f, buf[:min(len(buf), len(data)-off)])
		if err != nil {
			return false, fmt.Errorf("comparing with %s: %w", path, err)
		}
		if !bytes.Equal(buf[:n], data[off:off+n]) {
			return false, nil
		}
		off += n
	}
	return true, nil
}

// writeAtomically writes data to path through a temporary file in the
// same directory (named ".NAME.*.tmp", which the mapping stage ignores)
// and rename(2).
func writeAtomically(path string, data []byte) (err error) {
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
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
