package procfs

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A Mapping is one line of /proc/PID/maps: the addresses [Start, Limit)
// of the target map Offset onwards of the file Path (or nothing, for an
// anonymous mapping).
type Mapping struct {
	Start, Limit uint64
	Perms        string // such as "r-xp"
	Offset       uint64 // file offset of Start
	Dev          string // "major:minor" in hex, "00:00" when anonymous
	Inode        uint64 // 0 when anonymous
	Path         string // file path, "[heap]" and the like, or ""
}

// Readable reports whether the mapping may be read.
func (m Mapping) Readable() bool { return strings.HasPrefix(m.Perms, "r") }

// Executable reports whether the mapping holds code.
func (m Mapping) Executable() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// Writable reports whether the mapping may be written.
func (m Mapping) Writable() bool { return len(m.Perms) >= 2 && m.Perms[1] == 'w' }

// File reports whether the mapping maps a file: it has an inode and an
// absolute path.
func (m Mapping) File() bool { return m.Inode != 0 && strings.HasPrefix(m.Path, "/") }

// String formats the mapping as a line of /proc/PID/maps.
func (m Mapping) String() string {
	return fmt.Sprintf("%x-%x %s %08x %s %d %s", m.Start, m.Limit, m.Perms, m.Offset, m.Dev, m.Inode, m.Path)
}

// ParseMaps parses the contents of /proc/PID/maps. The mappings are
// returned sorted by address, as the kernel lists them; a line that does
// not parse is an error naming its number.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		m, err := parseMapsLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Mapping) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return out, nil
}

// parseMapsLine parses "start-limit perms offset dev inode [path]". The
// path is everything after the inode and its padding; it may contain
// spaces.
func parseMapsLine(s string) (Mapping, error) {
	var m Mapping
	rest := s
	field := func() string {
		rest = strings.TrimLeft(rest, " ")
		i := strings.IndexByte(rest, ' ')
		if i < 0 {
			i = len(rest)
		}
		f := rest[:i]
		rest = rest[i:]
		return f
	}
	rng, perms, off, dev, inode := field(), field(), field(), field(), field()
	lo, hi, ok := strings.Cut(rng, "-")
	var err error
	if !ok {
		return m, fmt.Errorf("address range %q is not START-LIMIT", rng)
	}
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, fmt.Errorf("start address %q: %w", lo, err)
	}
	if m.Limit, err = strconv.ParseUint(hi, 16, 64); err != nil {
		return m, fmt.Errorf("limit address %q: %w", hi, err)
	}
	if m.Limit < m.Start {
		return m, fmt.Errorf("range %q ends before it starts", rng)
	}
	if len(perms) != 4 {
		return m, fmt.Errorf("permissions %q are not four letters", perms)
	}
	m.Perms = perms
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return m, fmt.Errorf("offset %q: %w", off, err)
	}
	if !strings.Contains(dev, ":") {
		return m, fmt.Errorf("device %q is not MAJOR:MINOR", dev)
	}
	m.Dev = dev
	if m.Inode, err = strconv.ParseUint(inode, 10, 64); err != nil {
		return m, fmt.Errorf("inode %q: %w", inode, err)
	}
	m.Path = strings.TrimLeft(rest, " ")
	return m, nil
}
