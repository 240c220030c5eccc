package profile

import (
	"fmt"
	"os"

	"github.com/jitpprof/pprof/internal/regfile"
)

// openSource opens the JIT source file path (a perf map or a jitdump) if
// it is a regular file, and returns its size when opened: what is read of
// it, however it grows while read.
func openSource(path string) (*os.File, int64, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
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
