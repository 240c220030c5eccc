package objtool

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"

	gdriver "github.com/google/pprof/driver"
	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/plt"
)

// maxDisasmBytes bounds the code one Disasm call decodes: pprof asks for
// one symbol at a time, and a symbol larger than this is a symbol table
// that lies (or a group reaching to the end of the address space).
const maxDisasmBytes = 64 << 20

// Disasm decodes the instructions of file from start to end (file
// addresses, end included), each with the function, file and line its
// address has in the file's DWARF (the innermost frame, as objdump -l
// shows it). Like objdump with --start-address and --stop-address, it
// decodes the bytes of every code section that overlaps the range, in
// address order, whatever the order of the sections in the file: in a
// JIT object each function may sit in a section of its own, anywhere in
// memory, and the web views ask for a function's range widened by a few
// hundred bytes on either side.
func (t *Tool) Disasm(file string, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	insts, err := t.disasm(file, start, end, intelSyntax)
	for i := range insts {
		insts[i].File = t.sources.Name(insts[i].File)
	}
	return insts, err
}

func (t *Tool) disasm(file string, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	if magic, err := readMagic(file); err == nil && isJITDump(magic) {
		o, err := t.jitCode(file)
		if err != nil {
			return nil, err
		}
		return t.disasmJITCode(o, start, end, intelSyntax)
	}
	if e, ok := t.foreignFor(file); ok {
		return t.disasmForeign(e, start, end, intelSyntax)
	}
	b := t.load(file)
	if b.err != nil {
		if fb, ok := t.fallbackFor(file); ok {
			return fb.Disasm(file, start, end, intelSyntax)
		}
		return nil, b.err
	}
	syn, err := t.textSyntax(b.isGo(), intelSyntax)
	if err != nil {
		return nil, err
	}
	if l := t.goListingFor(b); l != nil && syn == textGo {
		return l.disasm(start, end)
	}
	if end < start {
		return nil, fmt.Errorf("%s: empty range [%#x, %#x]", file, start, end)
	}
	// An end on a symbol or section boundary is the End of a symbol from
	// Symbols: one past its last byte.
	if end > start && t.isBoundary(b, end) {
		end--
	}
	if b.f.Machine == elf.EM_ARM {
		start &^= 1 // the Thumb bit of a symbol's value (an ifunc's)
	}
	pieces := codePieces(b.f, start, end)
	if len(pieces) == 0 {
		return nil, fmt.Errorf("%s: no code section holds any of [%#x, %#x]", file, start, end)
	}
	var size uint64
	for _, p := range pieces {
		size += p.hi - p.lo + 1
	}
	if size > maxDisasmBytes {
		return nil, fmt.Errorf("%s: %d bytes of code in [%#x, %#x], more than the %d a function can have here", file, size, start, end, maxDisasmBytes)
	}
	syms, _ := t.symbols(b) // without symbols, targets are bare addresses
	b.pltOnce.Do(func() { b.plt = pltStubs(plt.FromELFRel(b.f)) })
	name := pltNamer(b.plt, symbolNamer(syms))
	idx, _ := t.linesOf(b) // without an index, instructions have no lines
	var out []gdriver.Inst
	for _, p := range pieces {
		code := make([]byte, p.hi-p.lo+1)
		if err := b.f.ReadAt(code, p.sec.Offset+(p.lo-p.sec.Addr)); err != nil {
			return nil, err
		}
		var insts []disasm.Inst
		switch {
		case b.f.Machine == elf.EM_ARM:
			insts, err = decodeARM(b, p, code, name)
		case b.f.Machine == elf.EM_MIPS:
			insts = disasm.DecodeMIPS(code, p.lo, b.f.ByteOrder, mipsN64(b.f.Class, b.f.Flags), name)
		default:
			insts, err = decodeText(b.f.Machine, b.f.Class, b.f.ByteOrder, code, p.lo, syn, name)
		}
		if err != nil {
			return nil, decodeErr(file, err)
		}
		out = appendWithLines(out, insts, idx)
	}
	return out, nil
}

// mipsN64 reports whether a MIPS file of class c and e_flags flags uses
// the register names of the n32 and n64 ABIs: a 64-bit file, or a 32-bit
// one with EF_MIPS_ABI2 (n32).
func mipsN64(c elf.Class, flags uint32) bool {
	const efMIPSABI2 = 0x20
	return c == elf.ELFCLASS64 || flags&efMIPSABI2 != 0
}

// decodeErr is the error of disasm.Decode on file, whose only error is a
// machine it has no decoder for: it says how to have objdump try.
func decodeErr(file string, err error) error {
	return fmt.Errorf("%s: %w; run with -objtool=binutils (or PPROF_OBJTOOL=binutils) to have objdump disassemble it", file, err)
}

// symbolNamer returns what disasm.Decode names jump and call targets
// with: the symbol of syms holding an address, demangled as pprof prints
// it.
func symbolNamer(syms []symbol) disasm.Symbolizer {
	return func(addr uint64) (string, uint64, bool) {
		s := lookupSymbol(syms, addr)
		if s == nil {
			return "", 0, false
		}
		return demangle.Filter(s.names[0]), s.addr, true
	}
}

// appendWithLines appends insts to out for pprof, each with the function,
// file and line of its address in idx (none without an index).
func appendWithLines(out []gdriver.Inst, insts []disasm.Inst, idx lineSource) []gdriver.Inst {
	for _, in := range insts {
		inst := gdriver.Inst{Addr: in.Addr, Text: in.Text}
		if idx != nil {
			if frames, _ := idx.SourceLine(in.Addr); len(frames) > 0 {
				leaf := frames[0]
				inst.Function = demangle.Filter(leaf.Func)
				inst.File, inst.Line = leaf.File, leaf.Line
			}
		}
		out = append(out, inst)
	}
	return out
}

// piece is the part [lo, hi] of a code section to decode.
type piece struct {
	sec    *elfrel.Section
	idx    int // sec's index
	lo, hi uint64
}

// codePieces returns the parts of [start, end] that code sections of f
// hold, in address order: sections with contents in the file (not
// SHT_NOBITS), loaded and executable.
func codePieces(f *elfrel.File, start, end uint64) []piece {
	var out []piece
	for i := range f.Sections {
		s := &f.Sections[i]
		if s.Type != elf.SHT_PROGBITS || s.Flags&(elf.SHF_ALLOC|elf.SHF_EXECINSTR) != elf.SHF_ALLOC|elf.SHF_EXECINSTR || s.Size == 0 {
			continue
		}
		last := s.Addr + s.Size - 1
		if last < s.Addr || s.Addr > end || last < start {
			continue // wraps around, or outside the range
		}
		out = append(out, piece{sec: s, idx: i, lo: max(start, s.Addr), hi: min(end, last)})
	}
	slices.SortFunc(out, func(a, b piece) int { return cmp.Compare(a.lo, b.lo) })
	return out
}

// armSection is what the symbols of a 32-bit ARM file say of one of its
// sections: where ARM code ('a'), Thumb code ('t') and data ('d', a
// literal pool) start, in address order. They are the section's mapping
// symbols ($a, $t, $d); a section without them (a stripped library,
// whose dynamic symbols are all it has) is read as objdump reads it:
// each function symbol starts Thumb code if its value has the Thumb bit,
// ARM code if not.
type armSection struct {
	marks []armMark
}

type armMark struct {
	addr uint64
	kind byte // 'a', 't' or 'd'
}

// armMarks collects the armSections of a 32-bit ARM file from its
// symbols, by section index.
type armMarks struct {
	mapping, funcs map[int][]armMark
}

// add notes the symbol name of type t whose value is addr (the Thumb bit
// included), in section sec.
func (m *armMarks) add(sec int, name string, t elf.SymType, addr uint64) {
	if m.mapping == nil {
		m.mapping, m.funcs = map[int][]armMark{}, map[int][]armMark{}
	}
	switch {
	case len(name) >= 2 && name[0] == '$' && (len(name) == 2 || name[2] == '.') && (name[1] == 'a' || name[1] == 't' || name[1] == 'd'):
		m.mapping[sec] = append(m.mapping[sec], armMark{addr, name[1]})
	case t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC:
		kind := byte('a')
		if addr&1 != 0 {
			kind = 't'
		}
		m.funcs[sec] = append(m.funcs[sec], armMark{addr &^ 1, kind})
	}
}

// sections returns each section's marks, in address order: its mapping
// symbols, or its functions if it has none.
func (m *armMarks) sections() map[int]*armSection {
	out := map[int]*armSection{}
	for sec, marks := range m.funcs {
		out[sec] = &armSection{marks: marks}
	}
	for sec, marks := range m.mapping {
		out[sec] = &armSection{marks: marks}
	}
	for _, as := range out {
		slices.SortStableFunc(as.marks, func(x, y armMark) int { return cmp.Compare(x.addr, y.addr) })
	}
	return out
}

// armMapping returns, by section index, what the symbols of the 32-bit
// ARM file b say of its sections, reading them on first use.
func armMapping(b *binFile) map[int]*armSection {
	b.armOnce.Do(func() {
		each := b.f.EachSymbol
		if !b.f.HasSymbols() {
			each = b.f.EachDynamicSymbol
		}
		var m armMarks
		_ = each(true, func(_ int, s *elfrel.Symbol) error {
			if s.Section > 0 && s.Section < len(b.f.Sections) {
				m.add(s.Section, s.Name, s.Type(), b.f.SymbolAddr(s))
			}
			return nil
		})
		b.arm = m.sections()
	})
	return b.arm
}

// decodeARM decodes code, the piece p of the 32-bit ARM file b, as
// objdump does (see decodeARMRuns).
func decodeARM(b *binFile, p piece, code []byte, sym disasm.Symbolizer) ([]disasm.Inst, error) {
	if b.f.ByteOrder == binary.BigEndian {
		return nil, errBigEndianARM
	}
	return decodeARMRuns(armMapping(b)[p.idx], code, p.lo, p.hi, sym), nil
}

// errBigEndianARM is Disasm's error for big-endian 32-bit ARM code.
var errBigEndianARM = errors.New("disasm: no decoder for big-endian 32-bit ARM code")

// decodeARMRuns decodes code, the bytes [lo, hi] of a 32-bit ARM
// section, as objdump does: by the marks of the section (as, nil for
// none), ARM code as ARM code, Thumb code as Thumb code and data as
// ".word"s (disasm.Data).
func decodeARMRuns(as *armSection, code []byte, lo, hi uint64, sym disasm.Symbolizer) []disasm.Inst {
	if as == nil {
		as = &armSection{}
	}
	// The run of one kind that holds lo ends before the first mark above
	// it.
	kind := byte('a')
	i := sort.Search(len(as.marks), func(i int) bool { return as.marks[i].addr > lo })
	if i > 0 {
		kind = as.marks[i-1].kind
	}
	var out []disasm.Inst
	for start := lo; ; {
		end := hi // the last byte of this run
		if i < len(as.marks) && as.marks[i].addr <= hi {
			end = as.marks[i].addr - 1
		}
		run := code[start-lo : end-lo+1]
		switch kind {
		case 't':
			out = append(out, disasm.DecodeThumb(run, start, sym)...)
		case 'd':
			out = append(out, disasm.Data(run, start, binary.LittleEndian)...)
		default:
			insts, _ := disasm.Decode(elf.EM_ARM, binary.LittleEndian, run, start, false, sym)
			out = append(out, insts...)
		}
		if end == hi {
			return out
		}
		start, kind = end+1, as.marks[i].kind
		for i++; i < len(as.marks) && as.marks[i].addr <= start; i++ {
			kind = as.marks[i].kind // marks at one address: the last
		}
	}
}

// fallbackFor returns the fallback tool if the file was handed to it.
func (t *Tool) fallbackFor(file string) (gdriver.ObjTool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opts.Fallback, t.opts.Fallback != nil && t.fellBack[file]
}

// isBoundary reports whether addr is where a symbol group of b starts or
// a code section of b ends.
func (t *Tool) isBoundary(b *binFile, addr uint64) bool {
	for i := range b.f.Sections {
		if s := &b.f.Sections[i]; s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr+s.Size == addr {
			return true
		}
	}
	syms, _ := t.symbols(b)
	s := lookupSymbol(syms, addr)
	return s != nil && s.addr == addr
}
