package elfrel

import (
	"errors"
	"fmt"

	"github.com/jitpprof/pprof/internal/safename"
)

// ErrNoDWARF is wrapped by the error [File.DWARF] returns when the object
// has no .debug_info section. Test for it with [errors.Is].
var ErrNoDWARF = errors.New("no DWARF debug information")

// ErrNotELF is wrapped by the [*FormatError] of a file that does not
// start with the ELF magic number. Test for it with [errors.Is].
var ErrNotELF = errors.New("not an ELF file")

// A FormatError reports that an object is malformed: a header field, a
// section or a relocation is out of range or inconsistent.
type FormatError struct {
	File    string // name of the object, as given to Open or NewFile
	Section string // section the problem is in; "" for the ELF header or the section header table
	Off     int64  // byte offset in Section, or in the file when Section is ""; -1 if unknown
	Msg     string // what is wrong
	Err     error  // underlying error, or nil
}

// Error returns "FILE: section SECTION: MSG at offset OFF: ERR", leaving
// out the parts that are unknown; the names are made safe to print (see
// package safename).
func (e *FormatError) Error() string {
	return safename.String(e.File) + ": " + e.Reason()
}

// Reason returns the message of Error without the file name, for a
// caller that names the file itself.
func (e *FormatError) Reason() string {
	s := ""
	if e.Section != "" {
		s += "section " + safename.String(e.Section) + ": "
	}
	s += e.Msg
	if e.Off >= 0 {
		s += fmt.Sprintf(" at offset %#x", e.Off)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// FileName returns the name of the object, as given to Open or NewFile.
func (e *FormatError) FileName() string { return e.File }

// Unwrap returns the underlying error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// An UnsupportedError reports a well-formed object that this package does
// not read: another ELF class, file type or machine, a relocation type it
// does not apply, or a compressed debug section. Callers can fall back to
// an external symbolizer.
type UnsupportedError struct {
	File    string // name of the object
	Section string // section concerned, or ""
	Msg     string // what is not supported
}

// Error returns "FILE: section SECTION: unsupported: MSG".
func (e *UnsupportedError) Error() string {
	return safename.String(e.File) + ": " + e.Reason()
}

// FileName returns the name of the object, as given to Open or NewFile.
func (e *UnsupportedError) FileName() string { return e.File }

// Reason returns the message of Error without the file name.
func (e *UnsupportedError) Reason() string {
	s := ""
	if e.Section != "" {
		s += "section " + safename.String(e.Section) + ": "
	}
	return s + "unsupported: " + e.Msg
}
