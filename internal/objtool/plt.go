package objtool

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// pltEntry is one stub of an x86-64 or AArch64 executable's procedure
// linkage table, named as objdump names it ("printf@plt"): calls into shared
// libraries go through them, and objdump shows their targets so (the
// symbol tables have no names for them).
type pltEntry struct {
	addr, size uint64
	name       string
}

// maxPLTEntries bounds the stubs read from a file's PLT: more than any
// real program has, far fewer than a hostile size field could claim.
const maxPLTEntries = 1 << 20

// pltEntries returns the PLT stubs of the x86-64 or AArch64 ELF
// executable or shared library f, in address order, named as objdump's
// synthetic symbols name them. Each stub jumps through a GOT slot
// (x86Slot, arm64Slot): on x86-64 the 16-byte stubs of .plt.sec (with
// indirect branch tracking) or else of .plt after its 16-byte PLT0, whose
// slots .rela.plt's relocations fill, and those of .plt.got (8 bytes, or
// its sh_entsize), whose slots .rela.dyn's fill; on AArch64 the 16-byte
// stubs of .plt after its 32-byte PLT0. The relocation of the
// slot names the stub: its dynamic symbol, or "*ABS*+0xaddend" (an
// ifunc's IRELATIVE relocation), demangled as upstream's objdump
// --demangle shows it, and "@plt". nil for other files, or a PLT that
// cannot be read.
func pltEntries(f *elfrel.File) []pltEntry {
	if f.Class != elf.ELFCLASS64 || f.Type == elf.ET_REL || f.Machine != elf.EM_X86_64 && f.Machine != elf.EM_AARCH64 {
		return nil
	}
	// The relocations by the GOT slot they fill.
	type reloc struct {
		sym    int
		addend uint64
	}
	bySlot := map[uint64]reloc{}
	names := map[int]string{}
	var chunk [4096 * 24]byte
	for _, name := range []string{".rela.plt", ".rela.dyn"} {
		i := f.Section(name)
		if i < 0 || f.Sections[i].Type != elf.SHT_RELA {
			continue
		}
		// Read a chunk at a time: a PIE's .rela.dyn holds a relative
		// relocation for every pointer in its data, none of them a
		// slot's, so only the slot kinds are kept.
		rs := &f.Sections[i]
		for off := uint64(0); off+24 <= rs.Size; off += uint64(len(chunk)) {
			data := chunk[:min(uint64(len(chunk)), rs.Size-off)/24*24]
			if f.ReadAt(data, rs.Offset+off) != nil {
				return nil
			}
			for k := 0; k+24 <= len(data); k += 24 {
				r := data[k:]
				info := f.ByteOrder.Uint64(r[8:])
				if !pltReloc(f.Machine, uint32(info)) {
					continue
				}
				sym := int(info >> 32)
				bySlot[f.ByteOrder.Uint64(r)] = reloc{sym, f.ByteOrder.Uint64(r[16:])}
				names[sym] = ""
			}
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
	// The sections of stubs: where the first starts, and their size.
	type stubSection struct {
		name        string
		first, size uint64
	}
	stubs, slotOf := []stubSection{{".plt", 16, 16}, {".plt.got", 0, 8}}, x86Slot
	switch {
	case f.Machine == elf.EM_AARCH64:
		stubs, slotOf = []stubSection{{".plt", 32, 16}}, arm64Slot // PLT0 is eight instructions
	case f.Section(".plt.sec") >= 0:
		stubs[0] = stubSection{".plt.sec", 0, 16} // .plt then holds only the lazy-binding stubs
	}
	var out []pltEntry
	for _, st := range stubs {
		i := f.Section(st.name)
		if i < 0 || f.Sections[i].Type != elf.SHT_PROGBITS || f.Sections[i].Size > 16*maxPLTEntries {
			continue
		}
		ps := &f.Sections[i]
		size := st.size
		if st.name == ".plt.got" && (ps.Entsize == 8 || ps.Entsize == 16) {
			size = ps.Entsize
		}
		code := make([]byte, ps.Size)
		if f.ReadAt(code, ps.Offset) != nil {
			continue
		}
		for off := st.first; off+size <= uint64(len(code)); off += size {
			slot, ok := slotOf(code[off:off+size], ps.Addr+off, f.ByteOrder)
			if !ok {
				continue
			}
			r, ok := bySlot[slot]
			if !ok {
				continue
			}
			name := names[r.sym]
			if r.sym == 0 || name == "" {
				name = fmt.Sprintf("*ABS*+%#x", r.addend)
			}
			out = append(out, pltEntry{addr: ps.Addr + off, size: size, name: demangle.Filter(name) + "@plt"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// pltReloc reports whether a relocation of type typ, of machine m, fills
// a GOT slot a PLT stub jumps through: a jump slot, a global data slot
// (.plt.got's), or an ifunc's.
func pltReloc(m elf.Machine, typ uint32) bool {
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(typ) {
		case elf.R_X86_64_JMP_SLOT, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_IRELATIVE:
			return true
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(typ) {
		case elf.R_AARCH64_JUMP_SLOT, elf.R_AARCH64_GLOB_DAT, elf.R_AARCH64_IRELATIVE:
			return true
		}
	}
	return false
}

// x86Slot returns the GOT slot an x86-64 PLT stub at addr jumps through:
// its "jmp *disp32(%rip)" (ff 25, after an endbr64 and a bnd prefix or
// not) reads the slot at the next instruction's address plus disp.
func x86Slot(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
	for j := 0; j+6 <= len(stub); j++ {
		if stub[j] == 0xff && stub[j+1] == 0x25 {
			return addr + uint64(j) + 6 + uint64(int64(int32(bo.Uint32(stub[j+2:])))), true
		}
	}
	return 0, false
}

// arm64Slot returns the GOT slot an AArch64 PLT stub at addr loads its
// target from: "adrp x16, page; ldr x17, [x16, #off]" (after a bti c or
// not) reads the slot at page + off.
func arm64Slot(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
	for j := 0; j+8 <= len(stub); j += 4 {
		adrp, ldr := bo.Uint32(stub[j:]), bo.Uint32(stub[j+4:])
		if adrp&0x9f00001f != 0x90000010 || ldr&0xffc003ff != 0xf9400211 {
			continue // not adrp x16 followed by ldr x17, [x16, #imm]
		}
		imm21 := (adrp>>5&0x7ffff)<<2 | adrp>>29&3 // immhi:immlo
		page := uint64(int64((addr+uint64(j))&^0xfff) + int64(int32(imm21<<11)>>11)<<12)
		return page + uint64(ldr>>10&0xfff)*8, true
	}
	return 0, false
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
