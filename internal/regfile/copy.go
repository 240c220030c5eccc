package regfile

import (
	"io"
	"os"
)

// Copy copies the regular file src, as much of it as it holds when it is
// opened (a runtime may still be appending to it), to dst, a new file
// (an existing one is an error), made with mode perm. A partial copy is
// removed.
func Copy(src, dst string, perm os.FileMode) error {
	in, err := Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(out, in, st.Size()); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}
