package objtool

import (
	"debug/elf"
	"debug/pe"
	"encoding/binary"
	"fmt"
	"os"
	"strings"

	"github.com/jitpprof/pprof/internal/jitsym"
)

// openPE reads the PE file fd of size bytes at path, its tables checked
// first (see checkPE).
func openPE(path string, fd *os.File, size uint64) (*foreignBin, error) {
	if err := checkPE(fd, size); err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	f, err := pe.NewFile(fd)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s: %w", path, err)
	}
	b := &foreignBin{path: path, format: "PE", closer: fd, bo: binary.LittleEndian, dwarf: map[string]rawSection{}}
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		b.imageBase = uint64(h.ImageBase)
	case *pe.OptionalHeader64:
		b.imageBase = h.ImageBase
	default:
		return nil, fmt.Errorf("unknown OptionalHeader %T in %s", f.OptionalHeader, path)
	}
	switch f.Machine {
	case pe.IMAGE_FILE_MACHINE_AMD64:
		b.machine = elf.EM_X86_64
	case pe.IMAGE_FILE_MACHINE_I386:
		b.machine = elf.EM_386
	case pe.IMAGE_FILE_MACHINE_ARM64:
		b.machine = elf.EM_AARCH64
	}
	for _, s := range f.Sections {
		// The raw size is rounded up to the file alignment; what is
		// loaded is VirtualSize bytes (debug/pe's DWARF trims so too).
		size := uint64(s.Size)
		if s.VirtualSize > 0 && s.VirtualSize < s.Size {
			size = uint64(s.VirtualSize)
		}
		rs := stdSection(s.Name, b.imageBase+uint64(s.VirtualAddress), size, s)
		if s.Offset == 0 {
			rs.fileSize = 0 // no bytes in the file (debug/pe reads zeros)
		}
		if strings.HasPrefix(s.Name, ".debug_") {
			if _, dup := b.dwarf[s.Name]; !dup {
				b.dwarf[s.Name] = rs
			}
			continue
		}
		if s.Characteristics&pe.IMAGE_SCN_CNT_CODE != 0 {
			b.code = append(b.code, rs)
		}
	}
	var bounds []uint64 // for sizeSymbols
	for i := 0; i < len(f.COFFSymbols); i++ {
		s := &f.COFFSymbols[i]
		i += int(s.NumberOfAuxSymbols)
		if s.SectionNumber <= 0 || int(s.SectionNumber) > len(f.Sections) {
			continue
		}
		// Section definitions (a static symbol with an auxiliary record
		// and no type) and file records are not symbols of code or data.
		sec := f.Sections[s.SectionNumber-1]
		addr := b.imageBase + uint64(sec.VirtualAddress) + uint64(s.Value)
		bounds = append(bounds, addr)
		const classStatic, classFile = 3, 103
		if s.StorageClass == classFile || (s.StorageClass == classStatic && s.NumberOfAuxSymbols > 0 && s.Type == 0) {
			continue
		}
		name, err := s.FullName(f.StringTable)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: symbol %d: %w", path, i, err)
		}
		b.syms = append(b.syms, jitsym.Sym{Name: name, Addr: addr})
	}
	for _, s := range f.Sections {
		// LLVM's COFF section size: the smaller of the two.
		bounds = append(bounds, b.imageBase+uint64(s.VirtualAddress)+uint64(min(s.VirtualSize, s.Size)))
	}
	sizeSymbols(b.syms, bounds)
	b.sortCode()
	if err := checkOverlap(path, b.dwarf, size); err != nil {
		return nil, err
	}
	return b, nil
}
