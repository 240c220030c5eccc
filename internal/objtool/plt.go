package objtool

import (
	"sort"

	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/plt"
)

// pltStubs returns the PLT stubs of img, their symbols demangled as
// upstream's objdump --demangle shows them.
func pltStubs(img plt.Image) []plt.Entry {
	stubs := plt.Entries(img)
	for i := range stubs {
		stubs[i].Symbol = demangle.Filter(stubs[i].Symbol)
	}
	return stubs
}

// pltNamer returns next's Symbolizer with the stubs of entries (from
// pltStubs) named first: a branch to a stub reads "call 1050
// <strtol@plt>", as objdump prints it.
func pltNamer(entries []plt.Entry, next disasm.Symbolizer) disasm.Symbolizer {
	if len(entries) == 0 {
		return next
	}
	return func(addr uint64) (string, uint64, bool) {
		i := sort.Search(len(entries), func(i int) bool { return entries[i].Addr > addr }) - 1
		if i >= 0 && addr-entries[i].Addr < entries[i].Size {
			return entries[i].Symbol + "@plt", entries[i].Addr, true
		}
		return next(addr)
	}
}
