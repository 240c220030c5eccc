//go:build unix

package mapfile

import (
	"os"

	"golang.org/x/sys/unix"
)

func mmap(f *os.File, size int) ([]byte, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// Read front to back, mostly: the kernel reads ahead further.
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, nil
}

func munmap(b []byte) error { return unix.Munmap(b) }

// release drops the pages of b from the process's memory. The mapping is
// of a file, read-only: they come back from the page cache when read.
func release(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
