package profile

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/jitpprof/pprof/internal/regfile"
)

// loadOptions are how a Cache reads objects.
type loadOptions struct {
	anyOwner bool // see Cache.SetAnyOwner
}

// openSource opens the JIT source file path (a perf map or a jitdump) if
// it is a regular file owned by the user pprof runs as or root (unless
// o.anyOwner), and returns its size when opened: what is read of it,
// however it grows while read. The owner is that of the file opened, not
// of whatever the name named when looked at.
func openSource(path string, o loadOptions) (*os.File, int64, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && !o.anyOwner {
		err = checkOwner(st)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// A NotOwnedError reports a perf map or jitdump that neither the user
// pprof runs as nor root owns. perf ignores such files (unless forced
// with -f): anyone can write /tmp/perf-PID.map for a process that has
// not, and have its code named as they like.
type NotOwnedError struct {
	Owner, User uint32 // the file's owner, and the user pprof runs as
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("owned by user %d, not by you (user %d) or root: not used, as perf does not use it (-jit_any_owner uses it)", e.Owner, e.User)
}

// sparseMin is the size from which a file is checked for holes.
const sparseMin = 1 << 20

// notSparse refuses a file of size bytes of which more than half are the
// holes of a sparse file: a perf map or jitdump is written, never
// seeked over, and reading terabytes of zeros would take hours.
func notSparse(f *os.File, size int64) error {
	if size < sparseMin {
		return nil
	}
	if holes, ok := regfile.Holes(f, 0, size); ok && holes > size/2 {
		return fmt.Errorf("%d of its %d bytes are holes of a sparse file: not read", holes, size)
	}
	return nil
}

// OwnerError returns a *NotOwnedError if the perf map or jitdump fi
// describes is owned by neither the user pprof runs as nor root (which
// perf does not use, and the Cache does not by default), else nil.
func OwnerError(fi fs.FileInfo) error { return checkOwner(fi) }
