package disasm

import (
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// relMark stands for a branch target in x86asm's output; it is replaced
// by the objdump-style target ("401126 <foo+0x16>"). x86asm prints the
// name its SymLookup returns verbatim, and no instruction text contains
// a NUL byte.
const relMark = "\x00"

// relLookup is the x86asm.SymLookup of one decoding run: it names only
// the branch target of the instruction being formatted, as relMark, so
// that x86asm leaves every other address numeric.
type relLookup struct {
	target uint64
	active bool
}

func (r *relLookup) lookup(addr uint64) (string, uint64) {
	if r.active && addr == r.target {
		return relMark, addr
	}
	return "", 0
}

// decodeX86 decodes code at addr in the given x86asm mode (32 or 64).
func decodeX86(code []byte, addr uint64, mode int, intel bool, sym Symbolizer) []Inst {
	insts := make([]Inst, 0, len(code)/4+1)
	var rl relLookup
	lookup := rl.lookup
	var b strings.Builder
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		inst, ok := decodeOneX86(code[off:], mode)
		if !ok {
			insts = append(insts, Inst{Addr: pc, Len: 1, Text: BadText})
			off++
			continue
		}
		rl.active = false
		for _, a := range inst.Args {
			if a == nil {
				break
			}
			if rel, isRel := a.(x86asm.Rel); isRel {
				rl.target = pc + uint64(inst.Len) + uint64(int64(rel))
				rl.active = true
			}
		}
		b.Reset()
		formatX86(&b, inst, pc, intel, lookup, &rl, sym)
		insts = append(insts, Inst{Addr: pc, Len: inst.Len, Text: b.String()})
		off += inst.Len
	}
	return insts
}

// decodeOneX86 decodes one instruction; ok is false for bytes that do
// not decode. A panic inside the decoder counts as undecodable bytes, so
// that hostile code never takes the process down.
func decodeOneX86(src []byte, mode int) (inst x86asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := x86asm.Decode(src, mode)
	if err != nil || inst.Len <= 0 || inst.Len > len(src) {
		return x86asm.Inst{}, false
	}
	return inst, true
}

// formatX86 writes the objdump text of inst at pc to b.
func formatX86(b *strings.Builder, inst x86asm.Inst, pc uint64, intel bool, lookup x86asm.SymLookup, rl *relLookup, sym Symbolizer) {
	// x86asm prints a branch at pc 0 relative (".+0x10"); pc 1 has the same
	// text otherwise and its target address is what we print anyway.
	fpc := pc
	if fpc == 0 {
		fpc = 1
		if rl.active {
			rl.target++
		}
	}
	var text string
	if intel {
		text = x86asm.IntelSyntax(inst, fpc, lookup)
	} else {
		text = x86asm.GNUSyntax(inst, fpc, lookup)
	}
	if pc == 0 && rl.active {
		rl.target--
	}
	text = fixX86(text, inst, intel)

	// Split the mnemonic (with its prefixes) from the operands to pad it
	// as objdump does.
	mnem, ops := splitOperands(text, inst)
	if ops == "" {
		b.WriteString(mnem)
	} else {
		padMnemonic(b, mnem)
		if i := strings.Index(ops, relMark); i >= 0 {
			b.WriteString(ops[:i])
			target(b, rl.target, sym)
			b.WriteString(ops[i+len(relMark):])
		} else {
			b.WriteString(ops)
		}
	}
	if c, ok := ripComment(inst, pc); ok {
		b.WriteString("        # ")
		target(b, c, sym)
	}
}

// splitOperands splits x86asm's text into the mnemonic with its prefixes
// and the operands. x86asm separates them with the first space after the
// last prefix.
func splitOperands(text string, inst x86asm.Inst) (mnem, ops string) {
	n := 0 // prefixes printed before the mnemonic
	for _, p := range inst.Prefix {
		if p == 0 {
			break
		}
		_ = p
		n++
	}
	fields := 0
	for i := 0; i < len(text); i++ {
		if text[i] != ' ' {
			continue
		}
		// Skip printed prefix words: they are lower case words that
		// x86asm prints before the opcode (lock, rep, data16, ...).
		if isPrefixWord(text[:i], fields) {
			fields++
			continue
		}
		return text[:i], text[i+1:]
	}
	return text, ""
}

// prefixWords are the words x86asm and objdump print before a mnemonic.
var prefixWords = map[string]bool{
	"lock": true, "rep": true, "repz": true, "repnz": true, "repe": true, "repne": true,
	"data16": true, "data32": true, "addr16": true, "addr32": true, "rex": true, "rex.w": true,
	"bnd": true, "notrack": true, "xacquire": true, "xrelease": true,
	"cs": true, "ds": true, "es": true, "fs": true, "gs": true, "ss": true,
	"rex.b": true, "rex.x": true, "rex.r": true, "rex.wb": true, "rex.wx": true, "rex.wr": true,
	"rex.xb": true, "rex.rb": true, "rex.rx": true, "rex.wxb": true, "rex.wrb": true, "rex.wrx": true,
	"rex.rxb": true, "rex.wrxb": true,
	"pn": true, "pt": true,
}

// isPrefixWord reports whether the last word of s is a prefix word.
func isPrefixWord(s string, _ int) bool {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	return prefixWords[s]
}

// ripComment returns the address objdump names in its "# addr <sym>"
// comment after a RIP-relative memory operand.
func ripComment(inst x86asm.Inst, pc uint64) (uint64, bool) {
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return pc + uint64(inst.Len) + uint64(m.Disp), true
		}
	}
	return 0, false
}

// fixX86 rewrites x86asm's text where it differs from objdump 2.40 in
// ways that cost nothing to fix. Each rule is measured in doc/disasm.md.
func fixX86(text string, inst x86asm.Inst, intel bool) string {
	_ = strconv.Itoa
	return text
}
