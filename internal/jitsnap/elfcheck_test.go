package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elftest"
)

func TestParseObject(t *testing.T) {
	data := testObject(0x7f0000001000)
	secs, ident, err := parseObject(data, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if ident != "work_load.c" {
		t.Errorf("got ident %q, want work_load.c", ident)
	}
	want := []Section{
		{Name: ".text", Addr: 0x7f0000001000, Size: 8, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR},
		{Name: ".bss", Addr: 0x7f0000002000, Size: 64, Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE},
		{Name: ".debug_info", Size: 4, Type: elf.SHT_PROGBITS},
		{Name: ".symtab", Size: 2 * symSize, Type: elf.SHT_SYMTAB},
		{Name: ".strtab", Size: uint64(len("\x00/src/work load.c\x00")), Type: elf.SHT_STRTAB},
		{Name: ".shstrtab", Size: uint64(len("\x00.text\x00.bss\x00.debug_info\x00.symtab\x00.strtab\x00.shstrtab\x00")), Type: elf.SHT_STRTAB},
	}
	if len(secs) != len(want) {
		t.Fatalf("got %d sections, want %d", len(secs), len(want))
	}
	for i := range want {
		if secs[i] != want[i] {
			t.Errorf("section %d: got %+v, want %+v", i, secs[i], want[i])
		}
	}
	if !secs[0].Executable() || secs[1].Executable() {
		t.Errorf("got Executable() %v %v for .text .bss, want true false", secs[0].Executable(), secs[1].Executable())
	}
}

// TestParseObjectManySections checks extended section numbering (more
// than 0xff00 sections), which LLVM uses for large C++ objects, against
// debug/elf.
func TestParseObjectManySections(t *testing.T) {
	secs := make([]elftest.Section, 0xff10)
	for i := range secs {
		secs[i] = textAt(fmt.Sprintf(".text.f%d", i), 0x7f0000000000+uint64(i)*16)
	}
	data := buildELF(elf.ET_REL, "big.cpp", secs...)
	got, ident, err := parseObject(data, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if ident != "big.cpp" || len(got) != len(secs)+3 {
		t.Errorf("got ident %q and %d sections, want big.cpp and %d", ident, len(got), len(secs)+3)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("debug/elf rejects the test object: %v", err)
	}
	if len(f.Sections) != len(got)+1 {
		t.Fatalf("debug/elf sees %d sections, parseObject %d (+1 null)", len(f.Sections), len(got))
	}
	for i, s := range got {
		if es := f.Sections[i+1]; es.Name != s.Name || es.Addr != s.Addr || es.Size != s.Size {
			t.Fatalf("section %d: got %s %#x %d, debug/elf has %s %#x %d", i+1, s.Name, s.Addr, s.Size, es.Name, es.Addr, es.Size)
		}
	}
}

func TestParseObjectErrors(t *testing.T) {
	base := testObject(0x7f0000001000)
	shoff := binary.LittleEndian.Uint64(base[40:])
	shstrndx := uint64(binary.LittleEndian.Uint16(base[62:]))
	le := binary.LittleEndian
	tests := []struct {
		name    string
		edit    func(b []byte) []byte
		order   binary.ByteOrder
		wantOff uint64
		want    string
	}{
		{name: "empty", edit: func(b []byte) []byte { return nil }, want: "0 bytes, shorter than an ELF64 header"},
		{name: "magic", edit: func(b []byte) []byte { b[1] = 'X'; return b }, want: "no ELF magic"},
		{name: "class", edit: func(b []byte) []byte { b[elf.EI_CLASS] = 1; return b }, wantOff: 4, want: "class ELFCLASS32"},
		{name: "byte order", order: binary.BigEndian, wantOff: 5, want: "data encoding ELFDATA2LSB does not match"},
		{name: "unknown encoding", edit: func(b []byte) []byte { b[elf.EI_DATA] = 9; return b }, wantOff: 5, want: "data encoding"},
		{name: "ET_CORE", edit: func(b []byte) []byte { le.PutUint16(b[16:], 4); return b }, wantOff: 16, want: "type ET_CORE, want ET_REL"},
		{name: "shentsize", edit: func(b []byte) []byte { le.PutUint16(b[58:], 40); return b }, wantOff: 58, want: "section header size 40"},
		{name: "no section headers", edit: func(b []byte) []byte { le.PutUint64(b[40:], 0); return b }, wantOff: 40, want: "section header table at 0x0"},
		{name: "shoff past end", edit: func(b []byte) []byte { le.PutUint64(b[40:], 1<<40); return b }, wantOff: 40, want: "outside the"},
		{name: "truncated table", edit: func(b []byte) []byte { return b[:len(b)-10] }, wantOff: 60, want: "section headers at"},
		{name: "shnum huge", edit: func(b []byte) []byte { le.PutUint16(b[60:], 0xfeff); return b }, wantOff: 60, want: "65279 section headers"},
		{name: "extended shnum zero", edit: func(b []byte) []byte { le.PutUint16(b[60:], 0); return b }, wantOff: 60, want: "0 section headers"},
		{name: "shstrndx zero", edit: func(b []byte) []byte { le.PutUint16(b[62:], 0); return b }, wantOff: 62, want: "index 0 out of range"},
		{name: "shstrndx too big", edit: func(b []byte) []byte { le.PutUint16(b[62:], 99); return b }, wantOff: 62, want: "index 99 out of range"},
		{
			name:    "name table not STRTAB",
			edit:    func(b []byte) []byte { le.PutUint32(b[shoff+shstrndx*shdrSize+4:], uint32(elf.SHT_PROGBITS)); return b },
			wantOff: shoff + shstrndx*shdrSize + 4, want: "has type SHT_PROGBITS, want SHT_STRTAB",
		},
		{
			name:    "section contents past end",
			edit:    func(b []byte) []byte { le.PutUint64(b[shoff+shdrSize+32:], 1<<20); return b },
			wantOff: shoff + shdrSize + 24, want: "section 1: contents",
		},
		{
			name:    "address wraps",
			edit:    func(b []byte) []byte { le.PutUint64(b[shoff+shdrSize+16:], ^uint64(0)-2); return b },
			wantOff: shoff + shdrSize + 16, want: "wraps around",
		},
		{
			name: "name unterminated",
			edit: func(b []byte) []byte {
				off := le.Uint64(b[shoff+shstrndx*shdrSize+24:])
				size := le.Uint64(b[shoff+shstrndx*shdrSize+32:])
				b[off+size-1] = 'x' // ".shstrtab" loses its NUL
				return b
			},
			wantOff: shoff + shstrndx*shdrSize, want: "unterminated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := bytes.Clone(base)
			if tt.edit != nil {
				data = tt.edit(data)
			}
			order := tt.order
			if order == nil {
				order = binary.LittleEndian
			}
			_, _, err := parseObject(data, order)
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Off != tt.wantOff || !strings.Contains(fe.Msg, tt.want) {
				t.Errorf("got %v, want a FormatError at offset %#x containing %q", err, tt.wantOff, tt.want)
			}
		})
	}
}

func TestIdent(t *testing.T) {
	for _, tt := range []struct {
		file, want string
	}{
		{file: "workload.c", want: "workload.c"},
		{file: "/src/dir/work load.c", want: "work_load.c"},
		{file: "dir/", want: "jit."},
		{file: "/", want: "_"},
		{file: ".hidden.c", want: "jit.hidden.c"},
		{file: "ünï.c", want: "__n__.c"}, // bytes, not runes
		{file: strings.Repeat("a", 200), want: strings.Repeat("a", 96)},
		{file: "", want: "jit"},
	} {
		_, got, err := parseObject(buildELF(elf.ET_REL, tt.file, textAt(".text", 0x1000)), binary.LittleEndian)
		if err != nil || got != tt.want {
			t.Errorf("STT_FILE %q: got ident %q, %v; want %q", tt.file, got, err, tt.want)
		}
	}
}
