//go:build unix

package regfile

import (
	"io/fs"
	"syscall"
)

// Allocated returns how many bytes of storage the file fi describes
// occupies (st_blocks, in 512-byte units): for a sparse file, far less
// than its size. A section a header says is larger than this cannot be
// real content. ok is false where the system does not say.
func Allocated(fi fs.FileInfo) (n int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Blocks) * 512, true
}
