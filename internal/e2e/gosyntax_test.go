package e2e

import (
	"bytes"
	"debug/elf"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/disasm"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestGoDisasmSameAsGoToolPProf profiles a Go program with runtime/pprof,
// built for amd64 (an executable and a PIE) and arm64 (run under
// qemu-user on another machine), and compares pprof's -disasm and
// -weblist with those of go tool pprof (of the toolchain that builds the
// tests) on the same binary and profile. -disasm must be the same bytes:
// Go syntax, the functions' extents, the files, lines and functions each
// instruction is given. Where the toolchain's copy of golang.org/x/arch
// is older than this module's, an instruction the two versions print
// differently may differ (the toolchain's copy itself says which, see
// testenv.ToolchainXArch), and nothing else. -weblist's assembly must
// list every instruction go tool pprof lists with the same text; its
// source lines differ by design: jitpprof gives an instruction the
// inline frames of its address, go tool pprof the outermost function
// with the innermost line, so that each puts inlined code under
// different source lines.
func TestGoDisasmSameAsGoToolPProf(t *testing.T) {
	dir := t.TempDir()
	xarch := testenv.GoToolchainXArch(t, dir)
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "gosyntax", "cpu.go.txt")
	for _, b := range []struct {
		name, goarch string
		args         []string
	}{
		{name: "amd64", goarch: "amd64"},
		{name: "amd64 PIE", goarch: "amd64", args: []string{"-buildmode=pie"}},
		{name: "arm64", goarch: "arm64"},
	} {
		t.Run(b.name, func(t *testing.T) {
			if testing.Short() && (b.goarch != runtime.GOARCH || b.args != nil) {
				t.Skip("-short: the machine's own executable only")
			}
			name := strings.ReplaceAll(b.name, " ", "-")
			bin := testenv.GoBuild(t, dir, "go", src, "cpu-"+name, []string{"GOARCH=" + b.goarch, "CGO_ENABLED=0"}, b.args...)
			prof := filepath.Join(dir, name+".pprof")
			runGoProgram(t, dir, b.goarch, bin, prof)
			versionDiff := goVersionDiff(t, xarch, b.goarch, bin)
			regexps := []string{`main\.`, `sort\.`, `.`}
			if testing.Short() {
				regexps = regexps[:2]
			}
			for _, re := range regexps {
				want := goToolPProf(t, dir, "-disasm="+re, bin, prof)
				got := runPProf(t, dir, nil, "-disasm="+re, bin, prof).stdout
				compareGoDisasm(t, re, got, want, versionDiff)
			}
			for _, re := range regexps[:2] {
				wantHTML, gotHTML := filepath.Join(dir, name+"-go.html"), filepath.Join(dir, name+".html")
				goToolPProf(t, dir, "-weblist="+re, "-output="+wantHTML, bin, prof)
				runPProf(t, dir, nil, "-weblist="+re, "-output="+gotHTML, bin, prof)
				compareWeblist(t, re, gotHTML, wantHTML, versionDiff)
			}
		})
	}
}

// TestAsmSyntaxFlag checks -asm_syntax on a Go binary: gnu and intel
// list each instruction with GNU objdump's text (objdump -d, -M intel),
// as -intel_syntax does without it; go with -intel_syntax, and an
// unknown syntax, are errors.
func TestAsmSyntaxFlag(t *testing.T) {
	objdump := testenv.Tool(t, "objdump", "binutils")
	if runtime.GOARCH != "amd64" {
		t.Skip("compares x86-64 code with objdump")
	}
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "gosyntax", "cpu.go.txt")
	bin := testenv.GoBuild(t, dir, "go", src, "cpu", []string{"CGO_ENABLED=0"})
	prof := filepath.Join(dir, "cpu.pprof")
	runGoProgram(t, dir, runtime.GOARCH, bin, prof)
	for _, tt := range []struct {
		args    []string
		objdump []string // objdump's options for the same text
	}{
		{args: []string{"-asm_syntax=gnu"}, objdump: nil},
		{args: []string{"-asm_syntax=intel"}, objdump: []string{"-M", "intel"}},
		{args: []string{"-asm_syntax=gnu", "-intel_syntax"}, objdump: []string{"-M", "intel"}},
		{args: []string{"-intel_syntax"}, objdump: []string{"-M", "intel"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			want := objdumpTexts(t, objdump, bin, tt.objdump...)
			out := runPProf(t, dir, nil, append(tt.args, `-disasm=main\.work( |$)`, bin, prof)...).stdout
			_, insts := parseDisasm(out)
			if len(insts) < 50 {
				t.Fatalf("%d instructions:\n%s", len(insts), out)
			}
			// The syntax is compared, not the names in objdump's "#"
			// comments (of data, which it names after another of the
			// symbols at an address), nor the padding after the
			// function, which objdump stops before.
			matched := 0
			for _, in := range insts {
				w, ok := want[in.Addr]
				if !ok {
					continue
				}
				matched++
				if g, w := beforeComment(in.Text), beforeComment(w); g != w {
					t.Errorf("%#x: got %q, want objdump's %q", in.Addr, g, w)
				}
			}
			if matched < 50 {
				t.Errorf("%d of %d instructions at objdump's addresses", matched, len(insts))
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{args: []string{"-asm_syntax=go", "-intel_syntax"}, want: "no Intel form"},
		{args: []string{"-asm_syntax=att"}, want: `-asm_syntax: unknown assembler syntax "att", want auto, go, gnu or intel`},
	} {
		r := run(pprofCmd(t, dir, nil, append(tt.args, `-disasm=main\.work( |$)`, bin, prof)...))
		if r.err == nil || !bytes.Contains(r.stderr, []byte(tt.want)) {
			t.Errorf("pprof %s: %v, stderr %s; want an error saying %q", strings.Join(tt.args, " "), r.err, r.stderr, tt.want)
		}
	}
}

// runGoProgram runs the program bin, built for goarch (with qemu-user
// on another machine), to write its CPU profile to prof.
func runGoProgram(t *testing.T, dir, goarch, bin, prof string) {
	t.Helper()
	args := []string{bin, prof}
	if goarch != runtime.GOARCH {
		qemu := map[string]string{"amd64": "qemu-x86_64", "arm64": "qemu-aarch64"}[goarch]
		args = append([]string{testenv.Tool(t, qemu, "qemu-user")}, args...)
	}
	testenv.Run(t, dir, args...)
}

// goToolPProf runs go tool pprof with args, in pprof's clean
// environment, and returns its output. The go command builds the tool on
// first use, in its build cache: go tool -n, in the test's own
// environment, says where.
func goToolPProf(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	tool, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if err != nil {
		t.Fatalf("go tool -n pprof: %v", err)
	}
	cmd := exec.Command(strings.TrimSpace(string(tool)), args...)
	cmd.Dir, cmd.Env = dir, cleanEnv(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
	}
	return out
}

// goVersionDiff returns, for the Go binary bin of goarch, what
// testenv.CompareGoListings needs: whether the toolchain's x/arch
// decodes the instruction at an address otherwise than ours; nil if
// they are the same version.
func goVersionDiff(t *testing.T, xarch *testenv.ToolchainXArch, goarch, bin string) func(uint64) bool {
	t.Helper()
	if xarch.Same() {
		return nil
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".text")
	text, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	m, c, bo := f.Machine, f.Class, f.ByteOrder
	return func(addr uint64) bool {
		if addr < sec.Addr || addr-sec.Addr >= uint64(len(text)) {
			return false
		}
		code := text[addr-sec.Addr : min(addr-sec.Addr+16, uint64(len(text)))]
		ours, err := disasm.DecodeGo(m, c, bo, code, addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		old, n := xarch.Decode(t, goarch, addr, code)
		return ours[0].Text != old || ours[0].Len != n
	}
}

// disasmRoutine is one function of pprof's -disasm output: its header
// lines and its instructions.
type disasmRoutine struct {
	head  []string
	insts []testenv.ListedInst
}

var disasmInst = regexp.MustCompile(`^ *(\S+) +(\S+) +([0-9a-f]+): (.*)$`)

// parseDisasm splits pprof's -disasm output into routines (the lines
// before the first come as a routine without instructions) and returns
// the instructions of all of them too.
func parseDisasm(out []byte) ([]disasmRoutine, []testenv.ListedInst) {
	var rs []disasmRoutine
	var all []testenv.ListedInst
	r := &disasmRoutine{}
	loc := "" // the file and line printed on a line of its own
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, strings.Repeat(" ", 74)+";"); ok {
			loc = rest
			continue
		}
		m := disasmInst.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "ROUTINE ") {
				rs = append(rs, *r)
				r = &disasmRoutine{}
			}
			r.head = append(r.head, line)
			continue
		}
		addr, _ := strconv.ParseUint(m[3], 16, 64)
		text := m[4]
		// "%-40s;%s": an instruction shorter than 40 characters and its
		// function, file and line.
		if len(text) > 40 && text[40] == ';' {
			text, loc = strings.TrimRight(text[:40], " "), text[41:]
		}
		in := testenv.ListedInst{Addr: addr, Text: text, Rest: m[1] + " " + m[2] + " ;" + loc}
		r.insts = append(r.insts, in)
		all = append(all, in)
		loc = ""
	}
	return append(rs, *r), all
}

// compareGoDisasm compares pprof's -disasm output got with go tool
// pprof's want: the same routines with the same headers, and in each the
// same instructions but where x/arch's versions differ.
func compareGoDisasm(t *testing.T, re string, got, want []byte, versionDiff func(uint64) bool) {
	t.Helper()
	if bytes.Equal(got, want) {
		t.Logf("-disasm=%s: the same %d bytes", re, len(got))
		return
	}
	g, _ := parseDisasm(got)
	w, _ := parseDisasm(want)
	if len(g) != len(w) {
		t.Fatalf("-disasm=%s: %d routines, want %d\n%s\nwant:\n%s", re, len(g), len(w), got, want)
	}
	explained := 0
	for i := range g {
		if strings.Join(g[i].head, "\n") != strings.Join(w[i].head, "\n") {
			t.Errorf("-disasm=%s: got\n%s\nwant\n%s", re, strings.Join(g[i].head, "\n"), strings.Join(w[i].head, "\n"))
		}
		bad, n := testenv.CompareGoListings(g[i].insts, w[i].insts, versionDiff)
		explained += n
		for k, b := range bad {
			if k == 10 {
				t.Errorf("and %d more", len(bad)-k)
				break
			}
			t.Errorf("-disasm=%s: %s: %s", re, strings.Join(g[i].head, " "), b)
		}
	}
	t.Logf("-disasm=%s: %d bytes, the same but for %d instructions x/arch's versions print differently", re, len(got), explained)
}

var weblistInst = regexp.MustCompile(`(\S+) +(\S+) +([0-9a-f]+): +(.*?) *<span class=unimportant>`)

// weblistInsts returns the instructions of a -weblist page: their texts
// by address.
func weblistInsts(t *testing.T, page string) map[uint64]string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]string{}
	for _, m := range weblistInst.FindAllStringSubmatch(string(data), -1) {
		addr, _ := strconv.ParseUint(m[3], 16, 64)
		out[addr] = strings.TrimSpace(html.UnescapeString(m[4]))
	}
	return out
}

// compareWeblist compares the assembly of pprof's -weblist page got with
// go tool pprof's want: every instruction want lists, got lists with the
// same text but where x/arch's versions differ.
func compareWeblist(t *testing.T, re, got, want string, versionDiff func(uint64) bool) {
	t.Helper()
	g, w := weblistInsts(t, got), weblistInsts(t, want)
	if len(w) < 20 {
		t.Fatalf("-weblist=%s: go tool pprof lists %d instructions", re, len(w))
	}
	explained := 0
	for addr, wt := range w {
		gt, ok := g[addr]
		switch {
		case !ok:
			t.Errorf("-weblist=%s: %#x %q not listed", re, addr, wt)
		case gt != wt && versionDiff != nil && versionDiff(addr):
			explained++
		case gt != wt:
			t.Errorf("-weblist=%s: %#x: got %q, want %q", re, addr, gt, wt)
		}
	}
	t.Logf("-weblist=%s: the %d instructions go tool pprof lists (of our %d) the same but for %d x/arch's versions print differently", re, len(w), len(g), explained)
}

// beforeComment returns an instruction's text without objdump's "#"
// comment.
func beforeComment(text string) string {
	text, _, _ = strings.Cut(text, "#")
	return strings.TrimSpace(text)
}

// objdumpTexts returns the text GNU objdump gives each instruction of
// bin's main.work, by address.
func objdumpTexts(t *testing.T, objdump, bin string, args ...string) map[uint64]string {
	t.Helper()
	cmd := exec.Command(objdump, append([]string{"-d", "--no-show-raw-insn", "--disassemble=main.work"}, append(args, bin)...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	texts := map[uint64]string{}
	for _, line := range strings.Split(string(out), "\n") {
		a, text, ok := strings.Cut(line, ":\t")
		if !ok {
			continue
		}
		addr, err := strconv.ParseUint(strings.TrimSpace(a), 16, 64)
		if err != nil {
			continue
		}
		texts[addr] = text
	}
	if len(texts) == 0 {
		t.Fatalf("%v: no instructions\n%s", cmd.Args, out)
	}
	return texts
}

// String makes the routines print readably in failures.
func (r disasmRoutine) String() string {
	return fmt.Sprintf("%s (%d instructions)", strings.Join(r.head, "\n"), len(r.insts))
}
