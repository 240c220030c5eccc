// Package regfile opens files that other programs wrote, and that anyone
// able to write beside them may have replaced, without ever blocking: only
// regular files are opened. A FIFO named like a JIT object would block an
// ordinary open(2) until a writer comes, forever if none does; a device
// such as /dev/zero would read without end.
package regfile

import (
	"errors"
	"fmt"
	"io"
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

// A Limited is a regular file open for reading, up to a limit: a read
// past it fails with a *TooLargeError. A file that another program keeps
// appending to, or a file of /proc that has no size to check, cannot be
// read without end.
type Limited struct {
	f     *os.File
	limit int64
	read  int64
}

// OpenLimited opens path as [Open] does, to be read up to limit bytes.
// Its errors are *fs.PathError, naming path.
func OpenLimited(path string, limit int64) (*Limited, error) {
	f, err := Open(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Limited{f: f, limit: limit}, nil
}

// Read reads as [os.File.Read] does, failing once the file holds more
// than the limit.
func (l *Limited) Read(p []byte) (int, error) {
	if l.read >= l.limit {
		// Something beyond the limit fails; the end of the file at it
		// does not.
		var one [1]byte
		if n, _ := l.f.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &fs.PathError{Op: "read", Path: l.f.Name(), Err: &TooLargeError{Limit: l.limit}}
	}
	if rest := l.limit - l.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := l.f.Read(p)
	l.read += int64(n)
	return n, err
}

// ReadAll reads the rest of the file, as [io.ReadAll] does, into a
// buffer of the file's size when it has one (the files of /proc have
// none), not one grown as it is read.
func (l *Limited) ReadAll() ([]byte, error) {
	n := int64(512)
	if st, err := l.f.Stat(); err == nil && st.Size() > 0 {
		n = min(st.Size(), l.limit) + 1 // +1: to see the end without growing
	}
	b := make([]byte, 0, n)
	for {
		m, err := l.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
	}
}

// Close closes the file.
func (l *Limited) Close() error { return l.f.Close() }

// A TooLargeError reports a file that holds more than its reader takes.
type TooLargeError struct {
	Limit int64 // in bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("more than %d bytes, the most read of such a file", e.Limit)
}
