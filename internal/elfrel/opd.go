package elfrel

import "debug/elf"

// opdEntrySize is the size of a 64-bit PowerPC ELFv1 function descriptor:
// the function's entry point, its TOC pointer and an environment pointer.
const opdEntrySize = 24

// FunctionDescriptors returns, for a 64-bit PowerPC file of the ELFv1 ABI
// (big-endian ppc64's default), the code address of each function
// descriptor in its .opd section, by the descriptor's address: under
// ELFv1 a function's symbol names its descriptor, not its code. It
// returns nil for a file without .opd (ELFv2, other machines). In a
// relocatable object (a JIT object) a descriptor's entry point is the
// R_PPC64_ADDR64 relocation at its start, resolved to the load address of
// its symbol's section; in an executable or shared library it is the
// descriptor's first doubleword. A descriptor whose entry point cannot be
// read is left out; a malformed .opd or relocation section is an error.
func (f *File) FunctionDescriptors() (map[uint64]uint64, error) {
	k := f.Section(".opd")
	if f.Machine != elf.EM_PPC64 || k < 0 {
		return nil, nil
	}
	opd := &f.Sections[k]
	if opd.Type == elf.SHT_NOBITS {
		return nil, nil // stripped into a separate debug file
	}
	data, err := f.SectionData(k)
	if err != nil {
		return nil, err
	}
	entries := make(map[uint64]uint64, len(data)/opdEntrySize)
	if f.Type != elf.ET_REL {
		for off := 0; off+opdEntrySize <= len(data); off += opdEntrySize {
			entries[opd.Addr+uint64(off)] = f.ByteOrder.Uint64(data[off:])
		}
		return entries, nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(f.Sections); i++ {
		rs := &f.Sections[i]
		if rs.Type != elf.SHT_RELA || int(rs.Info) != k {
			continue
		}
		if rs.Entsize != f.lay.rela || rs.Size%f.lay.rela != 0 {
			return nil, f.formatErr(rs.Name, -1, "entry size %d and size %d, want entries of %d bytes", rs.Entsize, rs.Size, f.lay.rela)
		}
		rel, err := f.SectionData(i)
		if err != nil {
			return nil, err
		}
		for off := 0; off+24 <= len(rel); off += 24 {
			where, info, addend := f.ByteOrder.Uint64(rel[off:]), f.ByteOrder.Uint64(rel[off+8:]), f.ByteOrder.Uint64(rel[off+16:])
			if elf.R_PPC64(uint32(info)) != elf.R_PPC64_ADDR64 || where%opdEntrySize != 0 || where >= uint64(len(data)) {
				continue // the TOC pointer's, or not at a descriptor's start
			}
			sym := info >> 32
			if sym == 0 || sym >= uint64(len(syms)) {
				return nil, f.formatErr(rs.Name, int64(off), "relocation symbol index %d out of range (%d symbols)", sym, len(syms))
			}
			entries[opd.Addr+where] = f.SymbolAddr(&syms[sym]) + addend
		}
	}
	if len(entries) == 0 && len(data) >= opdEntrySize {
		return nil, f.formatErr(opd.Name, -1, "no relocation gives a function descriptor its entry point")
	}
	return entries, nil
}
