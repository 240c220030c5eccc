package disasm

import (
	"debug/elf"
	"encoding/binary"
	"io"

	"golang.org/x/arch/arm/armasm"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/loong64/loong64asm"
	"golang.org/x/arch/ppc64/ppc64asm"
	"golang.org/x/arch/riscv64/riscv64asm"
	"golang.org/x/arch/s390x/s390xasm"
	"golang.org/x/arch/x86/x86asm"
)

// GoSymLookup names the symbol holding addr and the symbol's address,
// or returns "" and 0 if no symbol holds it: the symbol lookup of
// golang.org/x/arch's GoSyntax printers (x86asm.SymLookup). They print
// a branch target or a PC-relative operand as name(SB) when it is the
// start of the symbol, and a data reference as name+off(SB).
type GoSymLookup func(addr uint64) (name string, base uint64)

// GoBadText is the text of bytes that do not decode in Go syntax, as go
// tool objdump and go tool pprof print it.
const GoBadText = "?"

// goMachine decodes one instruction in Go syntax: its text and length,
// or ok false if code does not start with an instruction. code runs
// from the instruction to the end of the code being decoded; text reads
// it by address (literal pools). It may panic on bad input; the caller
// recovers.
type goMachine struct {
	decode func(code []byte, pc uint64, bo binary.ByteOrder, lookup GoSymLookup) (text string, n int, ok bool)
	// bad is the number of bytes skipped after bytes that do not
	// decode: Go's disassemblers step by the machine's smallest
	// instruction.
	bad int
}

// goMachineFor returns the Go-syntax decoder of machine m with class c,
// as go tool objdump has one per GOARCH: 386, amd64, arm (ARM mode,
// which is all Go emits), arm64, loong64, ppc64 and ppc64le, riscv64 and
// s390x.
func goMachineFor(m elf.Machine, c elf.Class) (goMachine, bool) {
	switch {
	case m == elf.EM_X86_64:
		return goMachine{decode: goX86(64), bad: 1}, true
	case m == elf.EM_386:
		return goMachine{decode: goX86(32), bad: 1}, true
	case m == elf.EM_AARCH64:
		return goMachine{decode: goARM64, bad: 4}, true
	case m == elf.EM_ARM:
		return goMachine{decode: goARM, bad: 4}, true
	case m == elf.EM_LOONGARCH && c == elf.ELFCLASS64:
		return goMachine{decode: goLoong64, bad: 4}, true
	case m == elf.EM_PPC64:
		return goMachine{decode: goPPC64, bad: 4}, true
	case m == elf.EM_RISCV && c == elf.ELFCLASS64:
		return goMachine{decode: goRISCV64, bad: 2}, true
	case m == elf.EM_S390:
		return goMachine{decode: goS390X, bad: 2}, true
	}
	return goMachine{}, false
}

// HasGoSyntax reports whether DecodeGo decodes code of machine m in a
// file of class c: the machines Go compiles for, but 32-bit MIPS,
// 64-bit MIPS and WebAssembly, for which golang.org/x/arch has no
// decoder.
func HasGoSyntax(m elf.Machine, c elf.Class) bool {
	_, ok := goMachineFor(m, c)
	return ok
}

// DecodeGo decodes code, which is loaded at addr, for machine m in a
// file of class c and byte order bo, in Go's assembler syntax: the text
// go tool objdump and go tool pprof show (golang.org/x/arch's GoSyntax
// printers, with lookup naming symbols; nil names none). Bytes that do
// not decode are GoBadText, one byte long on x86, two on RISC-V and
// s390x, four elsewhere (the last one shorter if the code ends first),
// and decoding goes on after them, as there. The instructions cover code
// exactly, in address order; a panic while decoding or printing one
// makes it GoBadText. The only error is *UnsupportedMachineError, for a
// machine HasGoSyntax rejects.
func DecodeGo(m elf.Machine, c elf.Class, bo binary.ByteOrder, code []byte, addr uint64, lookup GoSymLookup) ([]Inst, error) {
	gm, ok := goMachineFor(m, c)
	if !ok {
		return nil, &UnsupportedMachineError{Machine: m}
	}
	if bo == nil {
		bo = binary.LittleEndian
	}
	if lookup == nil {
		lookup = func(uint64) (string, uint64) { return "", 0 }
	}
	insts := make([]Inst, 0, len(code)/4+1)
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		text, n, ok := safeGo(gm, code[off:], pc, bo, lookup)
		if !ok || n <= 0 {
			text, n = GoBadText, gm.bad
		}
		n = min(n, len(code)-off)
		insts = append(insts, Inst{Addr: pc, Len: n, Text: text})
		off += n
	}
	return insts, nil
}

// safeGo decodes the instruction at the start of code with gm, turning
// a panic into ok false.
func safeGo(gm goMachine, code []byte, pc uint64, bo binary.ByteOrder, lookup GoSymLookup) (text string, n int, ok bool) {
	defer func() {
		if recover() != nil {
			text, n, ok = "", 0, false
		}
	}()
	return gm.decode(code, pc, bo, lookup)
}

// goX86 decodes x86 code in mode 32 or 64. As in go tool objdump, an
// instruction x86asm decodes with no opcode does not decode. The
// corrections of decodeOneX86 apply (the mode of VEX and EVEX
// instructions, their RIP-relative operands), and VZEROUPPER and
// VZEROALL are three bytes long: x86asm, since it decodes AVX, reads a
// ModRM byte after them, which they have not, and would decode the
// rest of the function out of step (the Go toolchain's older copy does
// not).
func goX86(mode int) func([]byte, uint64, binary.ByteOrder, GoSymLookup) (string, int, bool) {
	return func(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
		if len(code) >= 3 && code[0] == 0xC5 && code[2] == 0x77 && (code[1] == 0xF8 || code[1] == 0xFC) {
			if code[1] == 0xF8 {
				return "VZEROUPPER", 3, true
			}
			return "VZEROALL", 3, true
		}
		inst, ok := decodeOneX86(code, mode)
		if !ok {
			return "", 0, false
		}
		return x86asm.GoSyntax(inst, pc, x86asm.SymLookup(lookup)), inst.Len, true
	}
}

func goARM64(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := arm64asm.Decode(code)
	if err != nil || inst.Op == 0 {
		return "", 0, false
	}
	return arm64asm.GoSyntax(inst, pc, lookup, codeReader{code, pc}), 4, true
}

func goARM(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := armasm.Decode(code, armasm.ModeARM)
	if err != nil || inst.Len == 0 || inst.Op == 0 {
		return "", 0, false
	}
	return armasm.GoSyntax(inst, pc, lookup, codeReader{code, pc}), inst.Len, true
}

func goLoong64(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := loong64asm.Decode(code)
	if err != nil || inst.Op == 0 {
		return "", 0, false
	}
	return loong64asm.GoSyntax(inst, pc, lookup), 4, true
}

// goPPC64 decodes PowerPC64 code. go tool objdump takes any
// instruction ppc64asm decodes, an opcode of 0 included.
func goPPC64(code []byte, pc uint64, bo binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := ppc64asm.Decode(code, bo)
	if err != nil || inst.Len == 0 {
		return "", 0, false
	}
	return ppc64asm.GoSyntax(inst, pc, lookup), inst.Len, true
}

func goRISCV64(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := riscv64asm.Decode(code)
	if err != nil || inst.Op == 0 || inst.Len == 0 {
		return "", 0, false
	}
	return riscv64asm.GoSyntax(inst, pc, lookup, codeReader{code, pc}), inst.Len, true
}

func goS390X(code []byte, pc uint64, _ binary.ByteOrder, lookup GoSymLookup) (string, int, bool) {
	inst, err := s390xasm.Decode(code)
	if err != nil || inst.Len == 0 || inst.Op == 0 {
		return "", 0, false
	}
	return s390xasm.GoSyntax(inst, pc, lookup), inst.Len, true
}

// codeReader reads code, loaded at pc, by address: what the ARM, AArch64
// and RISC-V printers read a PC-relative load's constant with. Bytes
// outside code read as the end of the file.
type codeReader struct {
	code []byte
	pc   uint64
}

func (r codeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off) < r.pc || uint64(off)-r.pc >= uint64(len(r.code)) {
		return 0, io.EOF
	}
	n := copy(p, r.code[uint64(off)-r.pc:])
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}
