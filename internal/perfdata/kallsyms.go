package perfdata

import (
	"bufio"
	"cmp"
	"slices"
	"strconv"
	"strings"

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
// NAME", then a module name for module symbols) with a non-zero address
// (zeros are what an unprivileged reader sees).
func readKallsyms(path string) (*kallsyms, error) {
	fd, err := regfile.OpenLimited(path, 256<<20) // a FIFO would block, /dev/urandom never end
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	k := &kallsyms{}
	sc := bufio.NewScanner(fd)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || (fields[1] != "t" && fields[1] != "T") {
			continue
		}
		addr, err := strconv.ParseUint(fields[0], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		k.addrs = append(k.addrs, addr)
		k.names = append(k.names, fields[2])
	}
	idx := make([]int, len(k.addrs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(k.addrs[a], k.addrs[b]) })
	addrs, names := make([]uint64, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		addrs[i], names[i] = k.addrs[j], k.names[j]
	}
	k.addrs, k.names = addrs, names
	return k, sc.Err()
}
