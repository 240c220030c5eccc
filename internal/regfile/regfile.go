// Package regfile opens files that other programs wrote, and that anyone
// able to write beside them may have replaced, without ever blocking: only
// regular files are opened. A FIFO named like a JIT object would block an
// ordinary open(2) until a writer comes, forever if none does; a device
// such as /dev/zero would read without end.
package regfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Open opens path for reading if it is a regular file. It checks the file
// before opening it, opens it with O_NONBLOCK (so that something swapped
// in between, a FIFO, cannot block), and checks again what it opened. Its
// errors do not repeat the path, which the caller names.
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Mode: st.Mode().Type()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, unwrapPath(err)
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, unwrapPath(err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Mode: st.Mode().Type(), Swapped: true}
	}
	return f, nil
}

// A NotRegularError reports that a path names something other than a
// regular file: a FIFO, a device, a socket or a directory.
type NotRegularError struct {
	Mode    fs.FileMode // its type bits
	Swapped bool        // it was a regular file when checked, and not once opened
}

func (e *NotRegularError) Error() string {
	if e.Swapped {
		return fmt.Sprintf("not a regular file once opened (%v)", e.Mode)
	}
	return fmt.Sprintf("not a regular file (%v)", e.Mode)
}

// unwrapPath drops the *fs.PathError wrapper, whose path the caller
// reports.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
