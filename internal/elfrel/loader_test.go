package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// TestManySections reads more section headers and symbols than NewFile
// and EachSymbol read at a time.
func TestManySections(t *testing.T) {
	bo := binary.LittleEndian
	o := relocObject(elf.EM_X86_64, 0, nil)
	const extraSections = 2*headerChunk + 7
	for i := range extraSections {
		o.Sections = append(o.Sections, elftest.Section{Name: fmt.Sprintf(".text.f%d", i), Type: elf.SHT_PROGBITS,
			Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: uint64(0x100000 + 16*i), Data: make([]byte, 16)})
	}
	const nsyms = 2*symbolChunk + 3
	var syms []elftest.Symbol
	for i := range nsyms {
		syms = append(syms, elftest.Symbol{Name: fmt.Sprintf("f%d", i), Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: uint16(7 + i%extraSections), Value: 4, Size: 8})
	}
	o.Sections[4].Data, o.Sections[5].Data = elftest.Symtab(bo, syms)
	f := newTestFile(t, o.Bytes())
	if got, want := len(f.Sections), 8+extraSections; got != want {
		t.Fatalf("got %d sections, want %d", got, want)
	}
	for _, i := range []int{1, 7, headerChunk - 1, headerChunk, headerChunk + 1, len(f.Sections) - 2} { // the last is .shstrtab
		want := ".text.foo"
		if i >= 7 {
			want = fmt.Sprintf(".text.f%d", i-7)
		}
		if got := f.Sections[i].Name; got != want {
			t.Errorf("section %d is %q, want %q", i, got, want)
		}
	}
	n := 0
	err := f.EachSymbol(true, func(k int, s *Symbol) error {
		if k != n {
			t.Fatalf("symbol %d after %d", k, n-1)
		}
		n++
		if k == 0 {
			return nil
		}
		sec := 7 + (k-1)%extraSections
		if want := fmt.Sprintf("f%d", k-1); s.Name != want || s.Section != sec || f.SymbolAddr(s) != f.Sections[sec].Addr+4 {
			t.Errorf("symbol %d: got %q in %d at %#x, want %q in %d at %#x", k, s.Name, s.Section, f.SymbolAddr(s), want, sec, f.Sections[sec].Addr+4)
		}
		return nil
	})
	if err != nil || n != nsyms+1 {
		t.Errorf("EachSymbol: %d symbols, %v; want %d, nil", n, err, nsyms+1)
	}
}

// TestEachSymbol checks that EachSymbol sees what Symbols returns, that
// it leaves names out when asked, and that it stops at fn's error.
func TestEachSymbol(t *testing.T) {
	f := newTestFile(t, relocObject(elf.EM_X86_64, 0, nil).Bytes())
	all, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, names := range []bool{true, false} {
		var got []Symbol
		if err := f.EachSymbol(names, func(k int, s *Symbol) error {
			got = append(got, *s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(all) {
			t.Fatalf("names %v: got %d symbols, want %d", names, len(got), len(all))
		}
		for k := range all {
			want := all[k]
			if !names {
				want.Name = ""
			}
			if got[k] != want {
				t.Errorf("names %v: symbol %d is %+v, want %+v", names, k, got[k], want)
			}
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := f.EachSymbol(false, func(k int, s *Symbol) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("after an error: %d calls, %v; want 1, %v", n, err, stop)
	}

	o := relocObject(elf.EM_X86_64, 0, nil)
	o.Sections[4].Type = elf.SHT_PROGBITS // no symbol table
	f = newTestFile(t, o.Bytes())
	if err := f.EachSymbol(true, func(int, *Symbol) error { t.Error("called without a symbol table"); return nil }); err != nil {
		t.Errorf("without a symbol table: %v", err)
	}
}

// TestDebugLoader checks that the loader gives what DWARF does, one
// section at a time, without the File's section headers.
func TestDebugLoader(t *testing.T) {
	data := relocObject(elf.EM_X86_64, 0x500000, []elftest.Rela{
		{Off: 0, Sym: symText, Type: uint32(elf.R_X86_64_64), Addend: 8},
		{Off: 16, Sym: symDebugStr, Type: uint32(elf.R_X86_64_32), Addend: 6},
	}).Bytes()
	d, err := newTestFile(t, data).DWARF()
	if err != nil {
		t.Fatal(err)
	}
	f := newTestFile(t, data)
	l, err := f.DebugLoader()
	if err != nil {
		t.Fatal(err)
	}
	f.Sections = nil // the loader must not need them
	for _, name := range []string{".debug_info", ".debug_str", ".debug_line", ".text.foo"} {
		want := d.Section(name)
		got, err := l.Section(name)
		if err != nil || !bytes.Equal(got, want) || l.Has(name) != (want != nil) || l.Size(name) != uint64(len(want)) {
			t.Errorf("%s: got %q, %v (Has %v, Size %d), want %q", name, got, err, l.Has(name), l.Size(name), want)
		}
	}
	// Each call reads a new copy.
	a, _ := l.Section(".debug_info")
	a[0]++
	if b, _ := l.Section(".debug_info"); b[0] == a[0] {
		t.Error("Section returned a buffer it had returned before")
	}

	o := relocObject(elf.EM_X86_64, 0, nil)
	o.Sections[1].Name = ".debug_nope"
	if _, err := newTestFile(t, o.Bytes()).DebugLoader(); !errors.Is(err, ErrNoDWARF) {
		t.Errorf("without .debug_info: got %v, want ErrNoDWARF", err)
	}
}
