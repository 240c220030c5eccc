// Package disasm decodes machine code into the text pprof shows in its
// disassembly views (-disasm, -weblist, the web UI's disassembly page).
//
// It replaces upstream pprof's objdump subprocess: the instructions come
// from golang.org/x/arch's decoders, and this package formats them the way
// GNU objdump 2.40 (`objdump -d --no-show-raw-insn`, with `-M intel` for
// Intel syntax) prints them, because that is the text upstream pprof shows:
// its binutils package takes everything after "address:" of objdump's
// output as the instruction text. doc/disasm.md lists the remaining
// differences from objdump, all cosmetic, and the measured agreement.
//
// DecodeGo prints Go's assembler syntax instead, as go tool objdump and
// go tool pprof do, with x/arch's own GoSyntax printers: the text of Go
// binaries' code views.
//
// Supported machines are x86-64 (AT&T or Intel syntax), 386, AArch64,
// RISC-V (RV64GC; RV32GC with DecodeRV32), PowerPC64 (either byte
// order), 32-bit PowerPC, s390x, LoongArch (LA64 with its LSX and LASX
// vector extensions) and 32-bit ARM in ARM mode (A32; not Thumb, not
// NEON).
package disasm

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Inst is one decoded machine instruction.
type Inst struct {
	// Addr is the address of the instruction's first byte.
	Addr uint64
	// Len is the number of bytes the instruction occupies; always >= 1.
	Len int
	// Text is the instruction as objdump prints it after "address:",
	// for example "call   401126 <foo+0x16>". Bytes that do not decode
	// read as objdump shows them: "(bad)" (x86), ".byte  0xe8" for each
	// byte of an x86 instruction cut off by the end of the code, "udf
	// #0" or ".inst 0x02000028 ; undefined" (AArch64), and BadText for
	// an AArch64 tail shorter than four bytes.
	Text string
}

// Symbolizer names an address for branch/call targets: the symbol holding
// addr and its start. ok is false when no symbol holds addr; the target is
// then shown as a bare address. A nil Symbolizer names nothing.
type Symbolizer func(addr uint64) (name string, base uint64, ok bool)

// BadText is the text of an x86 byte that does not start an
// instruction, and of an AArch64 tail shorter than an instruction.
const BadText = "(bad)"

// UnsupportedMachineError is returned by Decode for a machine it has no
// decoder for.
type UnsupportedMachineError struct {
	Machine elf.Machine
}

func (e *UnsupportedMachineError) Error() string {
	return fmt.Sprintf("disasm: no decoder for machine %v", e.Machine)
}

// Decode decodes code, which is loaded at addr, for machine m
// (elf.EM_X86_64, elf.EM_386, elf.EM_AARCH64, elf.EM_RISCV, elf.EM_PPC64,
// elf.EM_PPC, elf.EM_S390, elf.EM_LOONGARCH, elf.EM_ARM, elf.EM_MIPS)
// whose instructions are in byte order bo (the object file's; it matters
// for PowerPC and MIPS, which run either way). EM_RISCV code is RV64GC
// (see DecodeRV32 for a 32-bit file's). EM_ARM code is decoded as
// ARM-mode (A32) instructions: telling Thumb code (DecodeThumb) and
// literal pools (Data) apart, by the object's mapping symbols, is the
// caller's. EM_MIPS code gets o32's register names (see DecodeMIPS for
// the other ABIs'). Intel syntax
// applies to x86 only; the others are in GNU syntax. Bytes that do not
// decode become one instruction each (x86: one byte; AArch64, LoongArch,
// ARM and MIPS: four) and decoding continues after them, so the result covers
// all of code, in address order. Decoding is linear in len(code). A panic
// while decoding or formatting one instruction, one in sym included,
// makes that instruction BadText rather than ending the process. The only
// error is *UnsupportedMachineError.
func Decode(m elf.Machine, bo binary.ByteOrder, code []byte, addr uint64, intelSyntax bool, sym Symbolizer) ([]Inst, error) {
	switch m {
	case elf.EM_X86_64:
		return decodeX86(code, addr, 64, intelSyntax, sym), nil
	case elf.EM_386:
		return decodeX86(code, addr, 32, intelSyntax, sym), nil
	case elf.EM_AARCH64:
		return decodeARM64(code, addr, sym), nil
	case elf.EM_RISCV:
		return decodeRISCV64(code, addr, sym), nil
	case elf.EM_PPC64:
		if bo == nil {
			bo = binary.LittleEndian
		}
		return decodePPC64(code, addr, bo, sym), nil
	case elf.EM_PPC:
		// 32-bit PowerPC: the 64-bit ISA's 32-bit subset, which the same
		// decoder reads.
		if bo == nil {
			bo = binary.BigEndian
		}
		return decodePPC64(code, addr, bo, sym), nil
	case elf.EM_S390:
		return decodeS390X(code, addr, sym), nil
	case elf.EM_LOONGARCH:
		return decodeLoong64(code, addr, sym), nil
	case elf.EM_ARM:
		return decodeARM(code, addr, sym), nil
	case elf.EM_MIPS:
		return DecodeMIPS(code, addr, bo, false, sym), nil
	}
	return nil, &UnsupportedMachineError{Machine: m}
}

// target formats a code address the way objdump does after a branch
// mnemonic or in a "# address" comment: bare hex followed by "<sym>" or
// "<sym+0xoff>" when the symbolizer names the address, "0x" and hex when
// it does not.
func target(b *textBuf, addr uint64, sym Symbolizer) {
	var buf [16]byte
	name, base, ok := "", uint64(0), false
	if sym != nil {
		name, base, ok = sym(addr)
	}
	if !ok || name == "" || base > addr {
		b.WriteString("0x")
		b.Write(strconv.AppendUint(buf[:0], addr, 16))
		return
	}
	b.Write(strconv.AppendUint(buf[:0], addr, 16))
	b.WriteString(" <")
	b.WriteString(name)
	if addr != base {
		b.WriteString("+0x")
		b.Write(strconv.AppendUint(buf[:0], addr-base, 16))
	}
	b.WriteByte('>')
}

// padMnemonic writes the mnemonic (with its prefixes) followed by the
// spaces objdump puts before the operands: objdump pads the mnemonic to
// six columns and adds one space.
func padMnemonic(b *textBuf, mnemonic string) {
	b.WriteString(mnemonic)
	for n := len(mnemonic); n < 6; n++ {
		b.WriteByte(' ')
	}
	b.WriteByte(' ')
}

// textBuf collects the text of one instruction at a time; unlike a
// strings.Builder it keeps its memory across instructions, so that each
// text costs one allocation.
type textBuf struct{ buf []byte }

func (t *textBuf) Reset()               { t.buf = t.buf[:0] }
func (t *textBuf) String() string       { return string(t.buf) }
func (t *textBuf) Write(p []byte)       { t.buf = append(t.buf, p...) }
func (t *textBuf) WriteString(s string) { t.buf = append(t.buf, s...) }

// WriteByte appends c; it never fails (the error is io.ByteWriter's).
func (t *textBuf) WriteByte(c byte) error {
	t.buf = append(t.buf, c)
	return nil
}

// safeFormat runs format, which writes one instruction's text to b, and
// returns that text, or BadText if format panics: no input may take the
// process down.
func safeFormat(b *textBuf, format func()) (text string) {
	defer func() {
		if recover() != nil {
			text = BadText
		}
	}()
	format()
	return b.String()
}

// decodeWords decodes code at addr for a machine whose instructions are
// all four bytes: text gives the text of the word at pc, writing it in b
// (reset for each word) or not; a tail shorter than a word is BadText.
func decodeWords(code []byte, addr uint64, text func(b *textBuf, word []byte, pc uint64) string) []Inst {
	insts := make([]Inst, 0, len(code)/4+1)
	var b textBuf
	for off := 0; off < len(code); off += 4 {
		pc := addr + uint64(off)
		if len(code)-off < 4 {
			insts = append(insts, Inst{Addr: pc, Len: len(code) - off, Text: BadText})
			break
		}
		b.Reset()
		insts = append(insts, Inst{Addr: pc, Len: 4, Text: text(&b, code[off:off+4], pc)})
	}
	return insts
}

// gnuOperands splits a decoder's GNU-syntax text into its mnemonic and
// its comma-separated operands.
func gnuOperands(text string) (mnem string, args []string) {
	mnem, ops, _ := strings.Cut(text, " ")
	if ops != "" {
		args = strings.Split(ops, ",")
	}
	return mnem, args
}

// branchTarget is the operand a decoder printed for a branch target
// (text) and the address it stands for.
type branchTarget struct {
	text string
	addr uint64
}

// writeOperands writes args to b, separated by commas, the first one
// that reads as t.text replaced by t's address and symbol, the objdump
// way.
func writeOperands(b *textBuf, args []string, t branchTarget, sym Symbolizer) {
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		if t.text != "" && a == t.text {
			target(b, t.addr, sym)
			t.text = ""
			continue
		}
		b.WriteString(a)
	}
}

// Helpers the decoders of several machines share.

// fld is bits hi:lo of the instruction word w.
func fld(w uint32, hi, lo uint) uint32 { return w >> lo & (1<<(hi-lo+1) - 1) }

// imm is "#v".
func imm(v int64) string { return "#" + strconv.FormatInt(v, 10) }

// sext sign-extends the n-bit field v.
func sext(v uint32, n uint) int64 { return int64(int32(v<<(32-n)) >> (32 - n)) }

// names picks from a table of mnemonics, "" where it has none.
func names(table []string, i uint32) string {
	if int(i) < len(table) {
		return table[i]
	}
	return ""
}

// itoa is the decimal text of v.
func itoa(v uint32) string { return strconv.Itoa(int(v)) }
