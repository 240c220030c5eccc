//go:build unix

package perfconfig

import (
	"io/fs"
	"syscall"
)

// owner returns the user id of the owner of the file fi describes.
func owner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
