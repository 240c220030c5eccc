package objtool

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// pltEntry is one stub of an x86-64 executable's procedure linkage
// table, named as objdump names it ("printf@plt"): calls into shared
// libraries go through them, and objdump shows their targets so (the
// symbol tables have no names for them).
type pltEntry struct {
	addr, size uint64
	name       string
}

// maxPLTEntries bounds the relocations and stubs read from a file's
// .rela.plt and PLT: more than any real program has, far fewer than a
// hostile size field could claim.
const maxPLTEntries = 1 << 20

// pltEntries returns the PLT stubs of the x86-64 ELF executable or shared
// library f, in address order, named as objdump's synthetic symbols name
// them. Each stub jumps through a GOT slot ("jmp *disp(%rip)", after an
// endbr64 and a bnd prefix or not): the 16-byte stubs of .plt.sec (with
// indirect branch tracking) or else of .plt after its 16-byte PLT0, whose
// slots .rela.plt's relocations fill, and those of .plt.got (8 bytes, or
// its sh_entsize), whose slots .rela.dyn's fill. The relocation of the
// slot names the stub: its dynamic symbol, or "*ABS*+0xaddend" (an
// ifunc's IRELATIVE relocation), demangled as upstream's objdump
// --demangle shows it, and "@plt". nil for other files, or a PLT that
// cannot be read.
func pltEntries(f *elfrel.File) []pltEntry {
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 || f.Type == elf.ET_REL {
		return nil
	}
	// The relocations by the GOT slot they fill.
	type reloc struct {
		sym    int
		addend uint64
	}
	bySlot := map[uint64]reloc{}
	names := map[int]string{}
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		i := f.Section(name)
		if i < 0 || f.Sections[i].Type != elf.SHT_RELA {
			continue
		}
		rs := &f.Sections[i]
		n := rs.Size / 24
		if n > maxPLTEntries {
			return nil
		}
		data := make([]byte, n*24)
		if f.ReadAt(data, rs.Offset) != nil {
			return nil
		}
		for k := uint64(0); k < n; k++ {
			r := data[k*24:]
			sym := int(f.ByteOrder.Uint64(r[8:]) >> 32)
			bySlot[f.ByteOrder.Uint64(r)] = reloc{sym, f.ByteOrder.Uint64(r[16:])}
			names[sym] = ""
		}
	}
	if len(bySlot) == 0 {
		return nil
	}
	_ = f.EachDynamicSymbol(true, func(k int, s *elfrel.Symbol) error {
		if _, ok := names[k]; ok {
			names[k] = s.Name
		}
		return nil
	})
	stubs := []struct {
		section     string
		first, size uint64
	}{{".plt.sec", 0, 16}, {".plt", 16, 16}, {".plt.got", 0, 8}}
	if f.Section(".plt.sec") >= 0 {
		stubs = append(stubs[:1], stubs[2]) // .plt then holds only the lazy-binding stubs
	}
	var out []pltEntry
	for _, st := range stubs {
		i := f.Section(st.section)
		if i < 0 || f.Sections[i].Type != elf.SHT_PROGBITS || f.Sections[i].Size > 16*maxPLTEntries {
			continue
		}
		ps := &f.Sections[i]
		size := st.size
		if st.section == ".plt.got" && (ps.Entsize == 8 || ps.Entsize == 16) {
			size = ps.Entsize
		}
		code := make([]byte, ps.Size)
		if f.ReadAt(code, ps.Offset) != nil {
			continue
		}
		for off := st.first; off+size <= uint64(len(code)); off += size {
			stub := code[off : off+size]
			for j := 0; j+6 <= len(stub); j++ {
				if stub[j] != 0xff || stub[j+1] != 0x25 {
					continue
				}
				// jmp *disp32(%rip): the slot is the next instruction's
				// address plus disp.
				slot := ps.Addr + off + uint64(j) + 6 + uint64(int64(int32(f.ByteOrder.Uint32(stub[j+2:]))))
				r, ok := bySlot[slot]
				if !ok {
					break
				}
				name := names[r.sym]
				if r.sym == 0 || name == "" {
					name = fmt.Sprintf("*ABS*+%#x", r.addend)
				}
				out = append(out, pltEntry{addr: ps.Addr + off, size: size, name: demangle.Filter(name) + "@plt"})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// pltNamer returns next's Symbolizer with the stubs of entries named
// first: a branch to a stub reads "call 1050 <strtol@plt>", as objdump
// prints it.
func pltNamer(entries []pltEntry, next disasm.Symbolizer) disasm.Symbolizer {
	if len(entries) == 0 {
		return next
	}
	return func(addr uint64) (string, uint64, bool) {
		i := sort.Search(len(entries), func(i int) bool { return entries[i].addr > addr }) - 1
		if i >= 0 && addr-entries[i].addr < entries[i].size {
			return entries[i].name, entries[i].addr, true
		}
		return next(addr)
	}
}
