package perfdata

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/jitpprof/pprof/internal/regfile"
)

// kallsyms is a kernel symbol table, sorted by address. A table has a
// hundred thousand symbols or more, of which a profile names a few
// hundred: a symbol's name is found in the file's text when looked up.
type kallsyms struct {
	addrs []uint64
	at    []uint32 // where each symbol's name starts in text
	text  []byte   // the file
	delta uint64   // the recorded boot's addresses less the table's
}

func (k *kallsyms) empty() bool { return len(k.addrs) == 0 }

// name returns the name of symbol i, in the file's text: up to a space,
// a tab or the end of the line.
func (k *kallsyms) name(i int) []byte {
	b := k.text[k.at[i]:]
	for j, c := range b {
		if isSpace(c) || c == '\n' {
			return b[:j]
		}
	}
	return b
}

// relocate makes the table one of the boot recorded: the kernel placed
// at another address (KASLR) had symbol sym at addr, where the table has
// it elsewhere. An unknown sym leaves the table as it is.
func (k *kallsyms) relocate(sym string, addr uint64) {
	if sym == "" {
		return
	}
	for i := range k.addrs {
		if string(k.name(i)) == sym {
			k.delta = addr - k.addrs[i]
			return
		}
	}
}

// lookup returns the name of the symbol at or below addr.
func (k *kallsyms) lookup(addr uint64) string {
	addr -= k.delta
	i, found := slices.BinarySearch(k.addrs, addr)
	if !found {
		i--
	}
	if i < 0 {
		return ""
	}
	return string(k.name(i))
}

// readKallsyms reads the text symbols of /proc/kallsyms ("ADDRESS TYPE
// NAME", then a module name for module symbols; fields apart by spaces
// or tabs) with a non-zero address (zeros are what an unprivileged
// reader sees). The file is read whole and kept: a line is looked at
// for its address and type, its name is found when looked up.
func readKallsyms(path string) (*kallsyms, error) {
	fd, err := regfile.OpenLimited(path, 256<<20) // a FIFO would block, /dev/urandom never end
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	data, err := fd.ReadAll()
	if err != nil {
		return nil, err
	}
	k := &kallsyms{text: data}
	n := bytes.Count(data, []byte{'\n'}) + 1 // most lines are text symbols'
	k.addrs, k.at = make([]uint64, 0, n), make([]uint32, 0, n)
	for off := 0; off < len(data); {
		line := data[off:]
		lineOff := off
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			off += i + 1
		} else {
			off = len(data)
		}
		var a []byte
		at := lineOff + 19
		if len(line) > 19 && line[16] == ' ' && line[18] == ' ' && !isSpace(line[19]) {
			// The usual line: 16 hexadecimal digits, a space, the
			// type, a space, the name.
			if t := line[17]; t != 't' && t != 'T' {
				continue
			}
			a = line[:16]
		} else {
			var typ, name, rest []byte
			a, rest = field(line)
			typ, rest = field(rest)
			name, rest = field(rest)
			if len(name) == 0 || len(typ) != 1 || (typ[0] != 't' && typ[0] != 'T') {
				continue
			}
			at = lineOff + len(line) - len(rest) - len(name)
		}
		addr, ok := parseHex(a)
		if !ok || addr == 0 {
			continue
		}
		k.addrs = append(k.addrs, addr)
		k.at = append(k.at, uint32(at))
	}
	if !slices.IsSorted(k.addrs) {
		// By address, then in the file's order.
		idx := make([]int, len(k.addrs))
		for i := range idx {
			idx[i] = i
		}
		addrs := k.addrs
		slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(addrs[a], addrs[b]), cmp.Compare(a, b)) })
		sorted := &kallsyms{addrs: make([]uint64, len(idx)), at: make([]uint32, len(idx)), text: data}
		for i, j := range idx {
			sorted.addrs[i], sorted.at[i] = k.addrs[j], k.at[j]
		}
		k = sorted
	}
	return k, nil
}

// field returns the first field of b, after any spaces or tabs, and what
// follows it.
func field(b []byte) (f, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// parseHex parses b as a hexadecimal number of 64 bits, as
// strconv.ParseUint(b, 16, 64) does.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	if len(b) <= 16 { // no overflow: the usual case, 16 digits
		var bad byte
		for _, c := range b {
			d := hexDigit[c]
			bad |= d
			v = v<<4 | uint64(d&15)
		}
		return v, bad <= 15
	}
	for _, c := range b {
		d := hexDigit[c]
		if d > 15 || v>>60 != 0 { // not a digit, or overflow
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// hexDigit is the value of each hexadecimal digit, and 0xff for the
// other bytes.
var hexDigit = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = byte(c-'a'+10), byte(c-'a'+10)
	}
	return t
}()
