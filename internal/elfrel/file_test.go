package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

const textAddr = 0x7f0000001000

// relocObject returns an x86-64 or AArch64 object with a loaded text
// section, a .debug_str at debugStrAddr, symbols of every kind, and the
// given relocations against .debug_info (64 zero bytes).
func relocObject(m elf.Machine, debugStrAddr uint64, relas []elftest.Rela) *elftest.File {
	bo := binary.LittleEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Info: byte(elf.STT_SECTION), Shndx: 1},                                                                     // 1: .text.foo
		{Name: "foo", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Shndx: 1, Value: 0x10, Size: 0x10},           // 2
		{Info: byte(elf.STT_SECTION), Shndx: 3},                                                                     // 3: .debug_str
		{Name: "abs", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_NOTYPE), Shndx: uint16(elf.SHN_ABS), Value: 0x1234}, // 4
		{Name: "undef", Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_NOTYPE)},                                          // 5
	})
	return &elftest.File{Machine: m, Order: bo, Sections: []elftest.Section{
		{Name: ".text.foo", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: textAddr, Data: make([]byte, 32)},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: make([]byte, 64)},
		{Name: ".debug_str", Type: elf.SHT_PROGBITS, Addr: debugStrAddr, Data: []byte("hello\x00world\x00")},
		{Name: ".rela.debug_info", Type: elf.SHT_RELA, Flags: elf.SHF_INFO_LINK, Link: 5, Info: 2, Entsize: relaSize, Data: elftest.RelaData(bo, relas)},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Link: 6, Entsize: symSize, Data: symtab},
		{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
	}}
}

func newTestFile(t *testing.T, data []byte) *File {
	t.Helper()
	f, err := NewFile(bytes.NewReader(data), int64(len(data)), "t.o")
	if err != nil {
		t.Fatalf("NewFile: %v", err)
	}
	return f
}

func TestSections(t *testing.T) {
	o := relocObject(elf.EM_X86_64, 0, nil)
	f := newTestFile(t, o.Bytes())
	if got, want := len(f.Sections), 8; got != want {
		t.Fatalf("got %d sections, want %d", got, want)
	}
	tests := []struct {
		name  string
		index int
		addr  uint64
		flags elf.SectionFlag
		typ   elf.SectionType
	}{
		{name: ".text.foo", index: 1, addr: textAddr, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, typ: elf.SHT_PROGBITS},
		{name: ".debug_str", index: 3, typ: elf.SHT_PROGBITS},
		{name: ".rela.debug_info", index: 4, flags: elf.SHF_INFO_LINK, typ: elf.SHT_RELA},
		{name: ".shstrtab", index: 7, typ: elf.SHT_STRTAB},
		{name: ".nonexistent", index: -1},
	}
	for _, tt := range tests {
		i := f.Section(tt.name)
		if i != tt.index {
			t.Errorf("Section(%q) = %d, want %d", tt.name, i, tt.index)
			continue
		}
		if i < 0 {
			continue
		}
		s := f.Sections[i]
		if s.Name != tt.name || s.Addr != tt.addr || s.Flags != tt.flags || s.Type != tt.typ {
			t.Errorf("section %d: got {%q %#x %v %v}, want {%q %#x %v %v}", i, s.Name, s.Addr, s.Flags, s.Type, tt.name, tt.addr, tt.flags, tt.typ)
		}
	}
	data, err := f.SectionData(3)
	if err != nil || string(data) != "hello\x00world\x00" {
		t.Errorf("SectionData(3) = %q, %v; want %q, nil", data, err, "hello\x00world\x00")
	}
}

func TestSymbols(t *testing.T) {
	f := newTestFile(t, relocObject(elf.EM_X86_64, 0x500000, nil).Bytes())
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		index   int
		name    string
		section int
		typ     elf.SymType
		addr    uint64 // SymbolAddr
	}{
		{index: 0, name: "", section: 0, typ: elf.STT_NOTYPE, addr: 0},
		{index: 1, name: "", section: 1, typ: elf.STT_SECTION, addr: textAddr},
		{index: 2, name: "foo", section: 1, typ: elf.STT_FUNC, addr: textAddr + 0x10},
		{index: 3, name: "", section: 3, typ: elf.STT_SECTION, addr: 0}, // non-SHF_ALLOC: sh_addr ignored
		{index: 4, name: "abs", section: 0, typ: elf.STT_NOTYPE, addr: 0x1234},
		{index: 5, name: "undef", section: 0, typ: elf.STT_NOTYPE, addr: 0},
	}
	if len(syms) != len(tests) {
		t.Fatalf("got %d symbols, want %d", len(syms), len(tests))
	}
	for _, tt := range tests {
		s := &syms[tt.index]
		if s.Name != tt.name || s.Section != tt.section || s.Type() != tt.typ || f.SymbolAddr(s) != tt.addr {
			t.Errorf("symbol %d: got {%q %d %v %#x}, want {%q %d %v %#x}", tt.index, s.Name, s.Section, s.Type(), f.SymbolAddr(s), tt.name, tt.section, tt.typ, tt.addr)
		}
	}
}

// TestHeaderErrors corrupts one field of a valid object at a time.
func TestHeaderErrors(t *testing.T) {
	good := relocObject(elf.EM_X86_64, 0, nil).Bytes()
	bo := binary.LittleEndian
	shoff := bo.Uint64(good[40:])
	tests := []struct {
		name        string
		edit        func(b []byte) []byte
		unsupported bool   // want *UnsupportedError, else *FormatError
		want        string // in the message
	}{
		{name: "truncated", edit: func(b []byte) []byte { return b[:10] }, want: "too short"},
		{name: "magic", edit: func(b []byte) []byte { b[1] = 'X'; return b }, want: "bad magic"},
		// An ELF64 header read as ELF32 puts e_shoff's high bytes where
		// e_ehsize is.
		{name: "class32", edit: func(b []byte) []byte { b[elf.EI_CLASS] = byte(elf.ELFCLASS32); return b }, want: "e_ehsize"},
		{name: "class32 executable", edit: func(b []byte) []byte {
			b[elf.EI_CLASS] = byte(elf.ELFCLASS32)
			bo.PutUint16(b[16:], uint16(elf.ET_EXEC))
			return b
		}, unsupported: true, want: "ELFCLASS32 executable"},
		{name: "class", edit: func(b []byte) []byte { b[elf.EI_CLASS] = 9; return b }, want: "unknown ELF class"},
		{name: "data", edit: func(b []byte) []byte { b[elf.EI_DATA] = 9; return b }, want: "data encoding"},
		{name: "ET_CORE", edit: func(b []byte) []byte { bo.PutUint16(b[16:], uint16(elf.ET_CORE)); return b }, unsupported: true, want: "ET_CORE"},
		{name: "machine", edit: func(b []byte) []byte { bo.PutUint16(b[18:], uint16(elf.EM_SPARCV9)); return b }, unsupported: true, want: "EM_SPARCV9"},
		{name: "shentsize", edit: func(b []byte) []byte { bo.PutUint16(b[58:], 40); return b }, want: "e_shentsize"},
		{name: "shoff past end", edit: func(b []byte) []byte { bo.PutUint64(b[40:], 1<<40); return b }, want: "past the end"},
		{name: "shnum too large", edit: func(b []byte) []byte { bo.PutUint16(b[60:], 0xfeff); return b }, want: "do not fit"},
		{name: "extended shnum too large", edit: func(b []byte) []byte {
			bo.PutUint16(b[60:], 0)
			bo.PutUint64(b[shoff+32:], 1<<40) // section 0 sh_size
			return b
		}, want: "do not fit"},
		{name: "shstrndx", edit: func(b []byte) []byte { bo.PutUint16(b[62:], 200); return b }, want: "name table index"},
		{name: "section past end", edit: func(b []byte) []byte { bo.PutUint64(b[shoff+2*shdrSize+32:], 1<<20); return b }, want: "extend past the end"},
		{name: "section offset overflow", edit: func(b []byte) []byte {
			bo.PutUint64(b[shoff+2*shdrSize+24:], ^uint64(0)-4)
			return b
		}, want: "extend past the end"},
		{name: "name offset", edit: func(b []byte) []byte { bo.PutUint32(b[shoff+2*shdrSize:], 1<<20); return b }, want: "name offset"},
		{name: "name table type", edit: func(b []byte) []byte { bo.PutUint32(b[shoff+7*shdrSize+4:], uint32(elf.SHT_PROGBITS)); return b }, want: "want SHT_STRTAB"},
		{name: "rela link", edit: func(b []byte) []byte { bo.PutUint32(b[shoff+4*shdrSize+40:], 99); return b }, want: "refers to sections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.edit(bytes.Clone(good))
			_, err := NewFile(bytes.NewReader(data), int64(len(data)), "t.o")
			checkErr(t, err, tt.unsupported, tt.want)
		})
	}
}

// TestELF32 reads a 32-bit relocatable object (GCC's, for 386; see
// ../jitsym/testdata/gen.sh), and checks that the ELF32 layouts of the
// headers, symbols and relocations are the ones validated.
func TestELF32(t *testing.T) {
	good, err := os.ReadFile("../jitsym/testdata/cold-gcc-m32-dwarf5.o")
	if err != nil {
		t.Fatal(err)
	}
	f := newTestFile(t, good)
	if f.Class != elf.ELFCLASS32 || f.Machine != elf.EM_386 || f.Type != elf.ET_REL {
		t.Fatalf("class %v, machine %v, type %v", f.Class, f.Machine, f.Type)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range syms {
		names[s.Name] = true
	}
	if !names["maybe"] || !names["report"] {
		t.Errorf("symbols %v lack maybe and report", names)
	}
	if _, err := f.DWARF(); err != nil {
		t.Fatalf("DWARF: %v", err)
	}
	bo := binary.LittleEndian
	shoff := uint64(bo.Uint32(good[32:]))
	header := func(name string) uint64 {
		i := f.Section(name)
		if i < 0 {
			t.Fatalf("no section %s", name)
		}
		return shoff + uint64(i)*40
	}
	tests := []struct {
		name  string
		edit  func(b []byte)
		dwarf bool // the error comes from DWARF, not NewFile
		want  string
	}{
		{name: "shentsize", edit: func(b []byte) { bo.PutUint16(b[46:], 64) }, want: "e_shentsize is 64, want 40"},
		{name: "ehsize", edit: func(b []byte) { bo.PutUint16(b[40:], 64) }, want: "e_ehsize is 64, want 52"},
		{name: "shoff past end", edit: func(b []byte) { bo.PutUint32(b[32:], 1<<30) }, want: "past the end"},
		{name: "section past end", edit: func(b []byte) { bo.PutUint32(b[header(".symtab")+20:], 1<<30) }, want: "extend past the end"},
		{name: "address wraps", edit: func(b []byte) {
			h := header(".text.unlikely.maybe")
			bo.PutUint32(b[h+12:], 0xffffffff)
		}, want: "wraps around the address space"},
		{name: "symbol entry size", dwarf: true, edit: func(b []byte) { bo.PutUint32(b[header(".symtab")+36:], 24) }, want: "want entries of 16 bytes"},
		{name: "relocation entry size", dwarf: true, edit: func(b []byte) { bo.PutUint32(b[header(".rel.debug_info")+36:], 16) }, want: "want entries of 8 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := bytes.Clone(good)
			tt.edit(data)
			f, err := NewFile(bytes.NewReader(data), int64(len(data)), "t.o")
			if tt.dwarf {
				if err != nil {
					t.Fatalf("NewFile: %v", err)
				}
				_, err = f.DWARF()
			}
			checkErr(t, err, false, tt.want)
		})
	}
}

// checkErr checks that err is the wanted type, names the file and says
// what was wrong.
func checkErr(t *testing.T, err error, unsupported bool, want string) {
	t.Helper()
	var fe *FormatError
	var ue *UnsupportedError
	switch {
	case err == nil:
		t.Fatalf("got no error, want one containing %q", want)
	case unsupported && !errors.As(err, &ue):
		t.Fatalf("got %T %v, want *UnsupportedError", err, err)
	case !unsupported && !errors.As(err, &fe):
		t.Fatalf("got %T %v, want *FormatError", err, err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "t.o: ") || !strings.Contains(msg, want) {
		t.Errorf("got error %q, want it to start with %q and contain %q", msg, "t.o: ", want)
	}
}

func TestSymbolErrors(t *testing.T) {
	bo := binary.LittleEndian
	tests := []struct {
		name string
		edit func(o *elftest.File)
		want string
	}{
		{name: "entsize", edit: func(o *elftest.File) { o.Sections[4].Entsize = 16 }, want: "entry size"},
		{name: "strtab type", edit: func(o *elftest.File) { o.Sections[4].Link = 3 }, want: "want SHT_STRTAB"},
		{name: "name offset", edit: func(o *elftest.File) { bo.PutUint32(o.Sections[4].Data[2*symSize:], 1<<20) }, want: "name offset"},
		{name: "section index", edit: func(o *elftest.File) { bo.PutUint16(o.Sections[4].Data[2*symSize+6:], 300) }, want: "section index 300"},
		{name: "xindex without table", edit: func(o *elftest.File) { bo.PutUint16(o.Sections[4].Data[2*symSize+6:], shnXindex) }, want: "SHT_SYMTAB_SHNDX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := relocObject(elf.EM_X86_64, 0, nil)
			tt.edit(o)
			f := newTestFile(t, o.Bytes())
			_, err := f.Symbols()
			checkErr(t, err, false, tt.want)
			if !strings.Contains(err.Error(), "section .symtab") {
				t.Errorf("got error %q, want it to name section .symtab", err)
			}
		})
	}
}

// TestExtendedNumbering checks SHN_XINDEX and the section count and name
// table index kept in section 0.
func TestExtendedNumbering(t *testing.T) {
	bo := binary.LittleEndian
	o := relocObject(elf.EM_X86_64, 0, nil)
	// Symbol 2 (foo) gets its section from a SHT_SYMTAB_SHNDX table.
	bo.PutUint16(o.Sections[4].Data[2*symSize+6:], shnXindex)
	xindex := make([]byte, 4*6)
	bo.PutUint32(xindex[2*4:], 1)
	o.Sections = append(o.Sections, elftest.Section{Name: ".symtab_shndx", Type: elf.SHT_SYMTAB_SHNDX, Link: 5, Entsize: 4, Data: xindex})
	data := o.Bytes()
	shoff := bo.Uint64(data[40:])
	bo.PutUint64(data[shoff+32:], uint64(bo.Uint16(data[60:]))) // count in section 0
	bo.PutUint32(data[shoff+40:], uint32(bo.Uint16(data[62:]))) // name table index in section 0
	bo.PutUint16(data[60:], 0)
	bo.PutUint16(data[62:], shnXindex)

	f := newTestFile(t, data)
	if got, want := f.Sections[1].Name, ".text.foo"; got != want {
		t.Errorf("section 1 is %q, want %q", got, want)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := syms[2].Section, 1; got != want {
		t.Errorf("symbol foo in section %d, want %d", got, want)
	}
	if got, want := f.SymbolAddr(&syms[2]), uint64(textAddr+0x10); got != want {
		t.Errorf("SymbolAddr(foo) = %#x, want %#x", got, want)
	}
}
