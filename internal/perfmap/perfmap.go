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
// addresses and where its name is in the file (not the name): 40 bytes an
// entry, however long the names. [Map.Lookup] is a binary search, and
// [Map.Name] reads one name back from the file, so that only the entries
// a profile's samples hit cost their names.
package perfmap

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"io"
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
	segs []Segment // sorted by Start, disjoint
	// Stats says what Parse met.
	Stats Stats
}

// A Segment is a part [Start, End) of one entry's range that no later
// entry claims, with where the entry's name is in the file.
type Segment struct {
	Start, End uint64 // this part
	Entry      uint64 // where the entry itself starts
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

// entry is one line of the map.
type entry struct {
	start, end uint64
	off        int64 // of the name in the file
	len        uint32
	seq        int // line order: a later entry wins
}

// Parse reads a perf map from r; the caller keeps the file to read names
// from with [Map.Name]. It fails only when r fails; lines it cannot use
// are counted in Map.Stats.
func Parse(r io.Reader) (*Map, error) {
	m := &Map{}
	var entries []entry
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	var pos int64 // file offset of the next line
	bad := func() {
		m.Stats.Malformed++
		if m.Stats.FirstBad == 0 {
			m.Stats.FirstBad = lineNo
		}
	}
	for {
		line, n, tooLong, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		lineStart := pos
		pos += int64(n)
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
		entries = append(entries, entry{start: start, end: start + size, off: lineStart + int64(nameAt), len: uint32(nameLen), seq: len(entries)})
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

// readLine reads one line without its newline, and n, the bytes it took
// in the file (0 at the end); tooLong reports a line longer than
// MaxLine, which is consumed and not returned.
func readLine(br *bufio.Reader) (line []byte, n int, tooLong bool, err error) {
	var buf []byte
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
func (m *Map) resolve(entries []entry) {
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.start, b.start) })
	// Boundaries: every start and end. Sweep them in order with the
	// active entries in a heap by seq, the latest on top; entries that
	// have ended leave the heap when they reach its top.
	points := make([]uint64, 0, 2*len(entries))
	for _, e := range entries {
		points = append(points, e.start, e.end)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	var active bySeq
	next := 0
	for i, p := range points {
		for len(active) > 0 && active[0].end <= p {
			heap.Pop(&active)
		}
		for next < len(entries) && entries[next].start == p {
			if len(active) > 0 {
				m.Stats.Overlaps++
			}
			heap.Push(&active, &entries[next])
			next++
		}
		for len(active) > 0 && active[0].end <= p {
			heap.Pop(&active)
		}
		if len(active) == 0 || i+1 == len(points) {
			continue
		}
		top := active[0]
		end := points[i+1]
		if n := len(m.segs); n > 0 && m.segs[n-1].End == p && m.segs[n-1].Entry == top.start && m.segs[n-1].NameOff == top.off {
			m.segs[n-1].End = end // the same entry continues
			continue
		}
		m.segs = append(m.segs, Segment{Start: p, End: end, Entry: top.start, NameOff: top.off, NameLen: top.len})
	}
}

// bySeq is a max-heap of entries by seq.
type bySeq []*entry

func (h bySeq) Len() int           { return len(h) }
func (h bySeq) Less(i, j int) bool { return h[i].seq > h[j].seq }
func (h bySeq) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *bySeq) Push(x any)        { *h = append(*h, x.(*entry)) }
func (h *bySeq) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Lookup returns the segment covering addr.
func (m *Map) Lookup(addr uint64) (Segment, bool) {
	i, found := slices.BinarySearchFunc(m.segs, addr, func(s Segment, a uint64) int { return cmp.Compare(s.Start, a) })
	if !found {
		i--
	}
	if i < 0 || addr >= m.segs[i].End {
		return Segment{}, false
	}
	return m.segs[i], true
}

// Ranges returns the address ranges the map covers, adjacent ones merged,
// in address order.
func (m *Map) Ranges() [][2]uint64 {
	var out [][2]uint64
	for _, s := range m.segs {
		if n := len(out); n > 0 && out[n-1][1] == s.Start {
			out[n-1][1] = s.End
			continue
		}
		out = append(out, [2]uint64{s.Start, s.End})
	}
	return out
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
