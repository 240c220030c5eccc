package jitsnap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/elftest"
)

// shdrSize is the size of an Elf64_Shdr.
const shdrSize = 64

func TestCheckObject(t *testing.T) {
	data := testObject(0x7f0000001000)
	secs, ident, err := checkObject(data, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	if ident != "work_load.c" {
		t.Errorf("got ident %q, want work_load.c", ident)
	}
	type section struct {
		Name       string
		Addr, Size uint64
		Type       elf.SectionType
		Flags      elf.SectionFlag
	}
	want := []section{
		{Name: ".text", Addr: 0x7f0000001000, Size: 8, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR},
		{Name: ".bss", Addr: 0x7f0000002000, Size: 64, Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE},
		{Name: ".debug_info", Size: 4, Type: elf.SHT_PROGBITS},
		{Name: ".symtab", Size: 2 * elftest.SymSize, Type: elf.SHT_SYMTAB},
		{Name: ".strtab", Size: uint64(len("\x00/src/work load.c\x00")), Type: elf.SHT_STRTAB},
		{Name: ".shstrtab", Size: uint64(len("\x00.text\x00.bss\x00.debug_info\x00.symtab\x00.strtab\x00.shstrtab\x00")), Type: elf.SHT_STRTAB},
	}
	if len(secs) != len(want) {
		t.Fatalf("got %d sections, want %d", len(secs), len(want))
	}
	for i := range want {
		if got := (section{secs[i].Name, secs[i].Addr, secs[i].Size, secs[i].Type, secs[i].Flags}); got != want[i] {
			t.Errorf("section %d: got %+v, want %+v", i, got, want[i])
		}
	}
	if !secs[0].Executable() || secs[1].Executable() {
		t.Errorf("got Executable() %v %v for .text .bss, want true false", secs[0].Executable(), secs[1].Executable())
	}
}

// TestCheckObjectManySections checks extended section numbering (more
// than 0xff00 sections), which LLVM uses for large C++ objects, against
// debug/elf.
func TestCheckObjectManySections(t *testing.T) {
	secs := make([]elftest.Section, 0xff10)
	for i := range secs {
		secs[i] = textAt(fmt.Sprintf(".text.f%d", i), 0x7f0000000000+uint64(i)*16)
	}
	data := buildELF(elf.ET_REL, "big.cpp", secs...)
	got, ident, err := checkObject(data, binary.LittleEndian)
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
		t.Fatalf("debug/elf sees %d sections, checkObject %d (+1 null)", len(f.Sections), len(got))
	}
	for i, s := range got {
		if es := f.Sections[i+1]; es.Name != s.Name || es.Addr != s.Addr || es.Size != s.Size {
			t.Fatalf("section %d: got %s %#x %d, debug/elf has %s %#x %d", i+1, s.Name, s.Addr, s.Size, es.Name, es.Addr, es.Size)
		}
	}
}

// TestCheckObjectErrors checks that a symfile elfrel cannot read as a
// relocatable object of the process's byte order is refused with elfrel's
// typed error, located in the file.
func TestCheckObjectErrors(t *testing.T) {
	base := testObject(0x7f0000001000)
	le := binary.LittleEndian
	shoff := int64(le.Uint64(base[40:]))
	tests := []struct {
		name        string
		edit        func(b []byte) []byte
		order       binary.ByteOrder
		unsupported bool
		wantOff     int64
		want        string
	}{
		{name: "empty", edit: func(b []byte) []byte { return nil }, want: "too short for an ELF header"},
		{name: "magic", edit: func(b []byte) []byte { b[1] = 'X'; return b }, want: "bad magic number"},
		{name: "class", edit: func(b []byte) []byte { b[elf.EI_CLASS] = 1; return b }, unsupported: true, want: "ELFCLASS32"},
		{name: "byte order", order: binary.BigEndian, wantOff: elf.EI_DATA, want: "byte order LittleEndian does not match the process's BigEndian"},
		{name: "unknown encoding", edit: func(b []byte) []byte { b[elf.EI_DATA] = 9; return b }, wantOff: elf.EI_DATA, want: "data encoding"},
		{name: "ET_EXEC", edit: func(b []byte) []byte { le.PutUint16(b[16:], uint16(elf.ET_EXEC)); return b }, unsupported: true, want: "ELF type ET_EXEC, want ET_REL"},
		{name: "machine", edit: func(b []byte) []byte { le.PutUint16(b[18:], uint16(elf.EM_SPARCV9)); return b }, unsupported: true, want: "machine EM_SPARCV9"},
		{name: "shentsize", edit: func(b []byte) []byte { le.PutUint16(b[58:], 40); return b }, wantOff: 58, want: "e_shentsize is 40"},
		{name: "no section headers", edit: func(b []byte) []byte { le.PutUint64(b[40:], 0); le.PutUint16(b[60:], 0); return b }, wantOff: 40, want: "no section headers"},
		{name: "shoff past end", edit: func(b []byte) []byte { le.PutUint64(b[40:], 1<<40); return b }, wantOff: 40, want: "past the end of the file"},
		{name: "truncated table", edit: func(b []byte) []byte { return b[:len(b)-10] }, wantOff: shoff, want: "section headers do not fit"},
		{name: "shstrndx too big", edit: func(b []byte) []byte { le.PutUint16(b[62:], 99); return b }, wantOff: 62, want: "index 99 out of range"},
		{
			name:    "section contents past end",
			edit:    func(b []byte) []byte { le.PutUint64(b[shoff+shdrSize+32:], 1<<20); return b },
			wantOff: shoff + shdrSize, want: "section 1 contents",
		},
		{
			name:    "address wraps",
			edit:    func(b []byte) []byte { le.PutUint64(b[shoff+shdrSize+16:], ^uint64(0)-2); return b },
			wantOff: shoff + shdrSize + 16, want: "wraps around",
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
			_, _, err := checkObject(data, order)
			var fe *elfrel.FormatError
			var ue *elfrel.UnsupportedError
			switch {
			case tt.unsupported:
				if !errors.As(err, &ue) || !strings.Contains(ue.Msg, tt.want) {
					t.Errorf("got %v, want an UnsupportedError containing %q", err, tt.want)
				}
			case !errors.As(err, &fe) || fe.Off != tt.wantOff || !strings.Contains(fe.Msg, tt.want):
				t.Errorf("got %v, want a FormatError at offset %#x containing %q", err, tt.wantOff, tt.want)
			}
			oe := &ObjectError{Entry: 1, Symfile: 2, Size: 3, Err: err}
			if msg := oe.Error(); !strings.HasPrefix(msg, "entry 0x1: symfile 0x2 size 3: invalid ELF: ") || strings.Contains(msg, "symfile:") {
				t.Errorf("ObjectError says %q, want the entry, then the reason without elfrel's file name", msg)
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
		_, got, err := checkObject(buildELF(elf.ET_REL, tt.file, textAt(".text", 0x1000)), binary.LittleEndian)
		if err != nil || got != tt.want {
			t.Errorf("STT_FILE %q: got ident %q, %v; want %q", tt.file, got, err, tt.want)
		}
	}
}
