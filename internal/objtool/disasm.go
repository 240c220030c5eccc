package objtool

import (
	"debug/elf"
	"fmt"

	gdriver "github.com/google/pprof/driver"
	"github.com/ianlancetaylor/demangle"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/elfrel"
)

// maxDisasmBytes bounds the code one Disasm call decodes: pprof asks for
// one symbol at a time, and a symbol larger than this is a symbol table
// that lies (or a group reaching to the end of the address space).
const maxDisasmBytes = 64 << 20

// Disasm decodes the instructions of file from start to end (file
// addresses, end included), each with the function, file and line its
// address has in the file's DWARF (the innermost frame, as objdump -l
// shows it). The bytes come from the code section that holds start,
// whatever the order of the sections: in a JIT object each function may
// sit in a section of its own, anywhere in memory.
func (t *Tool) Disasm(file string, start, end uint64, intelSyntax bool) ([]gdriver.Inst, error) {
	b := t.load(file)
	if b.err != nil {
		if fb, ok := t.fallbackFor(file); ok {
			return fb.Disasm(file, start, end, intelSyntax)
		}
		return nil, b.err
	}
	if end < start {
		return nil, fmt.Errorf("%s: empty range [%#x, %#x]", file, start, end)
	}
	sec := codeSection(b.f, start)
	if sec == nil {
		return nil, fmt.Errorf("%s: no code section holds address %#x", file, start)
	}
	stop := min(end, sec.Addr+sec.Size-1)
	if stop-start >= maxDisasmBytes {
		return nil, fmt.Errorf("%s: %d bytes to disassemble at %#x, more than the %d a function can have here", file, stop-start+1, start, maxDisasmBytes)
	}
	code := make([]byte, stop-start+1)
	if err := b.f.ReadAt(code, sec.Offset+(start-sec.Addr)); err != nil {
		return nil, err
	}
	syms, _ := t.symbols(b) // without symbols, targets are bare addresses
	name := func(addr uint64) (string, uint64, bool) {
		s := lookupSymbol(syms, addr)
		if s == nil {
			return "", 0, false
		}
		return demangle.Filter(s.names[0]), s.addr, true
	}
	insts, err := disasm.Decode(b.f.Machine, code, start, intelSyntax, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	idx, _ := t.indexOf(b) // without an index, instructions have no lines
	out := make([]gdriver.Inst, len(insts))
	for i, in := range insts {
		out[i] = gdriver.Inst{Addr: in.Addr, Text: in.Text}
		if idx == nil {
			continue
		}
		if frames, _ := idx.SourceLine(in.Addr); len(frames) > 0 {
			leaf := frames[0]
			out[i].Function = demangle.Filter(leaf.Func)
			out[i].File, out[i].Line = leaf.File, leaf.Line
		}
	}
	return out, nil
}

// codeSection returns the section of f with contents in the file that
// is loaded as code and holds addr, or nil.
func codeSection(f *elfrel.File, addr uint64) *elfrel.Section {
	for i := range f.Sections {
		s := &f.Sections[i]
		if s.Type != elf.SHT_PROGBITS || s.Flags&(elf.SHF_ALLOC|elf.SHF_EXECINSTR) != elf.SHF_ALLOC|elf.SHF_EXECINSTR {
			continue
		}
		if addr >= s.Addr && addr-s.Addr < s.Size {
			return s
		}
	}
	return nil
}

// fallbackFor returns the fallback tool if the file was handed to it.
func (t *Tool) fallbackFor(file string) (gdriver.ObjTool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.opts.Fallback, t.opts.Fallback != nil && t.fellBack[file]
}
