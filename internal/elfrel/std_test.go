package elfrel

import (
	"bytes"
	"debug/elf"
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
