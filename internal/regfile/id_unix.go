//go:build unix

package regfile

import (
	"os"
	"syscall"
)

// IDOf returns the ID of the open file f: its device and inode number.
func IDOf(f *os.File) (ID, error) {
	fi, err := f.Stat()
	if err != nil {
		return ID{}, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
	}
	return nameID(f), nil
}
