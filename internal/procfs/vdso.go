package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasSuffix(line, " [vdso]") {
			continue
		}
		rng, _, _ := strings.Cut(line, " ")
		lo, hi, _ := strings.Cut(rng, "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start || end-start > maxVDSO {
			return nil, fmt.Errorf("%s: bad [vdso] line %q", maps, line)
		}
		mem, err := os.Open(filepath.Join(dir, "self", "mem"))
		if err != nil {
			return nil, err
		}
		defer mem.Close()
		b := make([]byte, end-start)
		if _, err := mem.ReadAt(b, int64(start)); err != nil {
			return nil, fmt.Errorf("reading [vdso] at %#x: %w", start, err)
		}
		if !bytes.HasPrefix(b, []byte("\x7fELF")) {
			return nil, fmt.Errorf("[vdso] at %#x is not an ELF image", start)
		}
		return b, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no [vdso] mapping", maps)
}
