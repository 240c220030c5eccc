package disasm

import (
	"encoding/binary"
	"strconv"
)

// DecodeThumb decodes 32-bit ARM code in the Thumb instruction set (T32,
// Thumb-2 as ARMv7-A has it: what GCC for Debian's armhf emits by
// default) at addr, as GNU objdump 2.40 prints it. golang.org/x/arch
// decodes ARM mode only, so the integer instructions are decoded here,
// from the encoding tables of the ARM Architecture Reference Manual
// (ARMv7-A, A6); VFP instructions, whose Thumb encodings are their ARM
// encodings with the condition taken from the IT block, go through the
// ARM decoder, and Advanced SIMD (NEON) ones, the ARM ones under another
// prefix, through this package's (neon.go). An encoding that does not
// decode reads as objdump's undefined instruction, and decoding goes on
// after it.
//
// Instructions are two or four bytes, at even addresses; the condition
// of an instruction in an IT block is written on it as objdump writes it
// ("movne r0, #1", "addeq r0, r1" where outside a block the 16-bit form
// sets the flags: "adds r0, r1"). The IT state is tracked across the
// code given, so a caller decodes a function, not an instruction at a
// time. A tail shorter than the instruction it starts is BadText.
func DecodeThumb(code []byte, addr uint64, sym Symbolizer) []Inst {
	insts := make([]Inst, 0, len(code)/2+1)
	d := thumbDecoder{sym: sym}
	var next itState
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		if len(code)-off < 2 {
			insts = append(insts, Inst{Addr: pc, Len: 1, Text: BadText})
			break
		}
		hw1 := uint32(binary.LittleEndian.Uint16(code[off:]))
		n := 2
		if hw1>>11 >= 0x1d {
			n = 4
			if len(code)-off < 4 {
				insts = append(insts, Inst{Addr: pc, Len: len(code) - off, Text: BadText})
				break
			}
		}
		d.it, next = next, next.advance()
		d.b.Reset()
		d.comment = 0
		text := safeFormat(&d.b, func() {
			if n == 2 {
				d.thumb16(hw1, pc)
			} else {
				d.thumb32(hw1<<16|uint32(binary.LittleEndian.Uint16(code[off+2:])), pc)
			}
			d.writeComment()
		})
		if n == 2 && hw1&0xff00 == 0xbf00 && hw1&0xf != 0 {
			next = itState(hw1 & 0xff) // an IT instruction starts a block
		}
		insts = append(insts, Inst{Addr: pc, Len: n, Text: text})
		off += n
	}
	return insts
}

// itState is the IT block state of an instruction as the ITSTATE bits
// of the CPSR hold it: the base condition in bits 7:4 (its low bit
// flipped for "else" instructions as the block advances) and the mask in
// bits 3:0; 0 outside a block.
type itState uint8

// cond is the condition of the instruction in the block.
func (s itState) cond() uint32 { return uint32(s) >> 4 }

// advance returns the state of the instruction after.
func (s itState) advance() itState {
	if s&0xf == 8 || s == 0 {
		return 0
	}
	return s&0xe0 | (s<<1)&0x1f
}

// thumbCond spells a condition as objdump suffixes it in an IT block
// ("al" included).
var thumbCond = [16]string{"eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al", "<und>"}

// thumbDecoder decodes one instruction at a time into b.
type thumbDecoder struct {
	b   textBuf
	sym Symbolizer
	it  itState // the IT state of the instruction being decoded
	// comment is the value objdump repeats in hex after the operands
	// when it is above 32 or below -16 (binutils' arm-dis.c rule); 0 for
	// none.
	comment int64
}

// c is the condition suffix of the instruction: its IT block's, or none.
func (d *thumbDecoder) c() string {
	if d.it == 0 {
		return ""
	}
	return thumbCond[d.it.cond()]
}

// s is the suffix of a 16-bit instruction that sets the flags outside an
// IT block and not in one: "s" outside, the block's condition inside.
func (d *thumbDecoder) s() string {
	if d.it == 0 {
		return "s"
	}
	return thumbCond[d.it.cond()]
}

// op writes the mnemonic and its operands.
func (d *thumbDecoder) op(mnem string, args ...string) { writeInst(&d.b, mnem, args) }

// writeInst writes a 32-bit ARM instruction's text as objdump does: the
// mnemonic, a tab and the operands, separated by ", ".
func writeInst(b *textBuf, mnem string, args []string) {
	b.WriteString(mnem)
	for i, a := range args {
		if i == 0 {
			b.WriteByte('\t')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(a)
	}
}

// imm returns "#v" and makes v the instruction's comment value.
func (d *thumbDecoder) imm(v uint32) string {
	d.comment = int64(v)
	return "#" + strconv.FormatUint(uint64(v), 10)
}

// writeComment writes the hex comment objdump adds for a large immediate.
func (d *thumbDecoder) writeComment() {
	d.b.WriteString(armValueComment(d.comment))
}

// target returns the text of a branch target or literal address:
// "1f448 <sym+0x774>".
func (d *thumbDecoder) target(addr uint32) string {
	var t textBuf
	target(&t, uint64(addr), d.sym)
	d.comment = 0
	return t.String()
}

// undefined writes objdump's text for an encoding it does not decode.
func (d *thumbDecoder) undefined(x uint32, n int) {
	d.b.Reset()
	d.comment = 0
	d.b.WriteString("@ <UNDEFINED> instruction: 0x")
	s := strconv.FormatUint(uint64(x), 16)
	for i := len(s); i < 2*n; i++ {
		d.b.WriteByte('0')
	}
	d.b.WriteString(s)
}

// r is the name of core register n.
func r(n uint32) string { return armRegName(n & 15) }

// regList is a register list, "{r4, r5, lr}", of the registers whose
// bits are set in mask.
func regList(mask uint32) string {
	var t textBuf
	t.WriteByte('{')
	first := true
	for i := uint32(0); i < 16; i++ {
		if mask&(1<<i) != 0 {
			if !first {
				t.WriteString(", ")
			}
			first = false
			t.WriteString(armRegName(i))
		}
	}
	t.WriteByte('}')
	return t.String()
}

// thumbDP names the data-processing instructions of the 16-bit format
// "op rdn, rm", by bits 9:6.
var thumbDP = [16]string{"and", "eor", "lsl", "lsr", "asr", "adc", "sbc", "ror", "tst", "neg", "cmp", "cmn", "orr", "mul", "bic", "mvn"}

// thumb16 decodes the 16-bit instruction x at pc.
func (d *thumbDecoder) thumb16(x uint32, pc uint64) {
	c, s := d.c(), d.s()
	lo, mid := x&7, x>>3&7
	hi := x >> 8 & 7 // the register of the formats with an 8-bit immediate
	pc4 := uint32(pc) + 4
	switch {
	case x&0xffc0 == 0:
		d.op("mov"+s, r(lo), r(mid))
	case x>>13 == 0 && x>>11 != 3:
		// Shift by an immediate.
		amt := x >> 6 & 31
		switch x >> 11 {
		case 0:
			d.op("lsl"+s, r(lo), r(mid), d.imm(amt))
		case 1, 2:
			if amt == 0 {
				amt = 32
			}
			name := "lsr"
			if x>>11 == 2 {
				name = "asr"
			}
			d.op(name+s, r(lo), r(mid), "#"+strconv.Itoa(int(amt)))
		}
	case x>>11 == 3:
		// Add and subtract, registers and 3-bit immediates.
		name := "add"
		if x&0x200 != 0 {
			name = "sub"
		}
		if x&0x400 == 0 {
			d.op(name+s, r(lo), r(mid), r(x>>6&7))
		} else {
			d.op(name+s, r(lo), r(mid), d.imm(x>>6&7))
		}
	case x>>13 == 1:
		// mov, cmp, add and sub with an 8-bit immediate.
		switch x >> 11 & 3 {
		case 0:
			d.op("mov"+s, r(hi), d.imm(x&0xff))
		case 1:
			d.op("cmp"+c, r(hi), d.imm(x&0xff))
		case 2:
			d.op("add"+s, r(hi), d.imm(x&0xff))
		case 3:
			d.op("sub"+s, r(hi), d.imm(x&0xff))
		}
	case x>>10 == 0x10:
		op := x >> 6 & 15
		name := thumbDP[op]
		switch op {
		case 8, 10, 11: // tst, cmp, cmn set only the flags
			name += c
		default:
			name += s
		}
		d.op(name, r(lo), r(mid))
	case x>>10 == 0x11:
		// Special data processing and branch and exchange.
		rd, rm := lo|x>>4&8, x>>3&15
		switch x >> 8 & 3 {
		case 0:
			d.op("add"+c, r(rd), r(rm))
		case 1:
			d.op("cmp"+c, r(rd), r(rm))
		case 2:
			if x == 0x46c0 {
				d.op("nop" + c + "\t\t\t@ (mov r8, r8)")
				return
			}
			d.op("mov"+c, r(rd), r(rm))
		case 3:
			switch {
			case x&7 == 4:
				d.undefined(x, 2) // ARMv8-M's bxns and blxns
			case x&0x80 == 0:
				d.op("bx"+c, r(rm))
			case x&7 != 0:
				d.undefined(x, 2)
			default:
				d.op("blx"+c, r(rm))
			}
		}
	case x>>11 == 9:
		// ldr rt, [pc, #imm]: a literal, at the word-aligned pc.
		off := (x & 0xff) << 2
		d.op("ldr"+c, r(hi), "[pc, #"+strconv.Itoa(int(off))+"]\t@ ("+d.target(pc4&^3+off)+")")
	case x>>12 == 5:
		names := [8]string{"str", "strh", "strb", "ldrsb", "ldr", "ldrh", "ldrb", "ldrsh"}
		d.op(names[x>>9&7]+c, r(lo), "["+r(mid)+", "+r(x>>6&7)+"]")
	case x>>13 == 3:
		// Word and byte loads and stores with a 5-bit immediate.
		off := x >> 6 & 31
		name := "str"
		if x&0x800 != 0 {
			name = "ldr"
		}
		if x&0x1000 != 0 {
			name += "b"
		} else {
			off <<= 2
		}
		d.op(name+c, r(lo), "["+r(mid)+", "+d.imm(off)+"]")
	case x>>12 == 8:
		name := "strh"
		if x&0x800 != 0 {
			name = "ldrh"
		}
		d.op(name+c, r(lo), "["+r(mid)+", "+d.imm(x>>6&31<<1)+"]")
	case x>>12 == 9:
		name := "str"
		if x&0x800 != 0 {
			name = "ldr"
		}
		d.op(name+c, r(hi), "[sp, "+d.imm((x&0xff)<<2)+"]")
	case x>>11 == 0x14:
		off := (x & 0xff) << 2
		d.op("add"+c, r(hi), "pc", "#"+strconv.Itoa(int(off))+"\t@ (adr "+r(hi)+", "+d.target(pc4&^3+off)+")")
	case x>>11 == 0x15:
		d.op("add"+c, r(hi), "sp", d.imm((x&0xff)<<2))
	case x>>12 == 0xb:
		d.misc16(x, pc4)
	case x>>12 == 0xc:
		if x&0x800 == 0 {
			d.op("stmia"+c, r(hi)+"!", regList(x&0xff))
			return
		}
		wb := "!"
		if x&(1<<hi) != 0 {
			wb = "" // the base is loaded: no write-back
		}
		d.op("ldmia"+c, r(hi)+wb, regList(x&0xff))
	case x>>12 == 0xd:
		switch cond := x >> 8 & 15; cond {
		case 14:
			d.op("udf"+c, d.imm(x&0xff))
		case 15:
			d.op("svc"+c, strconv.Itoa(int(x&0xff)))
			d.comment = int64(x & 0xff)
		default:
			off := int32(x<<24) >> 23
			d.op("b"+thumbCond[cond]+".n", d.target(pc4+uint32(off)))
			d.unpredictableInIT()
		}
	case x>>11 == 0x1c:
		off := int32(x<<21) >> 20
		d.op("b"+c+".n", d.target(pc4+uint32(off)))
	default:
		d.undefined(x, 2)
	}
}

// unpredictableInIT writes objdump's warning for an instruction that may
// not be in an IT block, if it is in one.
func (d *thumbDecoder) unpredictableInIT() {
	if d.it != 0 {
		d.b.WriteString("\t@ unpredictable <IT:" + thumbCond[d.it.cond()] + ">")
	}
}

// misc16 decodes the 16-bit miscellaneous instructions (bits 15:12 1011).
func (d *thumbDecoder) misc16(x, pc4 uint32) {
	c := d.c()
	switch {
	case x&0xff00 == 0xb000:
		name := "add"
		if x&0x80 != 0 {
			name = "sub"
		}
		d.op(name+c, "sp", d.imm((x&0x7f)<<2))
	case x&0xf500 == 0xb100:
		name := "cbz"
		if x&0x800 != 0 {
			name = "cbnz"
		}
		d.op(name, r(x&7), d.target(pc4+(x>>3&0x1f)<<1+(x>>9&1)<<6))
		d.unpredictableInIT()
	case x&0xff00 == 0xb200:
		names := [4]string{"sxth", "sxtb", "uxth", "uxtb"}
		d.op(names[x>>6&3]+c, r(x&7), r(x>>3&7))
	case x&0xfe00 == 0xb400:
		d.op("push"+c, regList(x&0xff|x>>8&1<<14))
	case x&0xfe00 == 0xbc00:
		d.op("pop"+c, regList(x&0xff|x>>8&1<<15))
	case x&0xfff7 == 0xb650:
		end := "le"
		if x&8 != 0 {
			end = "be"
		}
		d.op("setend", end)
		d.unpredictableInIT()
	case x&0xffe8 == 0xb660:
		name := "cpsie"
		if x&0x10 != 0 {
			name = "cpsid"
		}
		var flags string
		for i, f := range "aif" {
			if x&(4>>i) != 0 {
				flags += string(f)
			}
		}
		d.op(name, flags)
		d.unpredictableInIT()
	case x&0xff00 == 0xba00:
		switch x >> 6 & 3 {
		case 0:
			d.op("rev"+c, r(x&7), r(x>>3&7))
		case 1:
			d.op("rev16"+c, r(x&7), r(x>>3&7))
		case 2:
			d.op("hlt", "0x"+hex4(x&0x3f))
		case 3:
			d.op("revsh"+c, r(x&7), r(x>>3&7))
		}
	case x&0xff00 == 0xbe00:
		d.op("bkpt", "0x"+hex4(x&0xff))
	case x&0xff00 == 0xbf00:
		if x&0xf != 0 {
			// IT: "ite ne", a t or an e for each instruction after the
			// first, read off the mask against the condition's low bit.
			d.b.WriteString("it")
			for m := x << 1; m&0xf != 0; m <<= 1 {
				if (x^m)&0x10 != 0 {
					d.b.WriteByte('e')
				} else {
					d.b.WriteByte('t')
				}
			}
			d.b.WriteString("\t" + thumbCond[x>>4&15])
			d.unpredictableInIT()
			return
		}
		hints := [8]string{"nop", "yield", "wfe", "wfi", "sev", "sevl"}
		if op := x >> 4 & 15; op < 6 {
			d.op(hints[op] + c)
		} else {
			d.op("nop"+c, "{"+strconv.Itoa(int(op))+"}")
		}
	default:
		d.undefined(x, 2)
	}
}

// hex4 is v in hex, four digits at least.
func hex4(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}
