package objtool

import (
	"cmp"
	"debug/elf"
	"fmt"
	"regexp"
	"slices"
	"sort"

	gdriver "github.com/google/pprof/driver"
	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// symbol is a group of ELF symbols at one address, as `nm -n` lists them
// for upstream pprof: the names in name order, the largest size, and
// where the group ends (the next group's address, or the end of its
// section, whichever comes first).
type symbol struct {
	addr, end uint64 // [addr, end)
	size      uint64
	names     []string
}

// symbols returns b's symbol groups, reading them on first use: the
// symbol table of the binary, else of its separate debug file, else the
// functions of a Go binary's own table (gotable.go), else the dynamic
// symbols. Like nm, it lists the defined symbols other than
// section and file symbols; unlike nm on a relocatable JIT object, it
// gives their load addresses, not offsets in their sections, and leaves
// out the symbols that have none. Marker symbols (elfrel.MarkerSymbol:
// mapping symbols, the assembler labels RISC-V objects keep), which nm
// lists, are left out too: they would cut functions short.
func (t *Tool) symbols(b *binFile) ([]symbol, error) {
	b.symsOnce.Do(func() {
		f, each := b.f, b.f.EachSymbol
		var debug *elfrel.File
		switch {
		case f.HasSymbols():
		case f.Type != elf.ET_REL:
			id, _ := f.BuildID()
			if debug = t.debugFile(b.path, f, id); debug != nil && debug.HasSymbols() {
				f, each = debug, debug.EachSymbol
			} else if syms := goSymbols(t.goTable(b)); syms != nil {
				b.syms = syms
				if debug != nil {
					debug.Close()
				}
				return
			} else {
				each = f.EachDynamicSymbol
			}
		}
		// Under 64-bit PowerPC's ELFv1 ABI a function's symbol names
		// its descriptor in .opd: its group is put at the code the
		// descriptor points to, as llvm-symbolizer and objdump do. The
		// binary has the descriptors, where a debug file has none.
		opd, err := b.f.FunctionDescriptors()
		if err != nil {
			t.sayOnce("opd "+b.path, fmt.Sprintf("%v; its functions' symbols name their descriptors, not their code", err))
		}
		b.syms, b.symsErr = readSymbols(f, each, opd)
		if debug != nil {
			debug.Close()
		}
	})
	return b.syms, b.symsErr
}

// readSymbols groups the symbols each lists.
// A function symbol at a key of opd (an ELFv1 function descriptor) is
// put at its code.
func readSymbols(f *elfrel.File, each func(bool, func(int, *elfrel.Symbol) error) error, opd map[uint64]uint64) ([]symbol, error) {
	type entry struct {
		addr, size uint64
		name       string
		sec        int
	}
	var all []entry
	var codeSecs sectionsByAddr
	if opd != nil {
		codeSecs = codeSections(f)
	}
	err := each(true, func(k int, s *elfrel.Symbol) error {
		if k == 0 || s.Shndx == elf.SHN_UNDEF || s.Name == "" {
			return nil
		}
		switch s.Type() {
		case elf.STT_SECTION, elf.STT_FILE:
			return nil
		}
		if elfrel.MarkerSymbol(f.Machine, s.Name) {
			return nil
		}
		if f.Type == elf.ET_REL && s.Section > 0 && s.Section < len(f.Sections) && f.Sections[s.Section].Flags&elf.SHF_ALLOC == 0 {
			// In a relocatable object, symbols outside the loaded
			// sections (.Lline_table_start0 in .debug_line) have no
			// address.
			return nil
		}
		addr, sec := f.CodeAddr(s), s.Section
		if code, ok := opd[addr]; ok && (s.Type() == elf.STT_FUNC || s.Type() == elf.STT_GNU_IFUNC) {
			addr, sec = code, codeSecs.at(code)
		}
		// The name is a part of the string table, which stays in memory
		// once: a copy per symbol would take it as many times as symbols
		// name the same bytes (1,000,000 naming one string of 4 KiB).
		all = append(all, entry{addr: addr, size: s.Size, name: s.Name, sec: sec})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.addr, b.addr), cmp.Compare(a.name, b.name))
	})
	var out []symbol
	for i := 0; i < len(all); {
		j := i
		g := symbol{addr: all[i].addr, end: ^uint64(0)}
		for ; j < len(all) && all[j].addr == g.addr; j++ {
			if k := len(g.names); k == 0 || g.names[k-1] != all[j].name {
				g.names = append(g.names, all[j].name)
			}
			g.size = max(g.size, all[j].size)
		}
		if j < len(all) {
			g.end = all[j].addr
		}
		if sec := all[i].sec; sec > 0 && sec < len(f.Sections) {
			s := &f.Sections[sec]
			if secEnd := s.Addr + s.Size; s.Flags&elf.SHF_ALLOC != 0 && secEnd > g.addr && secEnd < g.end {
				g.end = secEnd
			}
		}
		out = append(out, g)
		i = j
	}
	return out, nil
}

// sectionsByAddr lists the loaded, executable sections of a file by
// address: their indexes, sorted by start.
type sectionsByAddr struct {
	f   *elfrel.File
	idx []int
}

// codeSections returns f's code sections by address.
func codeSections(f *elfrel.File) sectionsByAddr {
	c := sectionsByAddr{f: f}
	for i := 1; i < len(f.Sections); i++ {
		if s := &f.Sections[i]; s.Flags&(elf.SHF_ALLOC|elf.SHF_EXECINSTR) == elf.SHF_ALLOC|elf.SHF_EXECINSTR && s.Size > 0 {
			c.idx = append(c.idx, i)
		}
	}
	slices.SortFunc(c.idx, func(a, b int) int { return cmp.Compare(f.Sections[a].Addr, f.Sections[b].Addr) })
	return c
}

// at returns the index of the code section holding addr, or 0.
func (c sectionsByAddr) at(addr uint64) int {
	j := sort.Search(len(c.idx), func(j int) bool { return c.f.Sections[c.idx[j]].Addr > addr }) - 1
	if j < 0 {
		return 0
	}
	if s := &c.f.Sections[c.idx[j]]; addr-s.Addr < s.Size {
		return c.idx[j]
	}
	return 0
}

// lookupSymbol returns the group holding x, or nil.
func lookupSymbol(syms []symbol, x uint64) *symbol {
	i := sort.Search(len(syms), func(i int) bool { return syms[i].addr > x }) - 1
	if i < 0 || x >= syms[i].end {
		return nil
	}
	return &syms[i]
}

// findSymbols returns the groups that match r or hold address, as
// upstream pprof's findSymbols does with nm's output (it follows that
// function's logic): a group holding address gives all its names, one
// matching r the first name that matches, demangled if only the
// demangled form does. A group ends where the next begins, or at the end
// of its section. Unlike upstream's, Sym.End is that end, one past the
// last byte: pprof's code views keep a sample if it is below End, so an
// End on the last byte (as upstream's nm-based lister gives) loses the
// samples of a function's last byte (a ret, often); Disasm takes an end
// on such a boundary as exclusive.
func findSymbols(syms []symbol, file string, r *regexp.Regexp, address uint64) []*gdriver.Sym {
	var out []*gdriver.Sym
	for i := range syms {
		s := &syms[i]
		if match := matchSymbol(s.names, s.addr, s.end-1, r, address); match != nil {
			out = append(out, &gdriver.Sym{Name: match, File: file, Start: s.addr, End: s.end})
		}
	}
	return out
}

// matchSymbol follows upstream pprof's function of the same name.
func matchSymbol(names []string, start, end uint64, r *regexp.Regexp, address uint64) []string {
	if address != 0 && address >= start && address <= end {
		return names
	}
	for _, name := range names {
		if r == nil || r.MatchString(name) {
			return []string{name}
		}
		for _, o := range [][]demangle.Option{
			{demangle.NoClones},
			{demangle.NoParams, demangle.NoEnclosingParams},
			{demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams},
		} {
			if demangled, err := demangle.ToString(name, o...); err == nil && r.MatchString(demangled) {
				return []string{demangled}
			}
		}
	}
	return nil
}
