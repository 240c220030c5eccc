package profile

import (
	"bytes"
	"strconv"

	"github.com/google/pprof/profile"
)

// parseProcMaps parses a legacy profile's memory map as upstream's
// profile.ParseProcMaps does. The lines of /proc/PID/maps itself are
// parsed here, without regular expressions (upstream's two per line took
// most of the time of a profile of a million mappings); a map with any
// other line (upstream's brief format, glog prefixes, attr=value
// substitutions, or anything it might read otherwise) is handed to
// upstream's parser whole, so that the result is always upstream's.
func parseProcMaps(data []byte) ([]*profile.Mapping, error) {
	if ms, ok := fastProcMaps(data); ok {
		return ms, nil
	}
	return profile.ParseProcMaps(bytes.NewReader(data))
}

// maxMapsLine is the longest line upstream's line scanner reads.
const maxMapsLine = 64 << 10

// fastProcMaps parses data if each of its lines is blank or a line of
// /proc/PID/maps: START-END PERMS OFFSET MAJOR:MINOR INODE, then
// optionally the path (whose first word upstream takes, as here). It
// reports false for anything else, which upstream's regular expressions
// might read differently: other spaces, a first bracket that closes
// (upstream strips what it takes for a glog prefix, "file.cc:12] "), a
// field of another shape.
func fastProcMaps(data []byte) ([]*profile.Mapping, bool) {
	var out []*profile.Mapping
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > maxMapsLine {
			return nil, false
		}
		line = bytes.TrimSuffix(line, []byte{'\r'}) // as bufio.ScanLines
		if len(bytes.TrimLeft(line, " \t\f\r")) == 0 {
			continue // upstream skips it too
		}
		m, ok := mapsLine(line)
		if !ok {
			return nil, false
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out, true
}

// mapsLine parses one line of /proc/PID/maps; nil for a region that is
// not executable (skipped, as upstream skips it).
func mapsLine(line []byte) (*profile.Mapping, bool) {
	for _, c := range line {
		if c < 0x20 || c == 0x7f {
			return nil, false // other spaces, which upstream reads as spaces
		}
	}
	if i := bytes.IndexAny(line, "[]"); i >= 0 && line[i] == ']' {
		return nil, false // maybe a glog prefix ("file.cc:12] "), which upstream removes
	}
	field := func(ok func(byte) bool) ([]byte, bool) {
		i := 0
		for i < len(line) && ok(line[i]) {
			i++
		}
		f := line[:i]
		line = line[i:]
		return f, i > 0
	}
	hex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	sep := func(b byte) bool {
		if len(line) == 0 || line[0] != b {
			return false
		}
		line = line[1:]
		return true
	}
	start, ok1 := field(hex)
	ok2 := sep('-')
	end, ok3 := field(hex)
	ok4 := sep(' ')
	perm, ok5 := field(func(c byte) bool { return c == '-' || c == 'r' || c == 'w' || c == 'x' || c == 'p' })
	ok6 := sep(' ')
	offset, ok7 := field(hex)
	ok8 := sep(' ')
	_, ok9 := field(hex)
	ok10 := sep(':')
	_, ok11 := field(hex)
	ok12 := sep(' ')
	_, ok13 := field(func(c byte) bool { return '0' <= c && c <= '9' })
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9 && ok10 && ok11 && ok12 && ok13) ||
		len(start) > 16 || len(end) > 16 || len(offset) > 16 || len(line) > 0 && line[0] != ' ' ||
		start[0] == '0' && len(start) > 1 && (start[1] == 'x' || start[1] == 'X') {
		return nil, false
	}
	if bytes.IndexByte(perm, 'x') < 0 {
		return nil, true
	}
	field(func(c byte) bool { return c == ' ' })
	file, _ := field(func(c byte) bool { return c != ' ' }) // the path's first word
	m := &profile.Mapping{File: string(file)}
	var err error
	if m.Start, err = strconv.ParseUint(string(start), 16, 64); err != nil {
		return nil, false
	}
	if m.Limit, err = strconv.ParseUint(string(end), 16, 64); err != nil {
		return nil, false
	}
	if m.Offset, err = strconv.ParseUint(string(offset), 16, 64); err != nil {
		return nil, false
	}
	return m, true
}
