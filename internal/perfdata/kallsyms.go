package perfdata

import (
	"bytes"
	"cmp"
	"io"
	"slices"

	"github.com/jitpprof/pprof/internal/regfile"
)

// kallsyms is a kernel symbol table, sorted by address.
type kallsyms struct {
	addrs []uint64
	names []string
	delta uint64 // the recorded boot's addresses less the table's
}

func (k *kallsyms) empty() bool { return len(k.addrs) == 0 }

// relocate makes the table one of the boot recorded: the kernel placed
// at another address (KASLR) had symbol sym at addr, where the table has
// it elsewhere. An unknown sym leaves the table as it is.
func (k *kallsyms) relocate(sym string, addr uint64) {
	if sym == "" {
		return
	}
	for i, n := range k.names {
		if n == sym {
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
	return k.names[i]
}

// readKallsyms reads the text symbols of /proc/kallsyms ("ADDRESS TYPE
// NAME", then a module name for module symbols; fields apart by spaces
// or tabs) with a non-zero address (zeros are what an unprivileged
// reader sees). A table has a hundred thousand symbols or more: the file
// is read whole and the names kept in one string, not one allocation a
// line.
func readKallsyms(path string) (*kallsyms, error) {
	fd, err := regfile.OpenLimited(path, 256<<20) // a FIFO would block, /dev/urandom never end
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	data, err := io.ReadAll(fd)
	if err != nil {
		return nil, err
	}
	// The symbols in the file's order: their addresses, and where each
	// name ends in names.
	n := bytes.Count(data, []byte{'\n'}) + 1
	addrs, ends := make([]uint64, 0, n), make([]int, 0, n)
	names := make([]byte, 0, len(data)/2)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		var a, typ, name []byte
		if len(line) > 19 && line[16] == ' ' && line[18] == ' ' && !isSpace(line[19]) {
			// The usual line: 16 hexadecimal digits, a space, the
			// type, a space, the name.
			a, typ, name = line[:16], line[17:18], line[19:]
			for i, c := range name {
				if isSpace(c) {
					name = name[:i]
					break
				}
			}
		} else {
			var rest []byte
			a, rest = field(line)
			typ, rest = field(rest)
			name, _ = field(rest)
		}
		if len(name) == 0 || len(typ) != 1 || (typ[0] != 't' && typ[0] != 'T') {
			continue
		}
		addr, ok := parseHex(a)
		if !ok || addr == 0 {
			continue
		}
		addrs = append(addrs, addr)
		names = append(names, name...)
		ends = append(ends, len(names))
	}
	all := string(names)
	k := &kallsyms{addrs: addrs, names: make([]string, len(addrs))}
	for i, end := range ends {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		k.names[i] = all[start:end]
	}
	if !slices.IsSorted(addrs) {
		// By address, then in the file's order.
		idx := make([]int, len(addrs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Or(cmp.Compare(addrs[a], addrs[b]), cmp.Compare(a, b)) })
		sorted := &kallsyms{addrs: make([]uint64, len(idx)), names: make([]string, len(idx))}
		for i, j := range idx {
			sorted.addrs[i], sorted.names[i] = k.addrs[j], k.names[j]
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
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		if v>>60 != 0 {
			return 0, false // overflow
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}
