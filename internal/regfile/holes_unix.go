//go:build unix

package regfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Holes returns how many bytes of [off, off+size) of f are holes, as
// lseek(2)'s SEEK_HOLE and SEEK_DATA tell them: the unallocated ranges of
// a sparse file, which read as zeros but hold nothing. A file system
// without hole support reports none. Compression does not make holes, so
// unlike the blocks a file occupies this does not count compressed data
// as missing. ok is false if the file cannot be asked.
func Holes(f *os.File, off, size int64) (holes int64, ok bool) {
	fd := int(f.Fd())
	end := off + size
	for pos := off; pos < end; {
		h, err := unix.Seek(fd, pos, unix.SEEK_HOLE)
		if err != nil {
			return 0, false
		}
		if h >= end {
			break
		}
		d, err := unix.Seek(fd, h, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) { // a hole to the end of the file
			d = end
		} else if err != nil {
			return 0, false
		}
		holes += min(d, end) - h
		pos = d
	}
	return holes, true
}
