package jitsnap

import "github.com/jitpprof/pprof/internal/procfs"

// Mapping is a line of /proc/PID/maps, as package procfs reads it
// ([procfs.ParseMaps]).
type Mapping = procfs.Mapping

// deletedSuffix is what the kernel appends to the path of a file that
// was deleted or replaced after it was mapped.
const deletedSuffix = " (deleted)"

// regionContaining returns the readable range of addresses, built from
// adjacent readable mappings, that holds all of [addr, addr+size), and
// whether there is one. The kernel splits one allocation over several
// mappings when parts of it differ in protection or origin.
func regionContaining(maps []Mapping, addr, size uint64) (lo, hi uint64, ok bool) {
	if size > ^uint64(0)-addr {
		return 0, 0, false
	}
	end := addr + size
	for i, m := range maps {
		if !m.Readable() || addr < m.Start || addr >= m.Limit {
			continue
		}
		lo, hi = m.Start, m.Limit
		for j := i + 1; hi < end && j < len(maps) && maps[j].Start == hi && maps[j].Readable(); j++ {
			hi = maps[j].Limit
		}
		return lo, hi, end <= hi
	}
	return 0, 0, false
}
