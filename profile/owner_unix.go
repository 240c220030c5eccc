//go:build unix

package profile

import (
	"io/fs"
	"os"
	"syscall"
)

// checkOwner returns a *NotOwnedError unless the file fi describes is
// owned by root or by the user pprof runs as (its effective user, as perf
// checks).
func checkOwner(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := uint32(os.Geteuid()); st.Uid != 0 && st.Uid != euid {
		return &NotOwnedError{Owner: st.Uid, User: euid}
	}
	return nil
}
