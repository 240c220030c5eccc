package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// maxVDSO bounds the vDSO image read: the kernel's are one to a few
// pages (8 KiB on x86-64, 4 to 8 KiB on arm64).
const maxVDSO = 1 << 20

// VDSO returns a copy of the vDSO the kernel maps into this process
// (its "[vdso]" mapping, an ELF image): the same code every process of
// the same architecture and kernel gets, which no file holds. A
// recording's "[vdso]" frames are unwound and named with it when its
// build ID is the recording's (perf record keeps such a copy in its
// build-ID cache instead).
// An FS of no proc file system has none.
func (fs FS) VDSO() ([]byte, error) {
	dir := fs.dir
	if dir == "" {
		return nil, errors.New("no proc file system to read this process's [vdso] from")
	}
	maps := filepath.Join(dir, "self", "maps")
	f, err := os.Open(maps)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := ParseMaps(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", maps, err)
	}
	for _, m := range list {
		if m.Path != "[vdso]" {
			continue
		}
		if m.Limit-m.Start > maxVDSO {
			return nil, fmt.Errorf("%s: a [vdso] of %d bytes", maps, m.Limit-m.Start)
		}
		mem, err := os.Open(filepath.Join(dir, "self", "mem"))
		if err != nil {
			return nil, err
		}
		defer mem.Close()
		b := make([]byte, m.Limit-m.Start)
		if _, err := mem.ReadAt(b, int64(m.Start)); err != nil {
			return nil, fmt.Errorf("reading [vdso] at %#x: %w", m.Start, err)
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) {
			return nil, fmt.Errorf("[vdso] at %#x is not an ELF image", m.Start)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s: no [vdso] mapping", maps)
}
