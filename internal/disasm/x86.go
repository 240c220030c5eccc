package disasm

import (
	"bytes"
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

// lookup is the x86asm.SymLookup: relMark for the branch target, nothing
// for any other address.
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
	var b textBuf
	for off := 0; off < len(code); {
		pc := addr + uint64(off)
		if text, n := fixedX86(code[off:], mode, intel); n > 0 {
			insts = append(insts, Inst{Addr: pc, Len: n, Text: text})
			off += n
			continue
		}
		inst, ok := decodeOneX86(code[off:], mode)
		if !ok {
			text := BadText
			if truncatedX86(code[off:], mode) {
				// objdump shows the bytes of an instruction cut off by
				// the end of the code one by one.
				text = ".byte  0x" + strconv.FormatUint(uint64(code[off]), 16)
				if mode == 64 && code[off]&0xF0 == 0x40 {
					text = rexName(code[off]) // objdump names a REX prefix
				}
			}
			insts = append(insts, Inst{Addr: pc, Len: 1, Text: text})
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
		insts = append(insts, Inst{Addr: pc, Len: inst.Len, Text: safeFormatX86(&b, inst, code[off:], pc, intel, lookup, &rl, sym)})
		off += inst.Len
	}
	return insts
}

// truncatedX86 reports whether src, shorter than the longest
// instruction, is the start of an instruction that does not end in src.
func truncatedX86(src []byte, mode int) bool {
	const maxLen = 15
	if len(src) >= maxLen {
		return false
	}
	var buf [maxLen]byte
	copy(buf[:], src)
	inst, ok := decodeOneX86(buf[:], mode)
	return ok && inst.Len > len(src)
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
	// x86asm returns a lone prefix (Op 0) for bytes that end too early.
	if err != nil || inst.Op == 0 || inst.Len <= 0 || inst.Len > len(src) {
		return x86asm.Inst{}, false
	}
	// x86asm leaves these zero for VEX and EVEX instructions.
	inst.Mode = mode
	if inst.AddrSize == 0 {
		inst.AddrSize = mode
	}
	if mode == 64 && !movabs(&inst) {
		for i, a := range inst.Args {
			m, ok := a.(x86asm.Mem)
			if !ok || m.Base != 0 || m.Index != 0 {
				continue
			}
			// x86asm loses RIP-relative addressing (ModRM mod 0, r/m 5)
			// in some VEX and EVEX encodings.
			if mrm, ok := modrm(src[:inst.Len], mode); ok && mrm&0xC7 == 0x05 {
				m.Base = x86asm.RIP
				inst.Args[i] = m
			}
		}
	}
	return inst, true
}

// safeFormatX86 returns the text formatX86 writes, or BadText if
// formatting panics: no input may take the process down.
func safeFormatX86(b *textBuf, inst x86asm.Inst, src []byte, pc uint64, intel bool, lookup x86asm.SymLookup, rl *relLookup, sym Symbolizer) (text string) {
	defer func() {
		if recover() != nil {
			text = BadText
		}
	}()
	formatX86(b, inst, src, pc, intel, lookup, rl, sym)
	return b.String()
}

// formatX86 writes the objdump text of inst, decoded from src at pc, to b.
func formatX86(b *textBuf, inst x86asm.Inst, src []byte, pc uint64, intel bool, lookup x86asm.SymLookup, rl *relLookup, sym Symbolizer) {
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
	mnem, ops := splitOperands(text)
	mnem = fixMnemonic(mnem, &inst, intel)
	if inst.Op == x86asm.VMPSADBW {
		if _, _, evex := evexPayload(src[:inst.Len], inst.Mode); evex {
			// EVEX.0F3A 42 is AVX512BW's vdbpsadbw; x86asm names it
			// after VEX's vmpsadbw.
			mnem = strings.Replace(mnem, "vmpsadbw", "vdbpsadbw", 1)
		}
	}
	if ops != "" {
		ops = fixOperands(ops, &inst, src, intel)
	}
	if intel {
		mnem, ops = fixIntelX87(mnem, ops, &inst, src)
		mnem, ops = fixIntelString(mnem, ops, &inst)
		mnem, ops = fixIntelSSECompare(mnem, ops, &inst)
	}
	mnem = fixPrefixes(mnem, &inst, src)
	mnem, ops = fixLegacy32(mnem, ops, &inst, src, intel)
	ops = fixIntelSegMove(ops, &inst, src, intel)
	if intel && (inst.Op == x86asm.BLENDVPS || inst.Op == x86asm.BLENDVPD || inst.Op == x86asm.PBLENDVB) && strings.Count(ops, ",") == 1 {
		ops += ",xmm0" // the implicit mask register, which objdump shows
	}
	mnem, ops = vpcmpAlias(mnem, ops, &inst, intel)
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

// splitOperands splits x86asm's text into the mnemonic with its prefix
// words and the operands.
func splitOperands(text string) (mnem, ops string) {
	for i := 0; i < len(text); i++ {
		if text[i] != ' ' {
			continue
		}
		w := text[:i]
		if j := strings.LastIndexByte(w, ' '); j >= 0 {
			w = w[j+1:]
		}
		if prefixWords[w] {
			continue
		}
		return text[:i], text[i+1:]
	}
	return text, ""
}

// prefixWords are the words x86asm prints before a mnemonic.
var prefixWords = map[string]bool{
	"lock": true, "rep": true, "repz": true, "repnz": true, "repe": true, "repne": true,
	"data16": true, "data32": true, "addr16": true, "addr32": true,
	"bnd": true, "notrack": true, "xacquire": true, "xrelease": true,
	"cs": true, "ds": true, "es": true, "fs": true, "gs": true, "ss": true,
	"pn": true, "pt": true,
}

// ripComment returns the address objdump names in its "# addr <sym>"
// comment after a RIP-relative memory operand.
func ripComment(inst x86asm.Inst, pc uint64) (uint64, bool) {
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if m, ok := a.(x86asm.Mem); ok && m.Base == x86asm.RIP {
			return pc + uint64(inst.Len) + uint64(int64(int32(m.Disp))), true
		}
	}
	return 0, false
}

// fixOperands replaces x86asm's memory and immediate operands by
// objdump's forms when x86asm printed one operand per argument.
func fixOperands(ops string, inst *x86asm.Inst, src []byte, intel bool) string {
	ops = strings.ReplaceAll(ops, " {", "{")
	var pbuf [len(inst.Args)]string
	pieces := appendArgs(pbuf[:0], ops)
	var abuf [len(inst.Args)]x86asm.Arg
	args := abuf[:0]
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		args = append(args, a)
	}
	if intel && inst.Op == x86asm.NOP && len(pieces) == 2 {
		// objdump shows only the memory operand of the multi-byte nop.
		args, pieces = args[:1], pieces[:1]
	}
	if len(pieces) < len(args) && strings.Contains(ops, "{") {
		// x86asm prints an AVX-512 opmask in braces beside the operand it
		// masks ("%k1{%k2}"), as one operand.
		kept := args[:0:0]
		for k, a := range args {
			if r, ok := a.(x86asm.Reg); ok && r >= x86asm.K1 && r <= x86asm.K7 && k > 0 && isMaskedReg(args[k-1]) {
				continue
			}
			kept = append(kept, a)
		}
		args = kept
	}
	if len(pieces) == len(args)-1 && isShift(inst.Op) {
		// x86asm leaves out the implicit count of a shift by one.
		args = args[:len(args)-1]
	}
	if len(pieces) != len(args) {
		if intel {
			for i, p := range pieces {
				if j := strings.Index(p, "word ptr "); j >= 0 && !strings.Contains(p[:j], "[") {
					pieces[i] = strings.ToUpper(p[:j+8]) + p[j+8:]
				} else if strings.HasPrefix(p, "byte ptr ") {
					pieces[i] = "BYTE PTR" + p[8:]
				}
			}
		}
		return strings.Join(pieces, ",")
	}
	for i, p := range pieces {
		k := i
		if !intel {
			k = len(args) - 1 - i
		}
		switch a := args[k].(type) {
		case x86asm.Mem:
			if strings.Contains(p, relMark) {
				continue
			}
			pieces[i] = memPiece(inst, a, src, p, intel)
		case x86asm.Reg:
			// objdump names a source st(0) in full: "fadd %st(0),%st".
			if a == x86asm.F0 && (len(args) == 1 || k > 0 && args[0] == x86asm.F0) && (p == "%st" || p == "st") {
				pieces[i] = p + "(0)"
			}
		case x86asm.Imm:
			if intel && isShift(inst.Op) && a == 1 && inst.Opcode>>24 >= 0xD0 && inst.Opcode>>24 <= 0xD3 {
				pieces[i] = "1"
				continue
			}
			if strings.HasPrefix(p, "$") || strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "-0x") || strings.HasPrefix(p, "$-") {
				pieces[i] = immOperand(inst, a, intel)
			}
		}
	}
	return strings.Join(pieces, ",")
}

// memPiece formats the memory operand a of inst, decoded from src, which
// x86asm printed as p (whose Intel size keyword and AT&T "*" it keeps).
func memPiece(inst *x86asm.Inst, a x86asm.Mem, src []byte, p string, intel bool) string {
	explicit := a.Base == x86asm.RIP || a.Base == x86asm.EIP
	if mrm, ok := modrm(src[:inst.Len], inst.Mode); ok {
		if mod := mrm >> 6; mod == 1 || mod == 2 {
			explicit = true
		}
	}
	if seg := stringSegment(inst.Op, a.Base); seg != 0 && a.Segment == 0 {
		a.Segment = seg
	}
	m := memOperand(inst, a, explicit, intel)
	n, elem := evexBroadcast(src[:inst.Len], inst.Mode, strings.HasSuffix(inst.Op.String(), "PH"), widening(inst.Op))
	if intel {
		kw := ""
		if j := strings.Index(strings.ToLower(p), " ptr"); j > 0 {
			kw = strings.ToUpper(p[:j+4])
		}
		if isPrefetch(inst.Op) {
			kw = "BYTE PTR"
		}
		if n > 0 {
			kw = elem + " BCST"
		}
		if kw != "" {
			m = kw + " " + m
		}
	} else if n > 0 {
		m += "{1to" + strconv.Itoa(n) + "}"
	}
	if strings.HasPrefix(p, "*") {
		m = "*" + m
	}
	return m
}

// evexBroadcast returns, for an EVEX instruction whose memory operand
// is one element broadcast to the whole vector (EVEX.b with a memory
// operand), which x86asm does not show, how many elements the vector
// holds and the element's Intel size keyword: objdump's
// "(%rax){1to16}" and "DWORD BCST [rax]". The element is a doubleword,
// or a quadword with EVEX.W, or a word for half precision (half: the
// AVX512-FP16 "ph" instructions); the vector is the destination, half
// as many bytes as the source of a widening conversion. n is 0 for
// other instructions.
func evexBroadcast(src []byte, mode int, half, widening bool) (n int, elem string) {
	p, mrm, ok := evexPayload(src, mode)
	if !ok || p[2]&0x10 == 0 || mrm>>6 == 3 {
		return 0, ""
	}
	p1, p2 := p[1], p[2]
	bits, elem := 32, "DWORD"
	switch {
	case half:
		bits, elem = 16, "WORD"
	case p1&0x80 != 0:
		bits, elem = 64, "QWORD"
	}
	n = (128 << (p2 >> 5 & 3)) / bits
	if widening {
		n /= 2 // doublewords to quadwords: the source is half the vector
	}
	return n, elem
}

// evexPayload returns the payload bytes P0, P1 and P2 of the EVEX prefix
// that starts src (after legacy prefixes), and the ModRM byte after the
// opcode; ok is false if src is not an EVEX-encoded instruction of
// 64-bit code.
func evexPayload(src []byte, mode int) (p [3]byte, mrm byte, ok bool) {
	i := 0
	for i < len(src) && (src[i] == 0x66 || src[i] == 0x67 || src[i] == 0xF2 || src[i] == 0xF3 ||
		src[i] == 0x2E || src[i] == 0x36 || src[i] == 0x3E || src[i] == 0x26 || src[i] == 0x64 || src[i] == 0x65) {
		i++
	}
	if mode != 64 || i+6 > len(src) || src[i] != 0x62 {
		return p, 0, false
	}
	return [3]byte{src[i+1], src[i+2], src[i+3]}, src[i+5], true
}

// widening reports whether op converts doublewords or single-precision
// elements to quadwords or double-precision ones, whose source operand
// holds half as many bytes as the vector.
func widening(op x86asm.Op) bool {
	switch op.String() {
	case "VCVTPS2PD", "VCVTDQ2PD", "VCVTUDQ2PD", "VCVTPS2QQ", "VCVTPS2UQQ", "VCVTTPS2QQ", "VCVTTPS2UQQ":
		return true
	}
	return false
}

// condFix maps x86asm's Intel condition-code spellings to objdump's.
var condFix = map[string]string{
	"z": "e", "nz": "ne", "nb": "ae", "nbe": "a", "nl": "ge", "nle": "g", "nae": "b", "na": "be", "nge": "l", "ng": "le",
}

// fixMnemonic rewrites x86asm's mnemonic where objdump 2.40 spells it
// differently.
func fixMnemonic(mnem string, inst *x86asm.Inst, intel bool) string {
	pre, op := "", mnem
	if i := strings.LastIndexByte(mnem, ' '); i >= 0 {
		pre, op = mnem[:i+1], mnem[i+1:]
	}
	if !intel {
		switch op {
		case "callq", "jmpq", "retq", "pushq", "popq", "leaveq", "xbeginq":
			if inst.Mode == 64 {
				op = op[:len(op)-1]
			}
		case "calll", "jmpl", "retl", "pushl", "popl", "leavel":
			if inst.Mode == 32 {
				op = op[:len(op)-1]
			}
		case "movsxd":
			op = "movslq"
		case "cdqe":
			op = "cltq"
		case "cqo":
			op = "cqto"
		case "cdq":
			op = "cltd"
		case "cwde":
			op = "cwtl"
		}
	}
	for _, p := range []string{"j", "set", "cmov"} {
		if c, ok := condFix[strings.TrimPrefix(op, p)]; ok && strings.HasPrefix(op, p) {
			op = p + c
			break
		}
	}
	if noSuffix[inst.Op] && !intel && (strings.HasSuffix(op, "l") || strings.HasSuffix(op, "q")) && op != strings.ToLower(inst.Op.String()) {
		op = op[:len(op)-1]
	}
	if inst.Op == x86asm.MOV && inst.Mode == 64 && movabs(inst) {
		op = "movabs"
	}
	if intel && inst.Op == x86asm.PUSH && inst.Mode == 64 && inst.DataSize == 16 {
		if _, ok := inst.Args[0].(x86asm.Imm); ok {
			op = "pushw" // as in AT&T syntax
		}
	}
	return pre + op
}

// noSuffix are the VEX-encoded integer operations objdump prints without
// an operand-size suffix in AT&T syntax.
var noSuffix = map[x86asm.Op]bool{
	x86asm.ANDN: true, x86asm.BEXTR: true, x86asm.BLSI: true, x86asm.BLSMSK: true, x86asm.BLSR: true,
	x86asm.BZHI: true, x86asm.MULX: true, x86asm.PDEP: true, x86asm.PEXT: true, x86asm.RORX: true,
	x86asm.SARX: true, x86asm.SHLX: true, x86asm.SHRX: true,
}

// movabs reports whether a MOV is one objdump calls movabs: a 64-bit
// immediate (REX.W B8+r) or a 64-bit absolute address (A0-A3).
func movabs(inst *x86asm.Inst) bool {
	op := inst.Opcode >> 24
	switch {
	case op >= 0xB8 && op <= 0xBF:
		return inst.DataSize == 64 && inst.Len >= 10
	case op >= 0xA0 && op <= 0xA3:
		return inst.AddrSize == 64
	}
	return false
}

// isShift reports whether op is a shift or rotate, whose count of one
// is implicit in the D0-D3 encodings.
func isShift(op x86asm.Op) bool {
	switch op {
	case x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR, x86asm.RCL, x86asm.RCR:
		return true
	}
	return false
}

// fixedX86 returns objdump's text for byte sequences x86asm does not
// decode (or decodes differently), and their length; n is 0 otherwise.
func fixedX86(src []byte, mode int, intel bool) (text string, n int) {
	if len(src) >= 4 && src[0] == 0xF3 && src[1] == 0x0F && src[2] == 0x1E {
		switch src[3] {
		case 0xFA:
			return "endbr64", 4
		case 0xFB:
			return "endbr32", 4
		}
	}
	if len(src) >= 3 && src[0] == 0x0F && src[1] == 0x01 {
		switch src[2] {
		case 0xEE:
			return "rdpkru", 3
		case 0xEF:
			return "wrpkru", 3
		}
	}
	if len(src) >= 3 && src[0] == 0xC5 && src[2] == 0x77 && (src[1] == 0xF8 || src[1] == 0xFC) {
		// x86asm decodes these with two bytes too many.
		if src[1] == 0xF8 {
			return "vzeroupper", 3
		}
		return "vzeroall", 3
	}
	if text, n := rdseedRdpid(src, mode, intel); n > 0 {
		return text, n
	}
	if len(src) >= 2 && src[0] == 0x66 && src[1] == 0x90 {
		if intel {
			return "xchg   ax,ax", 2
		}
		return "xchg   %ax,%ax", 2
	}
	return "", 0
}

// rdseedRdpid returns objdump's text for an RDSEED (0F C7 /7 with a
// register operand, after a 66 or REX prefix or not) or an RDPID (the
// same after F3: the register of the mode's word), which x86asm does not
// decode (RDRAND, /6, it does), and its length; n is 0 for other bytes.
// A REX prefix exists in 64-bit code only (40-4F are inc and dec in
// 32-bit code). Code that reads them (libstdc++'s std::random_device)
// came out as (bad) and lost the instruction boundaries after it.
func rdseedRdpid(src []byte, mode int, intel bool) (text string, n int) {
	i, size, rex, mnem := 0, 32, byte(0), "rdseed "
	switch {
	case i < len(src) && src[i] == 0x66:
		i, size = i+1, 16
	case i < len(src) && src[i] == 0xF3:
		i, size, mnem = i+1, 64, "rdpid  "
	}
	if mode == 64 && i < len(src) && src[i]&0xF0 == 0x40 {
		rex, i = src[i], i+1
	}
	if len(src) < i+3 || src[i] != 0x0F || src[i+1] != 0xC7 || src[i+2]>>3 != 0x1F { // mod 3, reg 7
		return "", 0
	}
	if rex&8 != 0 || mnem == "rdpid  " && mode == 64 {
		size = 64
	} else if mnem == "rdpid  " {
		size = 32
	}
	r := x86asm.Reg(src[i+2]&7 | rex&1<<3)
	var reg x86asm.Reg
	switch size {
	case 16:
		reg = x86asm.AX + r
	case 32:
		reg = x86asm.EAX + r
	default:
		reg = x86asm.RAX + r
	}
	name := x86RegName(reg)
	if !intel {
		name = "%" + name
	}
	return mnem + name, i + 3
}

// x86RegName is objdump's name of a general register: x86asm's, in
// lower case, but "r8d" for its R8L.
func x86RegName(r x86asm.Reg) string {
	name := strings.ToLower(r.String())
	if strings.HasPrefix(name, "r") && strings.HasSuffix(name, "l") && r >= x86asm.R8L && r <= x86asm.R15L {
		name = name[:len(name)-1] + "d"
	}
	return name
}

// rexName is objdump's name of a REX prefix byte it shows as a word of
// its own ("rex.W", "rex.WRB", "rex").
func rexName(b byte) string {
	name := "rex"
	if b&0xF != 0 {
		name += "."
		for i, c := range "WRXB" {
			if b&(8>>i) != 0 {
				name += string(c)
			}
		}
	}
	return name
}

// fixPrefixes rebuilds the prefix words objdump prints before the
// mnemonic for prefixes that have no effect: extra operand-size
// prefixes ("data16"), segment overrides in 64-bit mode ("cs"), the CET
// "notrack" (3E on an indirect branch) and "repz ret".
func fixPrefixes(mnem string, inst *x86asm.Inst, src []byte) string {
	pre, op := "", mnem
	if i := strings.LastIndexByte(mnem, ' '); i >= 0 {
		pre, op = mnem[:i+1], mnem[i+1:]
	}
	if inst.Mode != 64 {
		return mnem
	}
	if op == "ret" && src[0] == 0xF3 {
		return "repz ret"
	}
	if strings.HasPrefix(pre, "rep ") && repzString(inst.Op) {
		pre, mnem = "repz "+pre[len("rep "):], "repz "+mnem[len("rep "):]
	}
	n66, seg, rex := 0, "", ""
	for i, b := range src[:inst.Len] {
		if b&0xF0 == 0x40 && i+1 < inst.Len && (src[i+1] == 0xE8 || src[i+1] == 0xE9) {
			// A REX prefix on a relative call or jump, which uses
			// none of its bits (glibc's TLS sequence "data16 data16
			// rex.W call __tls_get_addr@plt").
			rex = rexName(b)
			break
		}
		switch b {
		case 0x66:
			n66++
			continue
		case 0x2E:
			seg = "cs"
			continue
		case 0x3E:
			seg = "ds"
			continue
		case 0x26:
			seg = "es"
			continue
		case 0x36:
			seg = "ss"
			continue
		case 0x64, 0x65, 0x67, 0xF0, 0xF2, 0xF3:
			continue
		}
		break
	}
	if n66 == 0 && seg == "" && rex == "" {
		return mnem
	}
	if seg == "ds" && (inst.Op == x86asm.JMP || inst.Op == x86asm.CALL) {
		seg = "notrack"
	}
	if !strings.Contains(pre, "data") && inst.Op != x86asm.NOP && rex == "" {
		// A mandatory or operand-size prefix x86asm consumed, or, in
		// Intel syntax, which leaves them out, operand-size prefixes
		// that REX.W overrode (glibc's TLS sequence "data16 lea
		// rdi,[rip+...]").
		n66 = 0
		for _, p := range inst.Prefix {
			if p == 0 || usesXMM(inst) { // SSE's 66 is part of the opcode
				break
			}
			if p&0xFF == x86asm.PrefixDataSize && p&x86asm.PrefixIgnored != 0 {
				n66++
			}
		}
	} else if inst.DataSize == 16 {
		n66--
	}
	var words []string
	for w := range strings.FieldsSeq(pre) {
		if w != "data16" && w != "data32" && w != "cs" && w != "ds" && w != "es" && w != "ss" {
			words = append(words, w)
		}
	}
	for range n66 {
		words = append(words, "data16")
	}
	if seg != "" && stringSegment(inst.Op, x86asm.RDI) == 0 {
		words = append(words, seg)
	}
	if rex != "" {
		words = append(words, rex)
	}
	words = append(words, op)
	return strings.Join(words, " ")
}

// usesXMM reports whether an operand of inst is an SSE register.
func usesXMM(inst *x86asm.Inst) bool {
	for _, a := range inst.Args {
		if r, ok := a.(x86asm.Reg); ok && r >= x86asm.X0 && r <= x86asm.X15 {
			return true
		}
	}
	return false
}

// fixLegacy32 rewrites what objdump prints differently in 32-bit code
// (fixPrefixes does 64-bit code's prefixes): the CET "notrack" (3E on an
// indirect branch, which x86asm shows as a ds segment: "notrack jmp
// *%ebx", "notrack jmp *(%eax)"), and an Intel moffs operand, which
// objdump shows without a size ("mov eax,gs:0x14", the stack protector's
// canary in every function of Debian's 386 libc).
func fixLegacy32(mnem, ops string, inst *x86asm.Inst, src []byte, intel bool) (string, string) {
	if inst.Mode != 32 {
		return mnem, ops
	}
	if intel && inst.Op == x86asm.MOV {
		op := inst.Opcode >> 24
		if op >= 0xA0 && op <= 0xA3 {
			for _, kw := range []string{"DWORD PTR ", "WORD PTR ", "BYTE PTR "} {
				ops = strings.Replace(ops, kw, "", 1)
			}
		}
	}
	if inst.Op != x86asm.JMP && inst.Op != x86asm.CALL {
		return mnem, ops
	}
	if _, rel := inst.Args[0].(x86asm.Rel); rel {
		return mnem, ops
	}
	ds := false
	for _, b := range src[:inst.Len] {
		if b == 0x3E {
			ds = true
		} else if b != 0x66 && b != 0x67 && b != 0xF2 && b != 0xF3 && b != 0x2E && b != 0x26 && b != 0x36 && b != 0x64 && b != 0x65 {
			break
		}
	}
	if !ds {
		return mnem, ops
	}
	mnem = strings.TrimPrefix(mnem, "ds ")
	ops = strings.Replace(ops, "%ds:", "", 1)
	ops = strings.Replace(ops, "ds:[", "[", 1)
	return "notrack " + mnem, ops
}

// fixIntelSegMove names the source of a move to a segment register (8E)
// as objdump does in Intel syntax: by its 32-bit name, without an
// operand-size prefix ("mov fs,ecx"; x86asm: "mov fs,cx").
func fixIntelSegMove(ops string, inst *x86asm.Inst, src []byte, intel bool) string {
	if !intel || inst.Op != x86asm.MOV || inst.Opcode>>24 != 0x8E || inst.DataSize == 16 && bytes.IndexByte(src[:inst.Len], 0x66) >= 0 {
		return ops
	}
	r, ok := inst.Args[1].(x86asm.Reg)
	switch {
	case !ok:
		return ops
	case r >= x86asm.AX && r <= x86asm.R15W:
		r += x86asm.EAX - x86asm.AX
	case r < x86asm.EAX || r > x86asm.R15L:
		return ops
	}
	dst, _, _ := strings.Cut(ops, ",")
	return dst + "," + x86RegName(r)
}

// vpcmpPred are the comparison predicates objdump folds into the
// mnemonics of AVX-512 integer compares (vpcmpb $0x0 is vpcmpeqb).
var vpcmpPred = [8]string{0: "eq", 1: "lt", 2: "le", 4: "neq", 5: "nlt", 6: "nle"}

// vpcmpAlias rewrites "vpcmp[u]{b,w,d,q} $pred,..." as objdump's
// pseudo-op "vpcmp<pred>[u]{b,w,d,q} ...".
func vpcmpAlias(mnem, ops string, inst *x86asm.Inst, intel bool) (string, string) {
	switch inst.Op {
	case x86asm.VPCMPB, x86asm.VPCMPW, x86asm.VPCMPD, x86asm.VPCMPQ,
		x86asm.VPCMPUB, x86asm.VPCMPUW, x86asm.VPCMPUD, x86asm.VPCMPUQ:
	default:
		return mnem, ops
	}
	pieces := splitArgs(ops)
	if len(pieces) < 2 {
		return mnem, ops
	}
	imm := pieces[0]
	if intel {
		imm = pieces[len(pieces)-1]
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(imm, "$"), "0x"), 16, 8)
	if err != nil || v >= 8 || vpcmpPred[v] == "" {
		return mnem, ops
	}
	i := strings.Index(mnem, "vpcmp")
	if i < 0 {
		return mnem, ops
	}
	mnem = mnem[:i] + "vpcmp" + vpcmpPred[v] + mnem[i+len("vpcmp"):]
	if intel {
		pieces = pieces[:len(pieces)-1]
	} else {
		pieces = pieces[1:]
	}
	return mnem, strings.Join(pieces, ",")
}

// isPrefetch reports whether op is a prefetch, whose operand objdump
// sizes as a byte in Intel syntax.
func isPrefetch(op x86asm.Op) bool {
	switch op {
	case x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW:
		return true
	}
	return false
}

// repzString reports whether op is a comparing string instruction, whose
// F3 prefix objdump spells "repz".
func repzString(op x86asm.Op) bool {
	switch op {
	case x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ:
		return true
	}
	return false
}

// isMaskedReg reports whether a is an operand an AVX-512 opmask can
// follow: a vector or mask register.
func isMaskedReg(a x86asm.Arg) bool {
	r, ok := a.(x86asm.Reg)
	return ok && (r >= x86asm.X0 && r <= x86asm.Z31 || r >= x86asm.K0 && r <= x86asm.K7)
}
