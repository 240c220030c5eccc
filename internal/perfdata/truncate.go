package perfdata

import (
	"fmt"
	"math"
)

// A Truncation says where a recording was cut short: At, the size of the
// file, is less than Of, the size its header and feature table say it
// has at least. The zero Truncation is a whole file.
type Truncation struct {
	At, Of int64
}

// cut reports whether the file was cut short.
func (f *File) cut() bool { return f.Truncated.Of > 0 }

// truncate records that the file, of f.size bytes, should have at least
// end.
func (f *File) truncate(end int64) {
	f.Truncated = Truncation{At: f.size, Of: max(f.Truncated.Of, end)}
}

// tooShort is the error for a file too short for the header.
func (f *File) tooShort() error {
	return &FormatError{File: f.Name, Off: -1,
		Msg: fmt.Sprintf("too short to be a perf.data file (%d bytes; the header alone is %d)", f.size, fileHeaderSize)}
}

// truncatedError is the error for a recording cut short before anything
// that can be read, the part of it named by where.
func (f *File) truncatedError(where string) error {
	return &FormatError{File: f.Name, Off: -1,
		Msg: fmt.Sprintf("truncated at byte %d of %d (the recording was cut short) %s", f.Truncated.At, f.Truncated.Of, where)}
}

// checkSections checks the attribute and data sections the header gives
// against the file: a section that is impossible (negative, or past the
// largest file) is an error; one that runs past the end of the file
// marks a recording cut short. Cut inside its data section, it is read
// to its last whole record (as perf reads it); cut before, there is
// nothing to read.
func (f *File) checkSections(attrsOff, attrsN int64) error {
	for _, s := range [][2]int64{{attrsOff, attrsN}, {f.dataOff, f.dataN}} {
		if s[0] < fileHeaderSize || s[1] < 0 || s[0] > math.MaxInt64-s[1] {
			return f.errorf(24, "section [%#x, +%#x) is impossible", s[0], s[1])
		}
	}
	if end := attrsOff + attrsN; end > f.size {
		f.truncate(end)
		return f.truncatedError("inside its event attributes")
	}
	if end := f.dataOff + f.dataN; end > f.size {
		f.truncate(end)
		if f.dataOff >= f.size {
			return f.truncatedError("before its records")
		}
		f.dataN = f.size - f.dataOff
	}
	return nil
}

// idSections checks the event id sections of the attributes: each in the
// file, and no two sharing bytes (perf writes each event's ids once: a
// hostile file pointing thousands of attributes at one range of ids
// would have them copied thousands of times).
type idSections struct {
	f      *File
	ranges [][2]int64 // [start, end) of each section so far
}

// add checks the id section [off, off+n) of the attribute whose entry's
// section field is at at.
func (s *idSections) add(off, n, at int64) error {
	f := s.f
	if off < 0 || n < 0 || n%8 != 0 || off > math.MaxInt64-n {
		return f.errorf(at, "event id section [%#x, +%#x) is impossible", off, n)
	}
	if off+n > f.size {
		f.truncate(off + n)
		return f.truncatedError("inside its event ids")
	}
	if n == 0 {
		return nil
	}
	for _, r := range s.ranges {
		if off < r[1] && r[0] < off+n {
			return f.errorf(at, "event id section [%#x, +%#x) overlaps the section [%#x, +%#x) of another event", off, n, r[0], r[1]-r[0])
		}
	}
	s.ranges = append(s.ranges, [2]int64{off, off + n})
	return nil
}
