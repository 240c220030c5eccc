package disasm

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

// TestDecodeGo checks instructions of the Go runtime and of a Go
// program, for every machine, against the text go tool objdump prints
// for them (Go 1.26, the program's main.main), and bad bytes and
// truncated tails. Whole binaries are
// compared in internal/objtool (TestGoDisasmSameAsGoObjdump).
func TestDecodeGo(t *testing.T) {
	lookup := func(addr uint64) (string, uint64) {
		if addr >= 0x47c4a0 && addr < 0x47c500 {
			return "runtime.makeslice", 0x47c4a0
		}
		return "", 0
	}
	le, be := binary.LittleEndian, binary.BigEndian
	for _, tt := range []struct {
		name string
		m    elf.Machine
		c    elf.Class
		bo   binary.ByteOrder
		code []byte
		addr uint64
		want []string // address/length text
	}{
		{name: "amd64", m: elf.EM_X86_64, c: elf.ELFCLASS64, bo: le, addr: 0x4a1680,
			code: []byte{0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0xe2, 0x00, 0x00, 0x00, 0x55, 0x48, 0x89, 0xe5, 0xe8, 0x0d, 0xae, 0xfd, 0xff},
			want: []string{"0x4a1680/4 CMPQ SP, 0x10(R14)", "0x4a1684/6 JBE 0x4a176c", "0x4a168a/1 PUSHQ BP", "0x4a168b/3 MOVQ SP, BP", "0x4a168e/5 CALL runtime.makeslice(SB)"}},
		{name: "amd64 bad and cut short", m: elf.EM_X86_64, c: elf.ELFCLASS64, bo: le, addr: 0x1000,
			code: []byte{0x06, 0xc5, 0xf8, 0x77, 0xe9, 0x60, 0xfe},
			want: []string{"0x1000/1 ?", "0x1001/3 VZEROUPPER", "0x1004/1 ?", "0x1005/1 ?", "0x1006/1 ?"}},
		{name: "386", m: elf.EM_386, c: elf.ELFCLASS32, bo: le, addr: 0x80ebfad,
			code: []byte{0x3b, 0x61, 0x08, 0x83, 0xec, 0x38},
			want: []string{"0x80ebfad/3 CMPL SP, 0x8(CX)", "0x80ebfb0/3 SUBL $0x38, SP"}},
		{name: "arm64", m: elf.EM_AARCH64, c: elf.ELFCLASS64, bo: le, addr: 0xa92d0,
			code: words(le, 0xf9400b90, 0xeb3063ff, 0x54000789, 0xf8190ffe, 0x00000000),
			want: []string{"0xa92d0/4 MOVD 16(R28), R16", "0xa92d4/4 CMP R16, RSP", "0xa92d8/4 BLS 60(PC)", "0xa92dc/4 MOVD.W R30, -112(RSP)", "0xa92e0/4 ?"}},
		{name: "arm64 tail", m: elf.EM_AARCH64, c: elf.ELFCLASS64, bo: le, addr: 0x10,
			code: []byte{0x90, 0x0b, 0x40},
			want: []string{"0x10/3 ?"}},
		{name: "arm", m: elf.EM_ARM, c: elf.ELFCLASS32, bo: le, addr: 0xc2d00,
			code: words(le, 0xe59a1008, 0xe15d0001, 0x9a000040, 0xe52de03c),
			want: []string{"0xc2d00/4 MOVW 0x8(R10), R1", "0xc2d04/4 CMP R1, R13", "0xc2d08/4 B.LS 0xc2e10", "0xc2d0c/4 MOVW.W R14, -0x3c(R13)"}},
		{name: "ppc64le", m: elf.EM_PPC64, c: elf.ELFCLASS64, bo: le, addr: 0xbaf50,
			code: words(le, 0xeade0010, 0x7c360840, 0x41800010, 0x7ca802a6),
			want: []string{"0xbaf50/4 MOVD 16(R30),R22", "0xbaf54/4 CMPU R22,R1", "0xbaf58/4 BLT 0xbaf68", "0xbaf5c/4 MOVD LR,R5"}},
		{name: "ppc64", m: elf.EM_PPC64, c: elf.ELFCLASS64, bo: be, addr: 0xb8b40,
			code: append(words(be, 0xeade0010, 0x7c360840, 0x00000000), 0x7c, 0x36, 0x08),
			want: []string{"0xb8b40/4 MOVD 16(R30),R22", "0xb8b44/4 CMPU R22,R1", "0xb8b48/4 WORD $0", "0xb8b4c/3 ?"}},
		{name: "riscv64", m: elf.EM_RISCV, c: elf.ELFCLASS64, bo: le, addr: 0x8f608,
			code: append(words(le, 0x010db303, 0xfa113023), 0x1d, 0x71, 0xff, 0xff),
			want: []string{"0x8f608/4 MOV 16(X27), X6", "0x8f60c/4 MOV X1, -96(X2)", "0x8f610/2 ADDI $-96, X2, X2", "0x8f612/2 ?"}},
		{name: "s390x", m: elf.EM_S390, c: elf.ELFCLASS64, bo: be, addr: 0xc8e90,
			code: []byte{0xe3, 0xa0, 0xd0, 0x10, 0x00, 0x04, 0xe3, 0xe0, 0xff, 0xa0, 0xff, 0x24, 0, 0},
			want: []string{"0xc8e90/6 MOVD 16(R13), R10", "0xc8e96/6 MOVD R14, -96(R15)", "0xc8e9c/2 ?"}},
		{name: "loong64", m: elf.EM_LOONGARCH, c: elf.ELFCLASS64, bo: le, addr: 0xb7b80,
			code: words(le, 0x28c042d4, 0x00128e94, 0x29fe8061, 0x02fe8063),
			want: []string{"0xb7b80/4 MOVV 16(R22), R20", "0xb7b84/4 SGTU R3, R20", "0xb7b88/4 MOVV R1, -96(R3)", "0xb7b8c/4 ADDV $-96, R3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			insts, err := DecodeGo(tt.m, tt.c, tt.bo, tt.code, tt.addr, lookup)
			if err != nil {
				t.Fatal(err)
			}
			checkCover(t, insts, tt.code, tt.addr)
			var got []string
			for _, in := range insts {
				got = append(got, fmt.Sprintf("%#x/%d %s", in.Addr, in.Len, in.Text))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestDecodeGoMachines: the machines Go has no disassembler for are
// errors.
func TestDecodeGoMachines(t *testing.T) {
	for _, tt := range []struct {
		m  elf.Machine
		c  elf.Class
		ok bool
	}{
		{m: elf.EM_X86_64, c: elf.ELFCLASS64, ok: true},
		{m: elf.EM_RISCV, c: elf.ELFCLASS64, ok: true},
		{m: elf.EM_RISCV, c: elf.ELFCLASS32},
		{m: elf.EM_LOONGARCH, c: elf.ELFCLASS32},
		{m: elf.EM_MIPS, c: elf.ELFCLASS32},
		{m: elf.EM_MIPS, c: elf.ELFCLASS64},
		{m: elf.EM_PPC, c: elf.ELFCLASS32},
	} {
		if got := HasGoSyntax(tt.m, tt.c); got != tt.ok {
			t.Errorf("HasGoSyntax(%v, %v) = %v, want %v", tt.m, tt.c, got, tt.ok)
		}
		_, err := DecodeGo(tt.m, tt.c, nil, []byte{0, 0, 0, 0}, 0, nil)
		if (err == nil) != tt.ok {
			t.Errorf("DecodeGo(%v, %v): %v", tt.m, tt.c, err)
		}
	}
}

// FuzzDecodeGo: whatever the bytes, the instructions cover them exactly,
// in order, each with a text.
func FuzzDecodeGo(f *testing.F) {
	f.Add([]byte{0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0xe2, 0x00, 0x00, 0x00, 0xc5, 0xf8, 0x77}, uint64(0x401000), uint8(0))
	f.Add([]byte{0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x05, 0, 0, 0, 0}, uint64(0xfffffffffffffff0), uint8(0))
	f.Add(words(binary.LittleEndian, 0x58000050, 0xf9400b90, 0x54000789), uint64(0x1000), uint8(1)) // a literal load
	f.Add([]byte{0x3b, 0x61, 0x08, 0x65, 0x8b, 0x0d}, uint64(0x8000000), uint8(2))
	f.Add(words(binary.LittleEndian, 0xe59fb108, 0xe59a1008), uint64(0xc2d10), uint8(3))
	f.Add([]byte{0x10, 0x00, 0xde, 0xea, 0x40, 0x08, 0x36, 0x7c}, uint64(0x1000), uint8(4))
	f.Add([]byte{0x03, 0xb3, 0x0d, 0x01, 0x71, 0x1d, 0x97, 0xaf}, uint64(0x1000), uint8(6))
	f.Add([]byte{0xe3, 0xa0, 0xd0, 0x10, 0x00, 0x04, 0xc4, 0x08}, uint64(0x1000), uint8(7))
	f.Add([]byte{0xd4, 0x42, 0xc0, 0x28, 0x80, 0x00, 0x80, 0x2c}, uint64(0x1000), uint8(8))
	f.Fuzz(func(t *testing.T, code []byte, addr uint64, mode uint8) {
		targets := [...]struct {
			m  elf.Machine
			c  elf.Class
			bo binary.ByteOrder
		}{
			{elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian}, {elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian},
			{elf.EM_386, elf.ELFCLASS32, binary.LittleEndian}, {elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian},
			{elf.EM_PPC64, elf.ELFCLASS64, binary.BigEndian}, {elf.EM_PPC64, elf.ELFCLASS64, binary.LittleEndian},
			{elf.EM_RISCV, elf.ELFCLASS64, binary.LittleEndian}, {elf.EM_S390, elf.ELFCLASS64, binary.BigEndian},
			{elf.EM_LOONGARCH, elf.ELFCLASS64, binary.LittleEndian},
		}
		tg := targets[int(mode)%len(targets)]
		lookup := func(a uint64) (string, uint64) {
			if a&0xff == 0 {
				return "sym", a
			}
			return "", 0
		}
		insts, err := DecodeGo(tg.m, tg.c, tg.bo, code, addr, lookup)
		if err != nil {
			t.Fatal(err)
		}
		checkCover(t, insts, code, addr)
	})
}

// words returns the 32-bit words w in byte order bo.
func words(bo binary.ByteOrder, w ...uint32) []byte {
	out := make([]byte, 4*len(w))
	for i, x := range w {
		bo.PutUint32(out[4*i:], x)
	}
	return out
}
