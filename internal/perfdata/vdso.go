package perfdata

import (
	"cmp"
	"debug/elf"
	"slices"

	"github.com/jitpprof/pprof/internal/cfi"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// vdsoNamer names the functions of the vDSO, the code the kernel maps
// into every process (clock_gettime, gettimeofday, ...): no symbolizer
// can open "[vdso]", but perf record keeps a copy of it in its build-ID
// cache. Names come from its symbol tables.
type vdsoNamer struct {
	finder *fileFinder
	tables map[string]*funcTable // by fileFinder.key; nil: none
}

// A funcTable is the function symbols of a file, sorted by address.
type funcTable struct {
	progs []elf.ProgHeader
	syms  []funcSym
}

type funcSym struct {
	addr, size uint64
	name       string
	global     bool
}

// name returns the function of the vDSO mapping mm at runtime address
// addr, "" if it is not known.
func (v *vdsoNamer) name(mm *mmapping, addr uint64) string {
	key := v.finder.key(mm)
	t, ok := v.tables[key]
	if !ok {
		if ef, err := v.finder.open(mm); err == nil {
			t = readFuncTable(ef)
			ef.Close()
		}
		v.tables[key] = t
	}
	if t == nil {
		return ""
	}
	bias, ok := cfi.LoadBias(t.progs, mm.start, mm.offset, addr)
	if !ok {
		return ""
	}
	a := addr - bias
	i, _ := slices.BinarySearchFunc(t.syms, a+1, func(s funcSym, x uint64) int { return cmp.Compare(s.addr, x) })
	if i == 0 {
		return ""
	}
	if s := t.syms[i-1]; a-s.addr < max(s.size, 1) {
		return s.name
	}
	return ""
}

// readFuncTable reads the function symbols of ef (dynamic and static);
// of several at one address, the first global one (the vDSO's
// __vdso_clock_gettime, not its weak alias clock_gettime, as perf
// names it).
func readFuncTable(ef *elfrel.File) *funcTable {
	t := &funcTable{progs: ef.Progs}
	add := func(_ int, s *elfrel.Symbol) error {
		if s.Type() == elf.STT_FUNC && s.Name != "" && s.Section != 0 {
			t.syms = append(t.syms, funcSym{addr: s.Value, size: s.Size, name: s.Name, global: s.Bind() == elf.STB_GLOBAL})
		}
		return nil
	}
	if ef.EachDynamicSymbol(true, add) != nil || ef.EachSymbol(true, add) != nil {
		return nil
	}
	slices.SortStableFunc(t.syms, func(a, b funcSym) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		switch {
		case a.global && !b.global:
			return -1
		case b.global && !a.global:
			return 1
		}
		return 0
	})
	t.syms = slices.CompactFunc(t.syms, func(a, b funcSym) bool { return a.addr == b.addr })
	if len(t.syms) == 0 {
		return nil
	}
	return t
}
