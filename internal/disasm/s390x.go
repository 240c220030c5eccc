package disasm

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/arch/s390x/s390xasm"
)

// decodeS390X decodes IBM z/Architecture code at addr. Instructions are
// two, four or six bytes, as the first two bits of their first byte say;
// bytes that do not decode are, as objdump shows them, one ".long" word
// (".short" for a last halfword).
func decodeS390X(code []byte, addr uint64, sym Symbolizer) []Inst {
	insts := make([]Inst, 0, len(code)/4+1)
	var b textBuf
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		n := s390xLen(code[off])
		if len(code)-off < n {
			insts = append(insts, Inst{Addr: pc, Len: len(code) - off, Text: BadText})
			break
		}
		inst, ok := decodeOneS390X(code[off : off+n])
		if !ok {
			n = min(4, len(code)-off)
			insts = append(insts, Inst{Addr: pc, Len: n, Text: badS390X(code[off : off+n])})
			off += n
			continue
		}
		b.Reset()
		text := safeFormat(&b, func() { formatS390X(&b, inst, pc, sym) })
		insts = append(insts, Inst{Addr: pc, Len: n, Text: text})
		off += n
	}
	return insts
}

// s390xLen returns the length of the instruction whose first byte is c.
func s390xLen(c byte) int {
	switch c >> 6 {
	case 0:
		return 2
	case 3:
		return 6
	}
	return 4
}

// decodeOneS390X decodes the instruction that is all of src; ok is false
// for bytes that do not decode (a decoder panic included).
func decodeOneS390X(src []byte) (inst s390xasm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := s390xasm.Decode(src)
	if err != nil || inst.Op == 0 || inst.Len != len(src) {
		return s390xasm.Inst{}, false
	}
	return inst, true
}

// badS390X returns objdump's text for bytes that do not decode: the
// word (or halfword) b.
func badS390X(b []byte) string {
	if len(b) == 4 {
		return fmt.Sprintf(".long\t0x%08x", binary.BigEndian.Uint32(b))
	}
	return fmt.Sprintf(".short\t0x%04x", binary.BigEndian.Uint16(b))
}

// s390xUnsigned lists the instructions whose last operand, a 16- or
// 32-bit immediate, objdump prints unsigned where the decoder prints it
// signed (bits) or the other way round (-bits).
var s390xUnsigned = map[string]int{
	"llihf": 32, "llilf": 32, "iihf": 32, "iilf": 32, "oihf": 32, "oilf": 32,
	"nihf": 32, "nilf": 32, "xihf": 32, "xilf": 32, "clfi": 32, "clgfi": 32,
	"alfi": 32, "algfi": 32, "slfi": 32, "slgfi": 32,
	"nill": 16, "nilh": 16, "nihl": 16, "nihh": 16, "oill": 16, "oilh": 16, "oihl": 16, "oihh": 16,
	"llill": 16, "llilh": 16, "llihl": 16, "llihh": 16, "iill": 16, "iilh": 16, "iihl": 16, "iihh": 16,
	"tmll": 16, "tmlh": 16, "tmhl": 16, "tmhh": 16,
	"mvhi": -16, "mvhhi": -16, "mvghi": -16,
	// The byte of the SI and SIY formats.
	"ni": 8, "oi": 8, "xi": 8, "mvi": 8, "cli": 8, "tm": 8,
	"niy": 8, "oiy": 8, "xiy": 8, "mviy": 8, "cliy": 8, "tmy": 8,
}

// s390xLenBase0 matches an operand with a length whose base register is
// 0, which the decoder prints unclosed ("mvc 0(28,,0(%r5)"; objdump:
// "mvc 0(28,%r0),0(%r5)").
var s390xLenBase0 = regexp.MustCompile(`(\(\d+),(,|$)`)

// s390xCond names the condition masks of the relative branches brc
// ("j" + name) and brcl ("jg" + name) as objdump prints them.
var s390xCond = [16]string{"nop", "o", "h", "nle", "l", "nhe", "lh", "ne", "e", "nlh", "he", "nl", "le", "nh", "no", ""}

// formatS390X writes the objdump text of inst at pc to b: the decoder's
// GNU syntax, with relative branch and address targets as addresses and
// their symbols.
func formatS390X(b *textBuf, inst s390xasm.Inst, pc uint64, sym Symbolizer) {
	text := s390xasm.GNUSyntax(inst, pc)
	if strings.Contains(text, ",,") || strings.HasSuffix(text, ",") {
		text = s390xLenBase0.ReplaceAllString(text, "$1,%r0)$2")
	}
	mnem, args := gnuOperands(text)
	var t branchTarget
	for _, a := range inst.Args {
		switch a.(type) {
		case s390xasm.RegIm12, s390xasm.RegIm16, s390xasm.RegIm24, s390xasm.RegIm32:
			t.text = a.String(pc)
			t.addr, _ = strconv.ParseUint(strings.TrimPrefix(t.text, "0x"), 16, 64)
		}
	}
	// An index register without a base register reads "d(%rX,%r0)".
	for i, a := range inst.Args {
		if x, ok := a.(s390xasm.Index); ok && x != s390xasm.X0 && i+1 < len(inst.Args) && inst.Args[i+1] == s390xasm.B0 {
			short := "(" + x.String(pc) + ")"
			for k := range args {
				if strings.HasSuffix(args[k], short) {
					args[k] = strings.TrimSuffix(args[k], ")") + ",%r0)"
					break
				}
			}
		}
	}
	switch mnem {
	case "brc", "brcl":
		if m, err := strconv.Atoi(args[0]); err == nil && len(args) == 2 && m > 0 && m < 15 {
			if mnem == "brcl" {
				mnem = "jg" + s390xCond[m]
			} else {
				mnem = "j" + s390xCond[m]
			}
			args = args[1:]
		}
	case "vceq", "vch", "vchl":
		// The element size and the condition-code flag, in the name.
		if len(args) == 5 {
			m4, err4 := strconv.Atoi(args[3])
			m5, err5 := strconv.Atoi(args[4])
			if err4 == nil && err5 == nil && m4 >= 0 && m4 < 4 && (m5 == 0 || m5 == 1) {
				mnem += string("bhfg"[m4])
				if m5 == 1 {
					mnem += "s"
				}
				args = args[:3]
			}
		}
	case "bcr", "bc":
		// Branch on condition to a register or an address: the mask in
		// the name, as for brc.
		if len(args) != 2 {
			break
		}
		if m, err := strconv.Atoi(args[0]); err == nil && m > 0 && m < 15 {
			r := ""
			if mnem == "bcr" {
				r = "r"
			}
			mnem = "b" + s390xCond[m] + r
			args = args[1:]
		}
	case "nopr":
		if len(args) == 1 && args[0] == "%r0" {
			args = nil
		} else if inst.Op == s390xasm.BC {
			mnem = "nop" // bc 0, which the decoder calls nopr as it does bcr 0
		}
	case "vzeo": // the decoder's misspelling
		mnem = "vzero"
	case "vl", "vst", "vlm", "vstm", "popcnt":
		// An alignment hint or mode of 0 is not shown.
		if len(args) > 2 && args[len(args)-1] == "0" {
			args = args[:len(args)-1]
		}
	case "risbg", "risbgn":
		// The zero-remaining-bits flag in I4 is the "z" form.
		if len(args) == 5 {
			if i4, err := strconv.Atoi(args[3]); err == nil && i4&0x80 != 0 {
				mnem += "z"
				args[3] = strconv.Itoa(i4 &^ 0x80)
			}
		}
	}
	if bits := s390xUnsigned[mnem]; bits != 0 && len(args) == 2 {
		if v, err := strconv.ParseInt(args[1], 10, 64); err == nil {
			switch {
			case bits > 0 && v < 0:
				args[1] = strconv.FormatInt(v+1<<bits, 10)
			case bits < 0 && v >= 1<<(-bits-1):
				args[1] = strconv.FormatInt(v-1<<(-bits), 10)
			}
		}
	}
	b.WriteString(mnem)
	if len(args) > 0 {
		b.WriteByte('\t')
	}
	writeOperands(b, args, t, sym)
}
