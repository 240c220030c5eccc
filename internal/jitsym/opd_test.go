package jitsym

import (
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestELFv1SymbolNames: in clang's big-endian ppc64 object without DWARF
// (ELFv1: function symbols name descriptors in .opd) and the executable
// GNU ld links from it, an address of a function's code is named after
// the function, at the addresses objdump labels ".name".
func TestELFv1SymbolNames(t *testing.T) {
	for _, file := range testenv.ELFv1Program(t, t.TempDir()) {
		f, err := elfrel.Open(file.Path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, addr := range file.Code {
			for _, a := range []uint64{addr, addr + 8} {
				frames, err := s.SourceLine(a)
				if err != nil || len(frames) != 1 || frames[0].Func != name {
					t.Errorf("%s: SourceLine(%#x) = %+v, %v; want %s", file.Path, a, frames, err, name)
				}
			}
		}
		s.Close()
		f.Close()
	}
}
