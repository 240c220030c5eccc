package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"maps"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestFunctionDescriptors reads the .opd of clang's ELFv1 object for
// big-endian ppc64 and of the executable GNU ld links from it: every
// function's descriptor gives the address where objdump puts the
// function's code (its synthetic ".name" label).
func TestFunctionDescriptors(t *testing.T) {
	for _, file := range testenv.ELFv1Program(t, t.TempDir()) {
		f, err := Open(file.Path)
		if err != nil {
			t.Fatal(err)
		}
		opd, err := f.FunctionDescriptors()
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]uint64{}
		for i := range syms {
			if s := &syms[i]; s.Type() == elf.STT_FUNC {
				code, ok := opd[f.SymbolAddr(s)]
				if !ok {
					t.Errorf("%s: %s at %#x has no descriptor", file.Path, s.Name, f.SymbolAddr(s))
				}
				got[s.Name] = code
			}
		}
		f.Close()
		if !maps.Equal(got, file.Code) {
			t.Errorf("%s: descriptors give %#v, objdump's labels %#v", file.Path, got, file.Code)
		}
	}
}

// TestFunctionDescriptorsMalformed: a broken .opd relocation is an error
// naming the section; a file without .opd has no descriptors.
func TestFunctionDescriptorsMalformed(t *testing.T) {
	bo := binary.BigEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Info: byte(elf.STT_SECTION), Shndx: 1},
		{Name: "f", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 2, Size: 8},
	})
	object := func(relas []byte, entsize uint64) []byte {
		secs := []elftest.Section{
			{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x10000000, Data: make([]byte, 8)},
			{Name: ".opd", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: 0x10001000, Data: make([]byte, 24)},
			{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: symtab, Link: 4, Info: 2, Entsize: elftest.SymSize},
			{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
		}
		if relas != nil {
			secs = append(secs, elftest.Section{Name: ".rela.opd", Type: elf.SHT_RELA, Data: relas, Link: 3, Info: 2, Entsize: entsize})
		}
		return elftest.File{Machine: elf.EM_PPC64, Order: bo, Sections: secs}.Bytes()
	}
	read := func(data []byte) (map[uint64]uint64, error) {
		f, err := NewFile(bytes.NewReader(data), int64(len(data)), "v1.o")
		if err != nil {
			t.Fatal(err)
		}
		return f.FunctionDescriptors()
	}
	good := elftest.RelaData(bo, []elftest.Rela{{Off: 0, Sym: 1, Type: uint32(elf.R_PPC64_ADDR64), Addend: 4}, {Off: 8, Type: uint32(elf.R_PPC64_TOC)}})
	if opd, err := read(object(good, elftest.RelaSize)); err != nil || len(opd) != 1 || opd[0x10001000] != 0x10000004 {
		t.Errorf("good object: %v, %v; want the descriptor at 0x10001000 pointing to 0x10000004", opd, err)
	}
	for _, tt := range []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"no relocations", object(nil, 0), "no relocation gives"},
		{"bad entry size", object(good, 16), "entry size 16"},
		{"symbol out of range", object(elftest.RelaData(bo, []elftest.Rela{{Off: 0, Sym: 9, Type: uint32(elf.R_PPC64_ADDR64)}}), elftest.RelaSize), "symbol index 9 out of range"},
	} {
		_, err := read(tt.data)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "v1.o") {
			t.Errorf("%s: error %v, want one naming v1.o and saying %q", tt.name, err, tt.wantErr)
		}
	}
	x86 := elftest.File{Sections: []elftest.Section{{Name: ".opd", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Data: make([]byte, 24)}}}.Bytes()
	if opd, err := read(x86); opd != nil || err != nil {
		t.Errorf("x86-64 file with a section named .opd: %v, %v; want none", opd, err)
	}
}
