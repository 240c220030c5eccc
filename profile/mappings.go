package profile

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// legacyMappings builds the mappings of a legacy profile from its memory
// map, the way upstream pprof does with two of its heuristics left out.
//
// Kept from upstream: only executable regions become mappings; adjacent
// pieces of one file whose offsets continue are merged into one mapping;
// the first file that is not a shared library nor a [pseudo] file is
// moved to the front as the main binary; a leading /anon_hugepage region
// followed by an adjacent one is dropped; a main binary mapped at
// 0x400000 plus its offset is moved down to 0x400000.
//
// Left out: (1) the merge of a region into its neighbour when one of the
// two has no file name. An anonymous executable region is where JIT code
// lives; merged into the shared library above it, it gave JIT addresses
// that library's name and moved the library's Start, and so its base.
// Anonymous regions are merged only with each other. (2) Stretching a
// mapping with a non-zero offset down over an address below it that no
// mapping holds; such addresses get the catch-all mapping instead, as
// any other unmapped address does.
func legacyMappings(memoryMap []byte) ([]*profile.Mapping, error) {
	raw, err := parseProcMaps(memoryMap)
	if err != nil {
		return nil, err
	}
	var ms []*profile.Mapping
	for _, m := range raw {
		if n := len(ms); n > 0 && samePieces(ms[n-1], m) {
			last := ms[n-1]
			last.Limit = m.Limit
			if m.BuildID != "" {
				last.BuildID = m.BuildID
			}
			continue
		}
		ms = append(ms, m)
	}

	// The main binary first.
	for i, m := range ms {
		file := strings.TrimSpace(strings.ReplaceAll(m.File, "(deleted)", ""))
		if file == "" || sharedLibRx.MatchString(file) || file[0] == '[' {
			continue
		}
		ms[0], ms[i] = ms[i], ms[0]
		break
	}

	if len(ms) > 1 && strings.HasPrefix(ms[0].File, "/anon_hugepage") && ms[0].Limit == ms[1].Start {
		ms = ms[1:]
	}
	if len(ms) > 0 {
		const expectedStart = 0x400000
		if m := ms[0]; m.Start-m.Offset == expectedStart {
			m.Start, m.Offset = expectedStart, 0
		}
	}
	return ms, nil
}

// sharedLibRx matches file names of shared libraries: "libc.so",
// "libstdc++.so.6.0.30".
var sharedLibRx = regexp.MustCompile(`[.]so$|[.]so[._][0-9]+`)

// samePieces reports whether m2 continues m1: two adjacent pieces of one
// file (same name, compatible build IDs, file offsets that continue
// across the boundary when both are known), or two adjacent anonymous
// regions. A named file and an anonymous region are never pieces of one
// mapping.
func samePieces(m1, m2 *profile.Mapping) bool {
	if m1.File != m2.File {
		return false
	}
	if m1.BuildID != "" && m2.BuildID != "" && m1.BuildID != m2.BuildID {
		return false
	}
	if m1.Limit != m2.Start {
		return false
	}
	if m1.Offset != 0 && m2.Offset != 0 && m1.Offset+(m1.Limit-m1.Start) != m2.Offset {
		return false
	}
	return true
}

// mappingIndex finds the mapping holding an address: the first in list
// order, as upstream does. Memory maps do not overlap, so a binary search
// over the mappings sorted by start finds the same one; when they do
// overlap, the index falls back to the linear scan.
type mappingIndex struct {
	list    []*profile.Mapping
	sorted  []*profile.Mapping
	overlap bool
}

func newMappingIndex(list []*profile.Mapping) *mappingIndex {
	x := &mappingIndex{list: list, sorted: slices.Clone(list)}
	slices.SortFunc(x.sorted, func(a, b *profile.Mapping) int { return cmp.Compare(a.Start, b.Start) })
	for i := 1; i < len(x.sorted); i++ {
		if x.sorted[i].Start < x.sorted[i-1].Limit {
			x.overlap = true
		}
	}
	return x
}

func (x *mappingIndex) find(addr uint64) *profile.Mapping {
	if x.overlap {
		for _, m := range x.list {
			if m.Start <= addr && addr < m.Limit {
				return m
			}
		}
		return nil
	}
	i, _ := slices.BinarySearchFunc(x.sorted, addr, func(m *profile.Mapping, a uint64) int {
		if m.Start <= a {
			return -1
		}
		return 1
	})
	if i > 0 && addr < x.sorted[i-1].Limit {
		return x.sorted[i-1]
	}
	return nil
}
