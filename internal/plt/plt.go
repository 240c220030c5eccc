// Package plt names the stubs of an ELF executable's or shared library's
// procedure linkage table as GNU objdump names them, with its synthetic
// "name@plt" symbols: calls into shared libraries go through the stubs,
// and no symbol table names them. It reads x86-64, 386, AArch64, RISC-V
// (64-bit), s390x and 32-bit ARM files, whichever package read their
// headers (elfrel or debug/elf).
package plt

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/jitpprof/pprof/internal/elfrel"
)

// An Entry is one stub of a procedure linkage table. objdump names it
// Symbol+"@plt" ("printf@plt"), with Symbol demangled if asked to
// (--demangle).
type Entry struct {
	Addr, Size uint64 // where the stub starts, and its size
	// Symbol is the name of the dynamic symbol the stub's relocation
	// refers to, or "*ABS*+0xaddend" (an ifunc's IRELATIVE relocation;
	// "*ABS*" without an addend).
	Symbol string
}

// maxEntries bounds the stubs read from a file's PLT: more than any
// real program has, far fewer than a hostile size field could claim.
const maxEntries = 1 << 20

// An Image is what [Entries] reads of an ELF executable or shared
// library, whichever package read it: elfrel ([FromELFRel]) or debug/elf
// ([FromStd]).
type Image struct {
	class   elf.Class
	machine elf.Machine
	typ     elf.Type
	bo      binary.ByteOrder
	// section returns the first section called name, if there is one.
	section func(name string) (section, bool)
	// dynNames sets names[k], for every k in names, to the name of the
	// dynamic symbol of index k.
	dynNames func(names map[int]string)
}

// A section is a section of an Image.
type section struct {
	typ                 elf.SectionType
	addr, size, entsize uint64
	// readAt reads len(p) bytes of the contents from offset off.
	readAt func(p []byte, off uint64) error
}

// FromELFRel returns the Image of f.
func FromELFRel(f *elfrel.File) Image {
	return Image{
		class: f.Class, machine: f.Machine, typ: f.Type, bo: f.ByteOrder,
		section: func(name string) (section, bool) {
			i := f.Section(name)
			if i < 0 {
				return section{}, false
			}
			s := &f.Sections[i]
			return section{typ: s.Type, addr: s.Addr, size: s.Size, entsize: s.Entsize,
				readAt: func(p []byte, off uint64) error { return f.ReadAt(p, s.Offset+off) }}, true
		},
		dynNames: func(names map[int]string) {
			_ = f.EachDynamicSymbol(true, func(k int, s *elfrel.Symbol) error {
				if _, ok := names[k]; ok {
					names[k] = s.Name
				}
				return nil
			})
		},
	}
}

// FromStd returns the Image of f. Compressed sections are taken as
// absent (no linker compresses a PLT or its relocations).
func FromStd(f *elf.File) Image {
	return Image{
		class: f.Class, machine: f.Machine, typ: f.Type, bo: f.ByteOrder,
		section: func(name string) (section, bool) {
			s := f.Section(name)
			if s == nil || s.Flags&elf.SHF_COMPRESSED != 0 {
				return section{}, false
			}
			return section{typ: s.Type, addr: s.Addr, size: s.Size, entsize: s.Entsize,
				readAt: func(p []byte, off uint64) error {
					if off > s.Size || uint64(len(p)) > s.Size-off {
						return fmt.Errorf("%d bytes at %#x are not within section %s", len(p), off, s.Name)
					}
					_, err := s.ReadAt(p, int64(off))
					return err
				}}, true
		},
		dynNames: func(names map[int]string) {
			syms, _ := f.DynamicSymbols() // without the null symbol: k is at k-1
			for k := range names {
				if k >= 1 && k <= len(syms) {
					names[k] = syms[k-1].Name
				}
			}
		},
	}
}

// Entries returns the PLT stubs of the ELF executable or shared
// library f, in address order, named as objdump's synthetic symbols name
// them: x86-64, 386, AArch64, RISC-V and s390x stubs by the GOT slot
// each jumps through (slotPLT), 32-bit ARM ones by their order (armPLT),
// as objdump finds them on each machine. nil for other files, or a PLT that cannot be
// read.
func Entries(f Image) []Entry {
	if f.typ == elf.ET_REL {
		return nil
	}
	switch {
	case f.class == elf.ELFCLASS64 && (f.machine == elf.EM_X86_64 || f.machine == elf.EM_AARCH64 || f.machine == elf.EM_RISCV || f.machine == elf.EM_S390),
		f.class == elf.ELFCLASS32 && f.machine == elf.EM_386:
		return slotPLT(f)
	case f.class == elf.ELFCLASS32 && f.machine == elf.EM_ARM && f.bo == binary.LittleEndian:
		return armPLT(f)
	}
	return nil
}

// A dynReloc is a dynamic relocation: the address it writes (a GOT
// slot, for those Entries reads), its symbol and its addend (0 for an
// SHT_REL section's, as objdump takes it).
type dynReloc struct {
	slot, addend uint64
	sym          int
}

// dynRelocs returns the relocations of the named SHT_REL or SHT_RELA
// section of f that keep says to keep (given their type), in order, at
// most limit of them; none if it has no such section or it cannot be
// read. The section is read a chunk at a time: a PIE's .rela.dyn holds a
// relative relocation for every pointer in its data, none of them a
// slot's.
func dynRelocs(f Image, name string, limit int, keep func(typ uint32) bool) []dynReloc {
	rs, ok := f.section(name)
	if !ok {
		return nil
	}
	w := uint64(4)
	if f.class == elf.ELFCLASS64 {
		w = 8
	}
	word := func(b []byte) uint64 {
		if w == 8 {
			return f.bo.Uint64(b)
		}
		return uint64(f.bo.Uint32(b))
	}
	ent := 2 * w
	switch rs.typ {
	case elf.SHT_RELA:
		ent += w
	case elf.SHT_REL:
	default:
		return nil
	}
	var out []dynReloc
	var chunk [4096 * 24]byte
	step := uint64(len(chunk)) / ent * ent // whole entries
	for off := uint64(0); off+ent <= rs.size && len(out) < limit; off += step {
		data := chunk[:min(step, rs.size-off)/ent*ent]
		if rs.readAt(data, off) != nil {
			return nil
		}
		for k := uint64(0); k+ent <= uint64(len(data)) && len(out) < limit; k += ent {
			r := data[k:]
			info := word(r[w:])
			sym, typ := int(info>>32), uint32(info)
			if w == 4 {
				sym, typ = int(info>>8), uint32(info&0xff)
			}
			if !keep(typ) {
				continue
			}
			d := dynReloc{slot: word(r), sym: sym}
			if rs.typ == elf.SHT_RELA {
				d.addend = word(r[2*w:])
			}
			out = append(out, d)
		}
	}
	return out
}

// symbolOf returns the Entry.Symbol of a stub whose slot the relocation
// r fills, given the names of the dynamic symbols by index.
func symbolOf(r dynReloc, names map[int]string) string {
	name := names[r.sym]
	if r.sym == 0 || name == "" {
		name = "*ABS*"
		if r.addend != 0 {
			name += fmt.Sprintf("+%#x", r.addend)
		}
	}
	return name
}

// symbolNames returns the names of the dynamic symbols that rs refer
// to, by index.
func symbolNames(f Image, rs []dynReloc) map[int]string {
	names := map[int]string{}
	for _, r := range rs {
		names[r.sym] = ""
	}
	f.dynNames(names)
	return names
}

// slotPLT is Entries for x86-64, 386, AArch64, RISC-V and s390x. Each
// stub jumps through a GOT slot (x86Slot, i386Slot, arm64Slot,
// riscvSlot, s390xSlot): on x86-64 and 386
// the 16-byte stubs of .plt.sec (with indirect branch tracking) or else
// of .plt after its 16-byte PLT0, whose slots .rela.plt's (.rel.plt's)
// relocations fill, and those of .plt.got (8 bytes, or its sh_entsize),
// whose slots .rela.dyn's (.rel.dyn's) fill; on AArch64 and RISC-V the
// 16-byte stubs of .plt after its 32-byte PLT0, on s390x the 32-byte
// ones. The relocation of the slot names
// the stub (symbolOf).
func slotPLT(f Image) []Entry {
	rel := ".rela"
	if f.machine == elf.EM_386 {
		rel = ".rel"
	}
	var rels []dynReloc
	for _, name := range []string{rel + ".plt", rel + ".dyn"} {
		rels = append(rels, dynRelocs(f, name, maxEntries, func(typ uint32) bool { return pltReloc(f.machine, typ) })...)
	}
	if len(rels) == 0 {
		return nil
	}
	bySlot := make(map[uint64]dynReloc, len(rels))
	for _, r := range rels {
		bySlot[r.slot] = r
	}
	names := symbolNames(f, rels)
	// The sections of stubs: where the first starts, and their size.
	type stubSection struct {
		name        string
		first, size uint64
	}
	stubs, slotOf := []stubSection{{".plt", 16, 16}, {".plt.got", 0, 8}}, x86Slot
	if f.machine == elf.EM_386 {
		slotOf = i386Slot(f)
	}
	switch {
	case f.machine == elf.EM_AARCH64:
		stubs, slotOf = []stubSection{{".plt", 32, 16}}, arm64Slot // PLT0 is eight instructions
	case f.machine == elf.EM_RISCV:
		stubs, slotOf = []stubSection{{".plt", 32, 16}}, riscvSlot
	case f.machine == elf.EM_S390:
		stubs, slotOf = []stubSection{{".plt", 32, 32}}, s390xSlot
	default:
		if _, ok := f.section(".plt.sec"); ok {
			stubs[0] = stubSection{".plt.sec", 0, 16} // .plt then holds only the lazy-binding stubs
		}
	}
	var out []Entry
	for _, st := range stubs {
		ps, ok := f.section(st.name)
		if !ok || ps.typ != elf.SHT_PROGBITS || ps.size > 16*maxEntries {
			continue
		}
		size := st.size
		if st.name == ".plt.got" && (ps.entsize == 8 || ps.entsize == 16) {
			size = ps.entsize
		}
		code := make([]byte, ps.size)
		if ps.readAt(code, 0) != nil {
			continue
		}
		for off := st.first; off+size <= uint64(len(code)); off += size {
			slot, ok := slotOf(code[off:off+size], ps.addr+off, f.bo)
			if !ok {
				continue
			}
			if r, ok := bySlot[slot]; ok {
				out = append(out, Entry{Addr: ps.addr + off, Size: size, Symbol: symbolOf(r, names)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

// armPLT is Entries for 32-bit ARM, whose stubs do not say which
// relocation is theirs in a way objdump reads: objdump (BFD's
// elf32_arm_get_synthetic_symtab) names the stubs of .plt after its
// 20-byte PLT0 in the order of .rel.plt's relocations, each one ARM stub
// of three or four instructions (armPLTSize), after a Thumb entry of
// four bytes or not, and stops at the first it does not recognise.
func armPLT(f Image) []Entry {
	ps, ok := f.section(".plt")
	if !ok || ps.typ != elf.SHT_PROGBITS || ps.size < 20 || ps.size > 20*maxEntries {
		return nil
	}
	code := make([]byte, ps.size)
	if ps.readAt(code, 0) != nil || f.bo.Uint32(code) != 0xe52de004 {
		return nil // not PLT0's "str lr, [sp, #-4]!"
	}
	// No more relocations than stubs fit.
	rels := dynRelocs(f, ".rel.plt", int(ps.size-20)/12, func(uint32) bool { return true })
	names := symbolNames(f, rels)
	var out []Entry
	off := uint64(20)
	for _, r := range rels {
		size := armPLTSize(code[off:], f.bo)
		if size == 0 {
			break
		}
		out = append(out, Entry{Addr: ps.addr + off, Size: size, Symbol: symbolOf(r, names)})
		off += size
	}
	return out
}

// armPLTSize returns the size of the ARM PLT stub at the start of code,
// as objdump takes it: a Thumb entry ("bx pc" and a second halfword)
// or not, then "add ip, pc, #0xNN00000" and two instructions more, or
// "add ip, pc, #0xN0000000" and three more. 0 if it is neither, or cut
// short.
func armPLTSize(code []byte, bo binary.ByteOrder) uint64 {
	var size uint64
	if len(code) >= 2 && bo.Uint16(code) == 0x4778 {
		size = 4
	}
	if uint64(len(code)) < size+4 {
		return 0
	}
	switch bo.Uint32(code[size:]) &^ 0xff {
	case 0xe28fc600:
		size += 12
	case 0xe28fc200:
		size += 16
	default:
		return 0
	}
	if uint64(len(code)) < size {
		return 0
	}
	return size
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
	case elf.EM_386:
		switch elf.R_386(typ) {
		case elf.R_386_JMP_SLOT, elf.R_386_GLOB_DAT, elf.R_386_IRELATIVE:
			return true
		}
	case elf.EM_RISCV:
		const irelative = 58 // R_RISCV_IRELATIVE, which debug/elf does not name
		return elf.R_RISCV(typ) == elf.R_RISCV_JUMP_SLOT || typ == irelative
	case elf.EM_S390:
		const irelative = 61 // R_390_IRELATIVE
		return elf.R_390(typ) == elf.R_390_JMP_SLOT || typ == irelative
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

// i386Slot returns the function that gives the GOT slot a 386 PLT stub
// jumps through: "jmp *addr" (ff 25) in a position-dependent executable,
// "jmp *disp(%ebx)" (ff a3) in position-independent code, where %ebx
// holds the address of the GOT (.got.plt's, or .got's if it has none),
// after an endbr32 or not.
func i386Slot(f Image) func(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
	got, ok := f.section(".got.plt")
	if !ok {
		got, _ = f.section(".got")
	}
	return func(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
		for j := 0; j+6 <= len(stub); j++ {
			if stub[j] != 0xff || stub[j+1] != 0x25 && stub[j+1] != 0xa3 {
				continue
			}
			slot := uint64(bo.Uint32(stub[j+2:]))
			if stub[j+1] == 0xa3 {
				slot = uint64(uint32(got.addr + slot))
			}
			return slot, true
		}
		return 0, false
	}
}

// riscvSlot returns the GOT slot a 64-bit RISC-V PLT stub at addr loads
// its target from: "auipc t3, hi; ld t3, lo(t3)" reads the slot at addr
// + hi + lo.
func riscvSlot(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
	if len(stub) < 8 {
		return 0, false
	}
	auipc, ld := bo.Uint32(stub), bo.Uint32(stub[4:])
	if auipc&0xfff != 0xe17 || ld&0xfffff != 0xe3e03 {
		return 0, false // not auipc t3 followed by ld t3, lo(t3)
	}
	return addr + uint64(int64(int32(auipc&0xfffff000))) + uint64(int64(int32(ld)>>20)), true
}

// s390xSlot returns the GOT slot an s390x PLT stub at addr loads its
// target from: "larl %r1, slot" (then lg %r1,0(%r1); br %r1), its offset
// in halfwords.
func s390xSlot(stub []byte, addr uint64, bo binary.ByteOrder) (uint64, bool) {
	if len(stub) < 6 || stub[0] != 0xc0 || stub[1] != 0x10 {
		return 0, false
	}
	return addr + uint64(int64(int32(bo.Uint32(stub[2:])))*2), true
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
