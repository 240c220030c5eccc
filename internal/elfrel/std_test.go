package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/hostile"
)

// TestCheckStd: a file whose section names all point at one long string
// is refused before debug/elf copies the string once per section; real
// files and small ones pass.
func TestCheckStd(t *testing.T) {
	real, err := os.ReadFile("../../testdata/mcjit/golden/bin/libleaf.so")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{name: "a shared library", data: real},
		{name: "ELF32, 10 sections of one 1,000-byte name", data: hostile.ELFSectionNames(elf.ELFCLASS32, 10, 1000)},
		{name: "ELF32, 3,000 sections of one 100 KB name", data: hostile.ELFSectionNames(elf.ELFCLASS32, 3000, 100000),
			want: "its sections' names, one copy per reference, add up to more than"},
		{name: "ELF64, 3,000 sections of one 100 KB name", data: hostile.ELFSectionNames(elf.ELFCLASS64, 3000, 100000),
			want: "its sections' names, one copy per reference, add up to more than"},
		{name: "not ELF", data: []byte("MZ")},
	} {
		err := CheckStd(bytes.NewReader(tc.data), uint64(len(tc.data)))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestUnzstdNames: a Zstandard section is decompressed through
// debug/elf, which copies every section's name: in a file whose section
// names all point at one long string, it is refused, not opened.
func TestUnzstdNames(t *testing.T) {
	le := binary.LittleEndian
	chdr := le.AppendUint32(le.AppendUint32(nil, uint32(elf.COMPRESS_ZSTD)), 0)
	chdr = le.AppendUint64(le.AppendUint64(chdr, 4096), 1)
	f := hostile.ELF{Class: elf.ELFCLASS64, Type: elf.ET_EXEC, Machine: elf.EM_X86_64, TextAlign: 16, Sections: []hostile.ELFSection{
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Data: append(chdr, hostile.ZstdZeros(4096)...)},
		{Name: strings.Repeat("n", 100000), Type: elf.SHT_PROGBITS},
	}}
	for range 3000 {
		f.Sections = append(f.Sections, hostile.ELFSection{Type: elf.SHT_PROGBITS, NameAlias: 3, Alias: 3})
	}
	data := f.Bytes()
	ef, err := NewFile(bytes.NewReader(data), int64(len(data)), "x")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ef.DebugLoader()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Section(".debug_info"); err == nil || !strings.Contains(err.Error(), "its section names add up to") {
		t.Errorf("got %v, want the section names refused", err)
	}
}
