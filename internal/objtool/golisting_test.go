package objtool

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	gdriver "github.com/google/pprof/driver"
	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/testenv"
)

// goObjdumpInst is one instruction of go tool objdump's listing.
type goObjdumpInst struct {
	pos   string // base name of the file, colon, line
	addr  uint64
	bytes string // hex
	text  string
}

// goObjdumpFunc is one function of go tool objdump's listing.
type goObjdumpFunc struct {
	name  string
	insts []goObjdumpInst
}

// goObjdump runs go tool objdump (of the toolchain that builds the
// tests) on bin, for the functions matching sym ("" for all).
func goObjdump(t *testing.T, bin, sym string) []goObjdumpFunc {
	t.Helper()
	args := []string{"tool", "objdump"}
	if sym != "" {
		args = append(args, "-s", sym)
	}
	cmd := exec.Command("go", append(args, bin)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	var funcs []goObjdumpFunc
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "TEXT "); ok {
			name, _, _ = strings.Cut(name, "(SB) ")
			funcs = append(funcs, goObjdumpFunc{name: name})
			continue
		}
		// "  file.go:12\t\t0x401000\t\t4889c3\t\tMOVQ AX, BX\t"
		var f []string
		for _, s := range strings.Split(strings.TrimSpace(line), "\t") {
			if s != "" {
				f = append(f, s)
			}
		}
		if len(f) != 4 || len(funcs) == 0 {
			if strings.TrimSpace(line) != "" {
				t.Fatalf("go tool objdump: unexpected line %q", line)
			}
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("go tool objdump: line %q: %v", line, err)
		}
		fn := &funcs[len(funcs)-1]
		fn.insts = append(fn.insts, goObjdumpInst{pos: f[0], addr: addr, bytes: f[2], text: f[3]})
	}
	return funcs
}

// TestGoDisasmSameAsGoObjdump checks the Go-syntax listing of Go
// binaries (golisting.go) against go tool objdump, which decodes with
// the same printers and the same symbol lookup: a Go program built for
// every machine Go has a disassembler for, every instruction of every
// function of the binary (about 150,000 each) at the same address with
// the same text, file and line. Where the Go toolchain's copy of
// golang.org/x/arch is older than this module's, an instruction the two
// versions decode differently (checked with the toolchain's copy itself,
// see testenv.ToolchainXArch) may differ, and is counted; with the same
// version nothing may.
func TestGoDisasmSameAsGoObjdump(t *testing.T) {
	testenv.Long(t, "disassembles Go binaries of ten machines and compares with go tool objdump")
	dir := t.TempDir()
	arches := []string{"amd64", "arm64"}
	if !testing.Short() {
		arches = append(arches, "386", "arm", "ppc64le", "ppc64", "riscv64", "s390x", "loong64")
	}
	xarch := testenv.GoToolchainXArch(t, dir)
	t.Logf("x/arch: the toolchain's %s, ours %s", xarch.Version, xarch.Ours)
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			bin := testenv.GoBuild(t, dir, "go", "testdata/goinline.go.txt", "goinline-"+arch, []string{"GOARCH=" + arch, "CGO_ENABLED=0"})
			compareWithGoObjdump(t, xarch, arch, bin)
		})
	}
	t.Run("PIE", func(t *testing.T) {
		bin := testenv.GoBuild(t, dir, "go", "testdata/goinline.go.txt", "goinline-pie", nil, "-buildmode=pie")
		compareWithGoObjdump(t, xarch, "amd64", bin)
	})
}

// compareWithGoObjdump compares the listing of every function of the Go
// binary bin, built for arch, with go tool objdump's.
func compareWithGoObjdump(t *testing.T, xarch *testenv.ToolchainXArch, arch, bin string) {
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	textSec := ef.Section(".text")
	text, err := textSec.Data()
	if err != nil {
		t.Fatal(err)
	}
	var versionDiff func(addr uint64) bool
	if !xarch.Same() {
		versionDiff = func(addr uint64) bool {
			code := text[addr-textSec.Addr : min(addr-textSec.Addr+16, uint64(len(text)))]
			ours, err := disasm.DecodeGo(ef.Machine, ef.Class, ef.ByteOrder, code, addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			old, n := xarch.Decode(t, arch, addr, code)
			return ours[0].Text != old || ours[0].Len != n
		}
	}
	tool := New(Options{Warn: func(msg string) { t.Errorf("warning: %s", msg) }})
	defer tool.Close()
	of, err := tool.Open(bin, 0, ^uint64(0), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	funcs := goObjdump(t, bin, "")
	var insts, explained int
	for _, fn := range funcs {
		if len(fn.insts) == 0 {
			continue
		}
		syms, err := of.Symbols(regexp.MustCompile("^"+regexp.QuoteMeta(fn.name)+"$"), 0)
		if err != nil {
			t.Fatal(err)
		}
		var sym *gdriver.Sym
		for _, s := range syms {
			if s.Start == fn.insts[0].addr {
				sym = s
			}
		}
		if sym == nil {
			t.Errorf("Symbols(%s): %v, want one at %#x", fn.name, symList(syms), fn.insts[0].addr)
			continue
		}
		// Disasm leaves the last byte of pprof's range out (as go
		// tool pprof does); objdump lists the whole symbol.
		got, err := tool.Disasm(bin, sym.Start, sym.End+1, false)
		if err != nil {
			t.Fatalf("Disasm(%s): %v", fn.name, err)
		}
		var g, w []testenv.ListedInst
		for _, in := range got {
			g = append(g, testenv.ListedInst{Addr: in.Addr, Text: in.Text, Rest: fmt.Sprintf("%s:%d", goBase(in.File), in.Line)})
		}
		for _, in := range fn.insts {
			w = append(w, testenv.ListedInst{Addr: in.addr, Text: in.text, Rest: fileLessLine(in.pos)})
		}
		insts += len(w)
		bad, n := testenv.CompareGoListings(g, w, versionDiff)
		explained += n
		for k, b := range bad {
			if k == 5 {
				t.Errorf("%s: and %d more", fn.name, len(bad)-k)
				break
			}
			t.Errorf("%s %s", fn.name, b)
		}
	}
	// Explained differences are far fewer than the instructions: 2% on
	// x86, 11% on riscv64, where x/arch v0.23 printed every branch
	// target relative to the pc (3(PC)), later versions as an address.
	if len(funcs) < 1000 || insts < 100000 || explained > insts/5 {
		t.Errorf("%d functions, %d instructions; %d differences explained by x/arch's versions", len(funcs), insts, explained)
	}
	t.Logf("%d functions, %d instructions the same but for %d (x/arch %s here, %s in the toolchain)", len(funcs), insts, explained, xarch.Ours, xarch.Version)
}

// fileLessLine returns pos, a file and line of go tool objdump's, with
// a negative line without a file as -1. go tool objdump reads the line
// table of a trampoline the linker adds on riscv64 past its first
// instruction as debug/gosym does: -8 there, where the object tool says
// -1 (no line), as it does at any address the Go table has no line for.
// pprof prints no line without a file.
func fileLessLine(pos string) string {
	if strings.HasPrefix(pos, ":-") {
		return ":-1"
	}
	return pos
}

// goBase is the last element of a path, as go tool objdump prints a
// file: "" for "".
func goBase(path string) string {
	return path[strings.LastIndex(path, "/")+1:]
}

// TestSyntaxChoice checks which listing Disasm and Symbols give for each
// Options.Syntax, of a Go binary and of a C program, with pprof's
// -intel_syntax or without: go tool pprof's listing of a Go binary
// (symbol extents from the symbol table, Go syntax, no function names),
// Go syntax alone for other binaries, or objdump's AT&T or Intel syntax.
func TestSyntaxChoice(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	if runtime.GOARCH != "amd64" {
		t.Skip("checks x86-64 code")
	}
	dir := t.TempDir()
	goBin := testenv.GoBuild(t, dir, "go", "testdata/goinline.go.txt", "goinline", []string{"CGO_ENABLED=0"})
	cBin := filepath.Join(dir, "inline")
	testenv.Run(t, dir, gcc, "-O2", "-g", "-o", cBin, filepath.Join(testenv.RepoRoot(t), "internal/objtool/testdata/inline.c"))
	const (
		goListing = "go listing" // go tool pprof's
		goText    = "go"
		att       = "att"
		intel     = "intel"
	)
	for _, tt := range []struct {
		syntax Syntax
		bin    string
		intel  bool
		want   string // goListing, goText, att, intel, or an error
	}{
		{syntax: SyntaxAuto, bin: goBin, want: goListing},
		{syntax: SyntaxAuto, bin: goBin, intel: true, want: intel},
		{syntax: SyntaxAuto, bin: cBin, want: att},
		{syntax: SyntaxAuto, bin: cBin, intel: true, want: intel},
		{syntax: SyntaxGo, bin: goBin, want: goListing},
		{syntax: SyntaxGo, bin: cBin, want: goText},
		{syntax: SyntaxGo, bin: goBin, intel: true, want: "no Intel form"},
		{syntax: SyntaxGNU, bin: goBin, want: att},
		{syntax: SyntaxGNU, bin: goBin, intel: true, want: intel},
		{syntax: SyntaxIntel, bin: goBin, want: intel},
		{syntax: SyntaxIntel, bin: cBin, want: intel},
	} {
		t.Run(fmt.Sprintf("%v %s intel=%v", tt.syntax, filepath.Base(tt.bin), tt.intel), func(t *testing.T) {
			tool := New(Options{Syntax: tt.syntax})
			defer tool.Close()
			of, err := tool.Open(tt.bin, 0, ^uint64(0), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			name := "work"
			if tt.bin == goBin {
				name = "main.work"
			}
			syms, err := of.Symbols(regexp.MustCompile("^"+regexp.QuoteMeta(name)+"$"), 0)
			if err != nil || len(syms) != 1 {
				t.Fatalf("Symbols(%s) = %v, %v; want one", name, symList(syms), err)
			}
			s := syms[0]
			size := elfSymbolSize(t, tt.bin, name)
			// go tool pprof's End is the function's last byte, before
			// the padding; objdump's lister's is the next symbol. pprof
			// does not tell Symbols about -intel_syntax: a Go binary's
			// functions have go tool pprof's extents in Intel syntax
			// too, unless the syntax is gnu or intel.
			goExtents := tt.bin == goBin && (tt.syntax == SyntaxAuto || tt.syntax == SyntaxGo)
			if wantEnd := s.Start + size - 1; goExtents != (s.End == wantEnd) {
				t.Errorf("Symbols(%s): [%#x, %#x], symbol size %d", name, s.Start, s.End, size)
			}
			insts, err := tool.Disasm(tt.bin, s.Start, s.End, tt.intel)
			if !strings.Contains("go listing go att intel", tt.want) {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Disasm: %v, want an error saying %q", err, tt.want)
				}
				return
			}
			if err != nil || len(insts) < 10 {
				t.Fatalf("Disasm: %d instructions, %v", len(insts), err)
			}
			// Go's mnemonics are upper case, objdump's lower case; AT&T
			// syntax names registers with %.
			upper, percent := 0, 0
			for _, in := range insts {
				if m := strings.Fields(in.Text)[0]; m == strings.ToUpper(m) {
					upper++
				}
				if strings.Contains(in.Text, "%") {
					percent++
				}
			}
			got := intel
			switch {
			case upper == len(insts) && insts[0].Function == "":
				got = goListing
			case upper == len(insts):
				got = goText
			case upper > 0:
				got = fmt.Sprintf("%d of %d mnemonics in upper case", upper, len(insts))
			case percent > 0:
				got = att
			}
			if got != tt.want {
				t.Errorf("Disasm: %s syntax (%q, function %q), want %s", got, insts[0].Text, insts[0].Function, tt.want)
			}
		})
	}
}

// elfSymbolSize returns the size of the symbol name in the ELF file bin.
func elfSymbolSize(t *testing.T, bin, name string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Size
		}
	}
	t.Fatalf("%s: no symbol %s", bin, name)
	return 0
}

// TestParseSyntax: every Syntax reads back from its name; others are
// errors.
func TestParseSyntax(t *testing.T) {
	for _, s := range []Syntax{SyntaxAuto, SyntaxGo, SyntaxGNU, SyntaxIntel} {
		if got, err := ParseSyntax(s.String()); got != s || err != nil {
			t.Errorf("ParseSyntax(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	if got, err := ParseSyntax(""); got != SyntaxAuto || err != nil {
		t.Errorf(`ParseSyntax("") = %v, %v; want auto`, got, err)
	}
	for _, name := range []string{"att", "GO", "plan9"} {
		if _, err := ParseSyntax(name); err == nil {
			t.Errorf("ParseSyntax(%q): no error", name)
		}
	}
}
