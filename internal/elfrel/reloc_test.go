package elfrel

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

// Symbol indexes in relocObject.
const (
	symText     = 1
	symFoo      = 2
	symDebugStr = 3
	symAbs      = 4
	symUndef    = 5
)

func TestRelocations(t *testing.T) {
	x86 := func(r elf.R_X86_64) uint32 { return uint32(r) }
	arm := func(r elf.R_AARCH64) uint32 { return uint32(r) }
	tests := []struct {
		name    string
		machine elf.Machine
		rela    elftest.Rela
		width   int
		want    uint64
	}{
		{name: "x86 64 section symbol", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 0, Sym: symText, Type: x86(elf.R_X86_64_64), Addend: 8}, width: 8, want: textAddr + 8},
		{name: "x86 64 function symbol", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 8, Sym: symFoo, Type: x86(elf.R_X86_64_64), Addend: 4}, width: 8, want: textAddr + 0x14},
		{name: "x86 32 debug_str ignores sh_addr", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 16, Sym: symDebugStr, Type: x86(elf.R_X86_64_32), Addend: 6}, width: 4, want: 6},
		{name: "x86 32 truncates", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 16, Sym: symText, Type: x86(elf.R_X86_64_32)}, width: 4, want: textAddr & 0xffffffff},
		{name: "x86 32S absolute", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 20, Sym: symAbs, Type: x86(elf.R_X86_64_32S), Addend: 1}, width: 4, want: 0x1235},
		{name: "x86 PC32", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 24, Sym: symText, Type: x86(elf.R_X86_64_PC32)}, width: 4, want: (textAddr - 24) & 0xffffffff},
		{name: "x86 PC64", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 32, Sym: symText, Type: x86(elf.R_X86_64_PC64), Addend: 2}, width: 8, want: textAddr + 2 - 32},
		{name: "x86 DTPOFF64", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 40, Sym: symAbs, Type: x86(elf.R_X86_64_DTPOFF64)}, width: 8, want: 0x1234},
		{name: "x86 undefined symbol", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 48, Sym: symUndef, Type: x86(elf.R_X86_64_64), Addend: 5}, width: 8, want: 5},
		{name: "x86 NONE", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 0, Sym: symText, Type: x86(elf.R_X86_64_NONE), Addend: 5}, width: 8, want: 0},
		{name: "x86 last bytes", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 56, Sym: symFoo, Type: x86(elf.R_X86_64_64)}, width: 8, want: textAddr + 0x10},
		{name: "arm ABS64", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 0, Sym: symFoo, Type: arm(elf.R_AARCH64_ABS64), Addend: 3}, width: 8, want: textAddr + 0x13},
		{name: "arm ABS32 debug_str", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 8, Sym: symDebugStr, Type: arm(elf.R_AARCH64_ABS32), Addend: 6}, width: 4, want: 6},
		{name: "arm ABS16", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 12, Sym: symAbs, Type: arm(elf.R_AARCH64_ABS16)}, width: 2, want: 0x1234},
		{name: "arm PREL32", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 16, Sym: symText, Type: arm(elf.R_AARCH64_PREL32)}, width: 4, want: (textAddr - 16) & 0xffffffff},
		{name: "arm PREL64", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 24, Sym: symText, Type: arm(elf.R_AARCH64_PREL64)}, width: 8, want: textAddr - 24},
		{name: "arm NONE", machine: elf.EM_AARCH64, rela: elftest.Rela{Off: 0, Sym: symText, Type: arm(elf.R_AARCH64_NONE)}, width: 8, want: 0},
		{name: "ppc64 ADDR64", machine: elf.EM_PPC64, rela: elftest.Rela{Off: 0, Sym: symFoo, Type: uint32(elf.R_PPC64_ADDR64), Addend: 3}, width: 8, want: textAddr + 0x13},
		{name: "ppc64 REL32", machine: elf.EM_PPC64, rela: elftest.Rela{Off: 16, Sym: symText, Type: uint32(elf.R_PPC64_REL32)}, width: 4, want: (textAddr - 16) & 0xffffffff},
		{name: "s390x 32", machine: elf.EM_S390, rela: elftest.Rela{Off: 8, Sym: symDebugStr, Type: uint32(elf.R_390_32), Addend: 6}, width: 4, want: 6},
		{name: "riscv 64", machine: elf.EM_RISCV, rela: elftest.Rela{Off: 0, Sym: symFoo, Type: uint32(elf.R_RISCV_64), Addend: 1}, width: 8, want: textAddr + 0x11},
		{name: "riscv 32_PCREL", machine: elf.EM_RISCV, rela: elftest.Rela{Off: 8, Sym: symText, Type: uint32(elf.R_RISCV_32_PCREL)}, width: 4, want: (textAddr - 8) & 0xffffffff},
		{name: "loongarch 64_PCREL", machine: elf.EM_LOONGARCH, rela: elftest.Rela{Off: 8, Sym: symText, Type: uint32(elf.R_LARCH_64_PCREL)}, width: 8, want: textAddr - 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// .debug_str at a non-zero address must not change anything.
			f := newTestFile(t, relocObject(tt.machine, 0x500000, []elftest.Rela{tt.rela}).Bytes())
			d, err := f.DWARF()
			if err != nil {
				t.Fatal(err)
			}
			info := d.Section(".debug_info")
			var got uint64
			switch b := info[tt.rela.Off:]; tt.width {
			case 2:
				got = uint64(binary.LittleEndian.Uint16(b))
			case 4:
				got = uint64(binary.LittleEndian.Uint32(b))
			default:
				got = binary.LittleEndian.Uint64(b)
			}
			if got != tt.want {
				t.Errorf("got %#x at offset %d, want %#x", got, tt.rela.Off, tt.want)
			}
		})
	}
}

// TestInPlaceRelocations applies the relocations that compute their value
// from the bytes already there: RISC-V's and LoongArch's pairs for label
// differences, including ULEB128 fields, which keep their length.
func TestInPlaceRelocations(t *testing.T) {
	rv := func(r elf.R_RISCV) uint32 { return uint32(r) }
	la := func(r elf.R_LARCH) uint32 { return uint32(r) }
	tests := []struct {
		name    string
		machine elf.Machine
		before  []byte // the first bytes of .debug_info
		relas   []elftest.Rela
		want    []byte
	}{
		{name: "riscv ADD32 SUB32", machine: elf.EM_RISCV, before: []byte{1, 0, 0, 0},
			relas: []elftest.Rela{{Sym: symFoo, Type: rv(elf.R_RISCV_ADD32), Addend: 4}, {Sym: symText, Type: rv(elf.R_RISCV_SUB32)}},
			want:  []byte{0x15, 0, 0, 0}},
		{name: "riscv SUB16 wraps", machine: elf.EM_RISCV,
			relas: []elftest.Rela{{Sym: symText, Type: rv(elf.R_RISCV_SUB16)}, {Sym: symFoo, Type: rv(elf.R_RISCV_ADD16)}},
			want:  []byte{0x10, 0}},
		{name: "riscv ADD64 SUB64", machine: elf.EM_RISCV,
			relas: []elftest.Rela{{Sym: symFoo, Type: rv(elf.R_RISCV_ADD64)}, {Sym: symText, Type: rv(elf.R_RISCV_SUB64), Addend: 1}},
			want:  []byte{0xf, 0, 0, 0, 0, 0, 0, 0}},
		{name: "riscv SET6 SUB6 keep the top bits", machine: elf.EM_RISCV, before: []byte{0xc5},
			relas: []elftest.Rela{{Sym: symFoo, Type: rv(elf.R_RISCV_SET6), Addend: 3}, {Sym: symText, Type: rv(elf.R_RISCV_SUB6), Addend: 1}},
			want:  []byte{0xc0 | 0x12}},
		{name: "riscv SET8 ADD8 SUB8", machine: elf.EM_RISCV,
			relas: []elftest.Rela{{Sym: symFoo, Type: rv(elf.R_RISCV_SET8)}, {Sym: symFoo, Type: rv(elf.R_RISCV_ADD8)}, {Sym: symText, Type: rv(elf.R_RISCV_SUB8), Addend: 2}},
			want:  []byte{0x1e}},
		{name: "riscv ULEB128 pair keeps the length", machine: elf.EM_RISCV, before: []byte{0x80, 0x80, 0x00, 0xee},
			relas: []elftest.Rela{{Sym: symFoo, Type: uint32(rRISCVSetULEB128), Addend: 0x100}, {Sym: symText, Type: uint32(rRISCVSubULEB128)}},
			want:  []byte{0x90, 0x82, 0x00, 0xee}},
		{name: "loongarch ADD_ULEB128 truncates", machine: elf.EM_LOONGARCH, before: []byte{0x85, 0x00},
			relas: []elftest.Rela{{Sym: symFoo, Type: la(elf.R_LARCH_ADD_ULEB128)}},
			want:  []byte{0x95, 0x20}}, // 5 + textAddr + 0x10 in 14 bits: 0x1015
		{name: "loongarch ADD6 SUB6", machine: elf.EM_LOONGARCH, before: []byte{0x41},
			relas: []elftest.Rela{{Sym: symFoo, Type: la(elf.R_LARCH_ADD6)}, {Sym: symText, Type: la(elf.R_LARCH_SUB6), Addend: 2}},
			want:  []byte{0x4f}},
		{name: "loongarch ADD32 SUB32", machine: elf.EM_LOONGARCH,
			relas: []elftest.Rela{{Sym: symFoo, Type: la(elf.R_LARCH_ADD32)}, {Sym: symText, Type: la(elf.R_LARCH_SUB32)}},
			want:  []byte{0x10, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := relocObject(tt.machine, 0, tt.relas)
			copy(o.Sections[1].Data, tt.before)
			f := newTestFile(t, o.Bytes())
			d, err := f.DWARF()
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Section(".debug_info")[:len(tt.want)]; !bytes.Equal(got, tt.want) {
				t.Errorf("got % x, want % x", got, tt.want)
			}
		})
	}
}

func TestRelocationErrors(t *testing.T) {
	tests := []struct {
		name        string
		machine     elf.Machine
		rela        elftest.Rela
		edit        func(o *elftest.File)
		unsupported bool
		want        string
	}{
		{name: "unsupported x86 type", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_GOTPCREL), Sym: symText}, unsupported: true, want: "relocation R_X86_64_GOTPCREL"},
		{name: "unsupported arm type", machine: elf.EM_AARCH64, rela: elftest.Rela{Type: uint32(elf.R_AARCH64_CALL26), Sym: symText}, unsupported: true, want: "relocation R_AARCH64_CALL26"},
		{name: "unsupported riscv type", machine: elf.EM_RISCV, rela: elftest.Rela{Type: uint32(elf.R_RISCV_CALL), Sym: symText}, unsupported: true, want: "relocation R_RISCV_CALL"},
		{name: "ULEB128 without its last byte", machine: elf.EM_RISCV, rela: elftest.Rela{Off: 60, Type: uint32(rRISCVSetULEB128), Sym: symText},
			edit: func(o *elftest.File) { copy(o.Sections[1].Data[60:], []byte{0x80, 0x80, 0x80, 0x80}) }, want: "finds no ULEB128 there in the 64-byte target section .debug_info"},
		{name: "ULEB128 past the end", machine: elf.EM_RISCV, rela: elftest.Rela{Off: 64, Type: uint32(rRISCVSubULEB128), Sym: symText}, want: "finds no ULEB128 there"},
		{name: "symbol index", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: 77}, want: "symbol index 77 out of range"},
		{name: "offset", machine: elf.EM_X86_64, rela: elftest.Rela{Off: 60, Type: uint32(elf.R_X86_64_64), Sym: symText}, want: "outside the 64-byte target section .debug_info"},
		{name: "huge offset", machine: elf.EM_X86_64, rela: elftest.Rela{Off: ^uint64(0) - 2, Type: uint32(elf.R_X86_64_32), Sym: symText}, want: "outside the 64-byte target"},
		{name: "entry size", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[3].Entsize = 16 }, want: "entry size 16"},
		{name: "partial entry", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[3].Data = o.Sections[3].Data[:20] }, want: "want entries of 24 bytes"},
		{name: "link not a symbol table", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[3].Link = 6 }, want: "want SHT_SYMTAB"},
		{name: "applies to itself", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[3].Info = 4 }, want: `applies to section 4 (".rela.debug_info"), not to a debug section`},
		{name: "applies to code", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[3].Info = 1 }, want: `applies to section 1 (".text.foo"), not to a debug section`},
		{name: "compressed", machine: elf.EM_X86_64, rela: elftest.Rela{Type: uint32(elf.R_X86_64_64), Sym: symText}, edit: func(o *elftest.File) { o.Sections[1].Flags |= elf.SHF_COMPRESSED }, unsupported: true, want: "SHF_COMPRESSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := relocObject(tt.machine, 0, []elftest.Rela{tt.rela})
			if tt.edit != nil {
				tt.edit(o)
			}
			f := newTestFile(t, o.Bytes())
			_, err := f.DWARF()
			checkErr(t, err, tt.unsupported, tt.want)
		})
	}
}

// TestSectionZero: section 0's header holds extended counts, not a
// section. One that claims to be a symbol table linked to a string table
// far out of range (a fuzzer's find, through jitsnap) reads as the null
// section, and a relocation section linked to it is an error naming
// what is wrong, not an index out of range.
func TestSectionZero(t *testing.T) {
	bo := binary.LittleEndian
	o := relocObject(elf.EM_X86_64, 0, []elftest.Rela{{Type: uint32(elf.R_X86_64_64), Sym: symText}})
	o.Sections[3].Link = 0
	data := o.Bytes()
	shoff := bo.Uint64(data[40:])
	bo.PutUint32(data[shoff+4:], uint32(elf.SHT_SYMTAB))
	bo.PutUint32(data[shoff+40:], 0x30303030)
	f := newTestFile(t, data)
	if s := f.Sections[0]; s != (Section{}) {
		t.Errorf("section 0 reads as %+v, want the null section", s)
	}
	_, err := f.DWARF()
	checkErr(t, err, false, "section 0 has type SHT_NULL, want SHT_SYMTAB")
}

func TestNoDWARF(t *testing.T) {
	o := relocObject(elf.EM_X86_64, 0, nil)
	o.Sections[1].Name = ".comment"
	f := newTestFile(t, o.Bytes())
	_, err := f.DWARF()
	if !errors.Is(err, ErrNoDWARF) {
		t.Fatalf("got %v, want ErrNoDWARF", err)
	}
	if got, want := err.Error(), "t.o: no DWARF debug information"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestConcatenation checks that same-named debug sections are joined in
// section order, and that a symbol in the second one, and a PC-relative
// place in it, count from where it starts in the joined section.
func TestConcatenation(t *testing.T) {
	bo := binary.LittleEndian
	symtab, strtab := elftest.Symtab(bo, []elftest.Symbol{
		{Info: byte(elf.STT_SECTION), Shndx: 1}, // .debug_info #1
		{Info: byte(elf.STT_SECTION), Shndx: 2}, // .debug_info #2
		{Info: byte(elf.STT_SECTION), Shndx: 5}, // .text
	})
	o := &elftest.File{Machine: elf.EM_X86_64, Order: bo, Sections: []elftest.Section{
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: bytes.Repeat([]byte{0xaa}, 16)},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: make([]byte, 16)},
		{Name: ".rela.debug_info", Type: elf.SHT_RELA, Link: 6, Info: 2, Entsize: relaSize, Data: elftest.RelaData(bo, []elftest.Rela{
			{Off: 0, Sym: 2, Type: uint32(elf.R_X86_64_64), Addend: 4},   // own section: 16+4
			{Off: 8, Sym: 3, Type: uint32(elf.R_X86_64_PC32), Addend: 0}, // text - (16+8)
		})},
		{Name: ".rela.debug_info", Type: elf.SHT_RELA, Link: 6, Info: 1, Entsize: relaSize, Data: elftest.RelaData(bo, []elftest.Rela{
			{Off: 8, Sym: 1, Type: uint32(elf.R_X86_64_32), Addend: 3},
		})},
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x10000, Data: make([]byte, 4)},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Link: 7, Entsize: symSize, Data: symtab},
		{Name: ".strtab", Type: elf.SHT_STRTAB, Data: strtab},
	}}
	f := newTestFile(t, o.Bytes())
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	info := d.Section(".debug_info")
	if len(info) != 32 {
		t.Fatalf("got %d bytes of .debug_info, want 32", len(info))
	}
	tests := []struct {
		off   int
		width int
		want  uint64
	}{
		{off: 0, width: 8, want: 0xaaaaaaaaaaaaaaaa},
		{off: 8, width: 4, want: 3},
		{off: 12, width: 4, want: 0xaaaaaaaa},
		{off: 16, width: 8, want: 20},
		{off: 24, width: 4, want: 0x10000 - 24},
	}
	for _, tt := range tests {
		var got uint64
		if tt.width == 4 {
			got = uint64(bo.Uint32(info[tt.off:]))
		} else {
			got = bo.Uint64(info[tt.off:])
		}
		if got != tt.want {
			t.Errorf("at %d: got %#x, want %#x", tt.off, got, tt.want)
		}
	}
}

// TestOverlappingSections describes one region of the file as many debug
// sections: reading them all would allocate more than the file holds.
func TestOverlappingSections(t *testing.T) {
	o := relocObject(elf.EM_X86_64, 0, nil)
	for i := 0; i < 3; i++ {
		o.Sections = append(o.Sections, elftest.Section{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: make([]byte, 64)})
	}
	data := o.Bytes()
	bo := binary.LittleEndian
	shoff := bo.Uint64(data[40:])
	infoOff := bo.Uint64(data[shoff+2*shdrSize+24:])
	for i := 7; i < 10; i++ { // the three added sections: each the rest of the file from the first one
		bo.PutUint64(data[shoff+uint64(i)*shdrSize+24:], infoOff)
		bo.PutUint64(data[shoff+uint64(i)*shdrSize+32:], uint64(len(data))-infoOff)
	}
	f := newTestFile(t, data)
	_, err := f.DWARF()
	checkErr(t, err, false, "overlap")
}

// TestMIPSInfo decodes MIPS64's r_info in both byte orders: a 32-bit
// symbol index, then r_ssym and the third, second and first types; an
// entry with a second or third type does not apply to debug sections
// (howtoFor refuses it).
func TestMIPSInfo(t *testing.T) {
	tests := []struct {
		name    string
		bo      byteOrder
		info    []byte
		sym     uint64
		typ     uint32
		applies bool
	}{
		{"mips64el R_MIPS_64", binary.LittleEndian, []byte{0x34, 0x12, 0, 0, 0, 0, 0, byte(elf.R_MIPS_64)}, 0x1234, uint32(elf.R_MIPS_64), true},
		{"mips64 R_MIPS_32", binary.BigEndian, []byte{0, 0, 0x12, 0x34, 0, 0, 0, byte(elf.R_MIPS_32)}, 0x1234, uint32(elf.R_MIPS_32), true},
		{"mips64el with a second type", binary.LittleEndian, []byte{7, 0, 0, 0, 0, 0, byte(elf.R_MIPS_SUB), byte(elf.R_MIPS_GPREL32)},
			7, uint32(elf.R_MIPS_GPREL32) | uint32(elf.R_MIPS_SUB)<<8, false},
		{"mips64 with a third type", binary.BigEndian, []byte{0, 0, 0, 7, 0, byte(elf.R_MIPS_HI16), 0, byte(elf.R_MIPS_64)},
			7, uint32(elf.R_MIPS_64) | uint32(elf.R_MIPS_HI16)<<16, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sym, typ := mipsInfo(tt.bo, tt.info)
			if sym != tt.sym || typ != tt.typ {
				t.Errorf("mipsInfo = %d, %#x; want %d, %#x", sym, typ, tt.sym, tt.typ)
			}
			if _, ok := howtoFor(elf.EM_MIPS, typ); ok != tt.applies {
				t.Errorf("howtoFor(EM_MIPS, %s) ok = %v, want %v", relocName(elf.EM_MIPS, typ), ok, tt.applies)
			}
		})
	}
}
