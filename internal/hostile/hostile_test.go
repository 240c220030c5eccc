package hostile

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"io"
	"testing"
)

// TestStdlibReads checks that the standard library takes the files for
// what they claim to be, with small parameters: the hostility is in the
// sizes, not in broken headers.
func TestStdlibReads(t *testing.T) {
	for _, c := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		for _, zstd := range []bool{false, true} {
			f, err := elf.NewFile(bytes.NewReader(ELFCompressed(c, elf.EM_386, 1<<20, zstd, 2)))
			if err != nil {
				t.Fatalf("ELFCompressed(%v, zstd %v): %v", c, zstd, err)
			}
			for _, name := range []string{".debug_info", ".debug_abbrev", ".debug_line"} {
				s := f.Section(name)
				if s == nil {
					t.Fatalf("ELFCompressed(%v): no %s", c, name)
				}
				n, err := io.Copy(io.Discard, s.Open())
				if err != nil || n < 1<<20-258 || n > 1<<20 {
					t.Errorf("ELFCompressed(%v, zstd %v) %s: %d bytes, %v", c, zstd, name, n, err)
				}
			}
		}
		f, err := elf.NewFile(bytes.NewReader(ELFSymbols(c, 100, 1000, false)))
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		if err != nil || len(syms) != 100 || len(syms[99].Name) != 1000 {
			t.Errorf("ELFSymbols(%v, false): %d symbols, %v", c, len(syms), err)
		}
		f, err = elf.NewFile(bytes.NewReader(ELFSectionNames(c, 100, 1000)))
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Sections) != 103 || len(f.Sections[101].Name) != 1000 {
			t.Errorf("ELFSectionNames(%v): %d sections", c, len(f.Sections))
		}
	}

	m, err := macho.NewFile(bytes.NewReader(MachO{Sections: 10, Relocs: 100, Symbols: 50, NameLen: 300, UUID: make([]byte, 16)}.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sections) != 11 || len(m.Sections[10].Relocs) != 100 || len(m.Symtab.Syms) != 50 || len(m.Symtab.Syms[0].Name) != 300 {
		t.Errorf("MachO: %d sections, %d symbols", len(m.Sections), len(m.Symtab.Syms))
	}
	ff, err := macho.NewFatFile(bytes.NewReader(MachOFat(MachO{Symbols: 3}.Bytes(), 5)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ff.Arches) != 5 {
		t.Errorf("MachOFat: %d members", len(ff.Arches))
	}

	p, err := pe.NewFile(bytes.NewReader(PE{Sections: 10, Relocs: 100, Symbols: 20, NameLen: 300}.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sections) != 11 || len(p.Sections[10].Relocs) != 100 || len(p.Symbols) != 20 || len(p.Symbols[0].Name) != 300 {
		t.Errorf("PE: %d sections, %d symbols", len(p.Sections), len(p.Symbols))
	}
}
