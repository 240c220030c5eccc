package jitdump

import (
	"github.com/jitpprof/pprof/internal/safename"
)

// A FormatError reports a file that is not a jitdump file Read can use:
// its header is short, unreadable, of another magic number or of an
// impossible size.
type FormatError struct {
	File string // name of the file, as given to Read
	Msg  string // what is wrong
	Err  error  // the underlying error, or nil
}

// Error returns "FILE: MSG: ERR", the name made safe to print.
func (e *FormatError) Error() string { return safename.String(e.File) + ": " + e.Reason() }

// Reason returns the message of Error without the file name, for a
// caller that names the file itself.
func (e *FormatError) Reason() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// FileName returns the name of the file, as given to Read.
func (e *FormatError) FileName() string { return e.File }

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }
