package objtool

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jitpprof/pprof/internal/disasm"
)

// Syntax chooses the assembler syntax of Disasm's text.
type Syntax int

// The values of Options.Syntax.
const (
	// SyntaxAuto is Go's syntax for Go binaries and objdump's for the
	// others; pprof's -intel_syntax asks for objdump's Intel syntax for
	// every binary.
	SyntaxAuto Syntax = iota
	// SyntaxGo is Go's assembler syntax, as go tool objdump and go tool
	// pprof print it, for the code of every machine Go has a printer
	// for (disasm.HasGoSyntax; not 32-bit ARM's Thumb code).
	SyntaxGo
	// SyntaxGNU is GNU objdump's (AT&T on x86), or its Intel syntax
	// when pprof's -intel_syntax asks for it.
	SyntaxGNU
	// SyntaxIntel is GNU objdump's Intel syntax (objdump -M intel) on
	// x86, objdump's syntax on other machines.
	SyntaxIntel
)

var syntaxNames = [...]string{SyntaxAuto: "auto", SyntaxGo: "go", SyntaxGNU: "gnu", SyntaxIntel: "intel"}

// String returns the name ParseSyntax reads.
func (s Syntax) String() string {
	if s < 0 || int(s) >= len(syntaxNames) {
		return fmt.Sprintf("Syntax(%d)", int(s))
	}
	return syntaxNames[s]
}

// ParseSyntax returns the Syntax named s: auto (or ""), go, gnu or intel.
func ParseSyntax(s string) (Syntax, error) {
	if s == "" {
		return SyntaxAuto, nil
	}
	for i, n := range syntaxNames {
		if n == s {
			return Syntax(i), nil
		}
	}
	return 0, fmt.Errorf("unknown assembler syntax %q, want auto, go, gnu or intel", s)
}

// textSyntax is the syntax one Disasm call prints in.
type textSyntax int

const (
	textGNU textSyntax = iota
	textIntel
	textGo
)

// errGoIntel is Disasm's error when Go syntax and pprof's -intel_syntax
// are both asked for.
var errGoIntel = errors.New("-asm_syntax=go: Go's assembler syntax has no Intel form; drop -intel_syntax or choose another -asm_syntax")

// textSyntax returns the syntax of a Disasm call for a binary that is a
// Go binary or not, pprof asking for Intel syntax or not.
func (t *Tool) textSyntax(goBinary, intel bool) (textSyntax, error) {
	switch t.opts.Syntax {
	case SyntaxGo:
		if intel {
			return 0, errGoIntel
		}
		return textGo, nil
	case SyntaxIntel:
		return textIntel, nil
	case SyntaxAuto:
		if goBinary && !intel {
			return textGo, nil
		}
	}
	if intel {
		return textIntel, nil
	}
	return textGNU, nil
}

// decodeText decodes code, loaded at lo, of machine m in a file of class
// c and byte order bo, in the syntax syn, naming symbols with name. 32-bit
// ARM code is decoded as ARM-mode code and MIPS code with o32's register
// names: callers that know better (mapping symbols, the file's ABI)
// decode those themselves. In Go syntax, code of a machine with no Go
// printer is in objdump's.
func decodeText(m elf.Machine, c elf.Class, bo binary.ByteOrder, code []byte, lo uint64, syn textSyntax, name disasm.Symbolizer) ([]disasm.Inst, error) {
	if syn == textGo && disasm.HasGoSyntax(m, c) {
		return disasm.DecodeGo(m, c, bo, code, lo, goLookup(name))
	}
	if m == elf.EM_RISCV && c == elf.ELFCLASS32 {
		return disasm.DecodeRV32(code, lo, name), nil
	}
	return disasm.Decode(m, bo, code, lo, syn == textIntel, name)
}

// goLookup adapts name for the Go printers; nil for nil.
func goLookup(name disasm.Symbolizer) disasm.GoSymLookup {
	if name == nil {
		return nil
	}
	return func(addr uint64) (string, uint64) {
		n, base, ok := name(addr)
		if !ok {
			return "", 0
		}
		return n, base
	}
}

// isGoBinary reports whether an ELF file with the section has is a Go
// binary: one the Go linker wrote its function table (.gopclntab, or in
// a position-independent binary .data.rel.ro.gopclntab), build
// information (.go.buildinfo) or build ID note (.note.go.buildid) into.
func isGoBinary(has func(section string) bool) bool {
	for _, s := range []string{".gopclntab", ".data.rel.ro.gopclntab", ".go.buildinfo", ".note.go.buildid"} {
		if has(s) {
			return true
		}
	}
	return false
}
