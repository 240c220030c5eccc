// Package perfmap reads perf map files, /tmp/perf-PID.map, in which JIT
// runtimes (V8 with --perf-basic-prof, the JVM's perf map agent and
// -XX:+DumpPerfMapAtExit, .NET with DOTNET_PerfMapEnabled, CPython 3.12's
// perf trampolines, wasmtime, LuaJIT, LLVM's PerfSupportPlugin) list the
// code they generate, one entry a line:
//
//	START SIZE NAME
//
// START and SIZE are hexadecimal, with or without a 0x prefix; NAME is the
// rest of the line and may hold spaces ("int App.hot(int[])"). The file is
// an append log: lines come in any order, and when code is freed and its
// memory reused, a later line claims addresses an earlier one did; the
// later one wins.
//
// [Parse] reads a map in one streaming pass and keeps, per entry, its
// addresses and where its name is in the file (not the name): 24 bytes an
// entry, however long the names. [Map.Lookup] is a binary search, and
// [Map.Name] reads one name back from the file, so that only the entries
// a profile's samples hit cost their names.
package perfmap

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"errors"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxLine is the longest line Parse reads; a longer one is skipped and
// counted as malformed.
const MaxLine = 64 << 10

// A Map is a parsed perf map: disjoint address ranges, each named by the
// last entry of the file that covers it.
type Map struct {
	segs []span // sorted by start, disjoint
	// Stats says what Parse met.
	Stats Stats
}

// A Segment is a part [Start, End) of one entry's range that no later
// entry claims, with where the entry's name is in the file.
type Segment struct {
	Start, End uint64 // this part
	NameOff    int64  // the name's offset in the file
	NameLen    uint32
}

// Stats counts what Parse kept and what it could not use.
type Stats struct {
	Entries   int // lines read as entries
	Malformed int // lines that are not START SIZE NAME, or too long
	Empty     int // entries of size 0
	Wrapping  int // entries whose range wraps past 2^64
	Overlaps  int // entries that begin inside another (by address order)
	// FirstBad is the 1-based number of the first malformed line, 0 if none.
	FirstBad int
}

// A span is one entry of the map, or a part of one: [start, end), and
// where its name is, packed (see pack). An entry's name is after those of
// the entries before it in the file: its offset also orders the entries.
// 24 bytes an entry, however long its name.
type span struct {
	start, end uint64
	name       uint64
}

// Names are packed as offset<<nameLenBits | length: a name is at most
// MaxLine bytes, and a file at most 2^43 bytes (8 TiB).
const (
	nameLenBits = 21
	maxFileSize = 1 << (64 - nameLenBits - 1)
)

func pack(off int64, n int) uint64 { return uint64(off)<<nameLenBits | uint64(n) }

func (s span) segment() Segment {
	return Segment{Start: s.start, End: s.end, NameOff: int64(s.name >> nameLenBits), NameLen: uint32(s.name & (1<<nameLenBits - 1))}
}

// Parse reads a perf map from r; the caller keeps the file to read names
// from with [Map.Name]. It fails only when r fails, or holds more than
// 8 TiB; lines it cannot use are counted in Map.Stats. It keeps 24 bytes
// an entry, and at most as much again while it resolves overlaps.
func Parse(r io.Reader) (*Map, error) { return parse(r, nil) }

// ParseAt reads the perf map of size bytes in r, as Parse does, counting
// its lines first: its entries are kept in one slice of the size they
// need, not grown to it (which takes twice as much at once, and five
// times in all).
func ParseAt(r io.ReaderAt, size int64) (*Map, error) {
	lines, err := countLines(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	if lines > math.MaxInt32 {
		return nil, errors.New("a perf map of more than 2^31 entries")
	}
	return parse(io.NewSectionReader(r, 0, size), make([]span, 0, lines))
}

// countLines counts the lines of r, the last even without a newline.
func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// parse is Parse, appending the entries to entries.
func parse(r io.Reader, entries []span) (*Map, error) {
	m := &Map{}
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	var pos int64 // file offset of the next line
	bad := func() {
		m.Stats.Malformed++
		if m.Stats.FirstBad == 0 {
			m.Stats.FirstBad = lineNo
		}
	}
	var buf []byte
	for {
		line, n, tooLong, err := readLine(br, buf[:0])
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		buf = line
		lineStart := pos
		pos += int64(n)
		if pos > maxFileSize {
			return nil, errors.New("a perf map of more than 8 TiB")
		}
		lineNo++
		if tooLong {
			bad()
			continue
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		start, size, nameAt, nameLen, ok := parseLine(line)
		if !ok {
			bad()
			continue
		}
		m.Stats.Entries++
		if size == 0 {
			m.Stats.Empty++
			continue
		}
		if start+size < start {
			m.Stats.Wrapping++
			continue
		}
		if len(entries) == math.MaxInt32 {
			return nil, errors.New("a perf map of more than 2^31 entries")
		}
		entries = append(entries, span{start: start, end: start + size, name: pack(lineStart+int64(nameAt), nameLen)})
	}
	m.resolve(entries)
	return m, nil
}

// Name reads the name of seg from r, the file Parse read.
func (m *Map) Name(r io.ReaderAt, seg Segment) (string, error) {
	b := make([]byte, seg.NameLen)
	if _, err := r.ReadAt(b, seg.NameOff); err != nil {
		return "", err
	}
	return string(b), nil
}

// readLine reads one line without its newline, into buf, and n, the
// bytes it took in the file (0 at the end); tooLong reports a line
// longer than MaxLine, which is consumed and not returned.
func readLine(br *bufio.Reader, buf []byte) (line []byte, n int, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if !tooLong {
			if len(buf)+len(chunk) > MaxLine+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil, io.EOF:
			return bytes.TrimSuffix(buf, []byte("\n")), n, tooLong, nil
		default:
			return nil, 0, false, err
		}
	}
}

// parseLine splits "START SIZE NAME"; the name is line[nameAt:nameAt+nameLen].
func parseLine(line []byte) (start, size uint64, nameAt, nameLen int, ok bool) {
	f1, rest, ok1 := cutField(line)
	f2, rest, ok2 := cutField(rest)
	if !ok1 || !ok2 {
		return 0, 0, 0, 0, false
	}
	var err error
	if start, err = parseHex(f1); err != nil {
		return 0, 0, 0, 0, false
	}
	if size, err = parseHex(f2); err != nil {
		return 0, 0, 0, 0, false
	}
	name := bytes.TrimSpace(rest)
	if len(name) == 0 {
		return start, size, 0, 0, true
	}
	return start, size, len(line) - len(rest) + bytes.Index(rest, name), len(name), true
}

// cutField returns the first space-separated field of b and what
// follows it.
func cutField(b []byte) (field, rest []byte, ok bool) {
	b = bytes.TrimLeft(b, " \t")
	i := bytes.IndexAny(b, " \t")
	if i < 0 {
		return b, nil, len(b) > 0
	}
	return b[:i], b[i+1:], i > 0
}

func parseHex(b []byte) (uint64, error) {
	s := string(b)
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	return strconv.ParseUint(s, 16, 64)
}

// resolve turns the entries into disjoint segments, each part of an
// address range going to the last entry (in file order) that covers it,
// and counts the entries that start where another is still active.
// Entries that do not overlap (a map written once, by the JDK) are the
// segments themselves; otherwise one sweep by address, with the entries
// active there in a heap by file order, the latest on top, yields a
// segment wherever the top changes: at the start of a later entry, or
// at the end of the top one (entries that ended leave the heap when they
// reach its top).
func (m *Map) resolve(entries []span) {
	slices.SortFunc(entries, func(a, b span) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.name, b.name)) })
	disjoint := true
	for i := 1; i < len(entries) && disjoint; i++ {
		disjoint = entries[i].start >= entries[i-1].end
	}
	if disjoint {
		m.segs = slices.Clip(entries)
		return
	}
	active := &byName{entries: entries}
	m.segs = make([]span, 0, len(entries)) // more only where entries split others
	next := 0
	p := entries[0].start
	for {
		for active.Len() > 0 && active.top().end <= p {
			heap.Pop(active)
		}
		for next < len(entries) && entries[next].start == p {
			if active.Len() > 0 {
				m.Stats.Overlaps++
			}
			heap.Push(active, next)
			next++
		}
		if active.Len() == 0 {
			if next == len(entries) {
				break
			}
			p = entries[next].start
			continue
		}
		top := active.top()
		end := top.end
		if next < len(entries) && entries[next].start < end {
			end = entries[next].start
		}
		if n := len(m.segs); n > 0 && m.segs[n-1].end == p && m.segs[n-1].name == top.name {
			m.segs[n-1].end = end // the same entry continues
		} else {
			m.segs = append(m.segs, span{start: p, end: end, name: top.name})
		}
		p = end
	}
	m.segs = slices.Clip(m.segs)
}

// byName is a max-heap of indices of entries, by the position of their
// names in the file: the latest entry on top.
type byName struct {
	entries []span
	idx     []int32
}

func (h *byName) Len() int           { return len(h.idx) }
func (h *byName) Less(i, j int) bool { return h.entries[h.idx[i]].name > h.entries[h.idx[j]].name }
func (h *byName) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *byName) Push(x any)         { h.idx = append(h.idx, int32(x.(int))) }
func (h *byName) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
func (h *byName) top() span { return h.entries[h.idx[0]] }

// Lookup returns the segment covering addr.
func (m *Map) Lookup(addr uint64) (Segment, bool) {
	i, found := slices.BinarySearchFunc(m.segs, addr, func(s span, a uint64) int { return cmp.Compare(s.start, a) })
	if !found {
		i--
	}
	if i < 0 || addr >= m.segs[i].end {
		return Segment{}, false
	}
	return m.segs[i].segment(), true
}

// Ranges returns the address ranges the map covers, adjacent ones merged,
// in address order.
func (m *Map) Ranges() [][2]uint64 {
	var out [][2]uint64
	for start, end := range m.All() {
		out = append(out, [2]uint64{start, end})
	}
	return out
}

// All yields the address ranges the map covers, adjacent ones merged, in
// address order, as Ranges returns them.
func (m *Map) All() iter.Seq2[uint64, uint64] {
	return func(yield func(start, end uint64) bool) {
		for i := 0; i < len(m.segs); {
			start, end := m.segs[i].start, m.segs[i].end
			for i++; i < len(m.segs) && m.segs[i].start == end; i++ {
				end = m.segs[i].end
			}
			if !yield(start, end) {
				return
			}
		}
	}
}

// Len returns the number of disjoint named ranges.
func (m *Map) Len() int { return len(m.segs) }

// Anonymous reports whether a mapping of the file named file (as
// /proc/PID/maps and perf's MMAP records name it) is anonymous memory,
// where the code a perf map lists lives, rather than a file's: no name,
// "//anon" (perf's), "[heap]", "[anon:NAME]" (a region named with
// PR_SET_VMA_ANON_NAME), "/memfd:NAME" (memory from memfd_create, which
// runtimes that map their code twice use), and, as perf report takes them,
// "/dev/zero" (shared memory: PHP's opcache keeps its JIT code there, as
// "/dev/zero (deleted)") and "/anon_hugepage" (memory of huge pages:
// the JVM's code cache with -XX:+UseLargePages).
func Anonymous(file string) bool {
	switch {
	case file == "", file == "//anon", file == "[heap]":
		return true
	}
	for _, prefix := range []string{"[anon", "/memfd:", "/dev/zero", "/anon_hugepage"} {
		if strings.HasPrefix(file, prefix) {
			return true
		}
	}
	return false
}
