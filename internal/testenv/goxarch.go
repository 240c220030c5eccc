package testenv

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ToolchainXArch decodes machine code in Go syntax with the copy of
// golang.org/x/arch the Go toolchain's own commands (go tool objdump, go
// tool pprof) are built with, the one in its src/cmd/vendor, which can
// be older than the version this module requires: where the two print
// an instruction differently, go tool pprof's listing differs from
// jitpprof's for that reason alone.
type ToolchainXArch struct {
	// Version is the toolchain's x/arch version, Ours this module's.
	Version, Ours string

	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

// Same reports whether the toolchain builds with the x/arch version this
// module requires: then go tool pprof's Go syntax must be jitpprof's
// exactly.
func (x *ToolchainXArch) Same() bool { return x.Version == x.Ours }

// xarchVendor is where the toolchain keeps its x/arch, under GOROOT.
const xarchVendor = "src/cmd/vendor/golang.org/x/arch"

// decodeProgram decodes the instructions it reads, one a line ("goarch
// hex-pc hex-code"), and writes for each its length and its text in Go
// syntax with no symbols (tab-separated), decoding the way Go's
// cmd/internal/disasm does: the instruction at the start of the code,
// or "?" and the machine's step when it does not decode.
const decodeProgram = `package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/arch/arm/armasm"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/loong64/loong64asm"
	"golang.org/x/arch/ppc64/ppc64asm"
	"golang.org/x/arch/riscv64/riscv64asm"
	"golang.org/x/arch/s390x/s390xasm"
	"golang.org/x/arch/x86/x86asm"
)

type reader struct {
	code []byte
	pc   uint64
}

func (r reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || uint64(off) < r.pc || uint64(off)-r.pc >= uint64(len(r.code)) {
		return 0, io.EOF
	}
	n := copy(p, r.code[uint64(off)-r.pc:])
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

func decode(arch string, code []byte, pc uint64) (string, int) {
	r := reader{code, pc}
	switch arch {
	case "amd64", "386":
		mode := 64
		if arch == "386" {
			mode = 32
		}
		in, err := x86asm.Decode(code, mode)
		if err != nil || in.Len == 0 || in.Op == 0 {
			return "?", 1
		}
		return x86asm.GoSyntax(in, pc, nil), in.Len
	case "arm64":
		in, err := arm64asm.Decode(code)
		if err != nil || in.Op == 0 {
			return "?", 4
		}
		return arm64asm.GoSyntax(in, pc, nil, r), 4
	case "arm":
		in, err := armasm.Decode(code, armasm.ModeARM)
		if err != nil || in.Len == 0 || in.Op == 0 {
			return "?", 4
		}
		return armasm.GoSyntax(in, pc, nil, r), in.Len
	case "loong64":
		in, err := loong64asm.Decode(code)
		if err != nil || in.Op == 0 {
			return "?", 4
		}
		return loong64asm.GoSyntax(in, pc, nil), 4
	case "ppc64", "ppc64le":
		var bo binary.ByteOrder = binary.LittleEndian
		if arch == "ppc64" {
			bo = binary.BigEndian
		}
		in, err := ppc64asm.Decode(code, bo)
		if err != nil || in.Len == 0 {
			return "?", 4
		}
		return ppc64asm.GoSyntax(in, pc, nil), in.Len
	case "riscv64":
		in, err := riscv64asm.Decode(code)
		if err != nil || in.Op == 0 {
			return "?", 2
		}
		return riscv64asm.GoSyntax(in, pc, nil, r), in.Len
	case "s390x":
		in, err := s390xasm.Decode(code)
		if err != nil || in.Len == 0 || in.Op == 0 {
			return "?", 2
		}
		return s390xasm.GoSyntax(in, pc, nil), in.Len
	}
	return "unknown GOARCH " + arch, 0
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pc, err1 := strconv.ParseUint(f[1], 16, 64)
		code, err2 := hex.DecodeString(f[2])
		if len(f) != 3 || err1 != nil || err2 != nil {
			fmt.Fprintf(w, "0\tbad request %q\n", sc.Text())
		} else {
			text, n := decode(f[0], code, pc)
			fmt.Fprintf(w, "%d\t%s\n", n, text)
		}
		w.Flush()
	}
}
`

// GoToolchainXArch builds, in dir, a program that decodes with the Go
// toolchain's copy of x/arch (the go command on PATH, whose GOROOT it
// reads), and starts it; it is stopped when t ends.
func GoToolchainXArch(t testing.TB, dir string) *ToolchainXArch {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	x := &ToolchainXArch{Version: vendoredVersion(t, goroot), Ours: ourXArch(t)}
	// A module of the vendored packages: the toolchain keeps them
	// without a go.mod, which a replace directive needs.
	mod := filepath.Join(dir, "xarch-toolchain")
	src := filepath.Join(goroot, xarchVendor)
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		WriteFile(t, filepath.Join(mod, "arch", rel), data)
		return nil
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
	WriteFile(t, filepath.Join(mod, "arch", "go.mod"), []byte("module golang.org/x/arch\n\ngo 1.18\n"))
	WriteFile(t, filepath.Join(mod, "go.mod"), []byte("module xarchdecode\n\ngo 1.18\n\nrequire golang.org/x/arch v0.0.0\n\nreplace golang.org/x/arch => ./arch\n"))
	WriteFile(t, filepath.Join(mod, "main.go"), []byte(decodeProgram))
	bin := filepath.Join(dir, "xarch-toolchain-decode")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", build.Args, err, b)
	}
	cmd := exec.Command(bin)
	if x.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	x.out = bufio.NewReader(stdout)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		x.in.Close() // the program ends at the end of its input
		cmd.Wait()
	})
	return x
}

// Decode returns the text and length go tool objdump gives the
// instruction at the start of code, loaded at pc, for goarch, printed
// with no symbols.
func (x *ToolchainXArch) Decode(t testing.TB, goarch string, pc uint64, code []byte) (string, int) {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, err := fmt.Fprintf(x.in, "%s %x %s\n", goarch, pc, hex.EncodeToString(code)); err != nil {
		t.Fatalf("toolchain x/arch decoder: %v", err)
	}
	line, err := x.out.ReadString('\n')
	if err != nil {
		t.Fatalf("toolchain x/arch decoder: %v", err)
	}
	n, text, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
	size, err := strconv.Atoi(n)
	if err != nil || size == 0 {
		t.Fatalf("toolchain x/arch decoder: %q", line)
	}
	return text, size
}

// vendoredVersion returns the version of x/arch the toolchain at goroot
// vendors.
func vendoredVersion(t testing.TB, goroot string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goroot, "src/cmd/vendor/modules.txt"))
	if err != nil {
		t.Fatalf("the Go toolchain's vendored modules: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "# golang.org/x/arch "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s: no golang.org/x/arch", filepath.Join(goroot, "src/cmd/vendor/modules.txt"))
	return ""
}

// ourXArch returns the version of x/arch the test binary is built with.
func ourXArch(t testing.TB) string {
	t.Helper()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "golang.org/x/arch" {
				return d.Version
			}
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "golang.org/x/arch").Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/arch: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// ListedInst is one instruction of a listing in Go syntax.
type ListedInst struct {
	Addr uint64
	Text string // the instruction
	Rest string // what else its line says (samples, file and line), compared as is
}

// CompareGoListings compares got, jitpprof's listing of some code in Go
// syntax, with want, the Go toolchain's listing of the same code, and
// returns the differences the toolchain's older x/arch does not explain,
// and how many it does. versionDiff reports whether the toolchain's
// x/arch decodes the instruction at addr otherwise than this module's
// (its text, or its length): an instruction listed differently at such
// an address is explained, and so are the instructions after it where
// the two listings are out of step (an instruction one decoder reads
// longer than the other), up to the first address both list, whose
// other fields may differ too (pprof prints a file and line when they
// change). With the same x/arch, pass nil: every difference counts.
func CompareGoListings(got, want []ListedInst, versionDiff func(addr uint64) bool) (unexplained []string, explained int) {
	i, j := 0, 0
	loose := false // after an explained difference, until the listings meet
	for i < len(got) || j < len(want) {
		if i < len(got) && j < len(want) && got[i].Addr == want[j].Addr {
			g, w := got[i], want[j]
			i++
			j++
			switch {
			case g.Text == w.Text && (g.Rest == w.Rest || loose):
				loose = false
			case g.Text != w.Text && versionDiff != nil && versionDiff(g.Addr):
				explained++
				loose = true
			default:
				unexplained = append(unexplained, fmt.Sprintf("%#x: got %q %q, want %q %q", g.Addr, g.Text, g.Rest, w.Text, w.Rest))
				loose = false
			}
			continue
		}
		// Out of step: the lower address is listed by one side only.
		if j >= len(want) || i < len(got) && got[i].Addr < want[j].Addr {
			if !loose {
				unexplained = append(unexplained, fmt.Sprintf("%#x: got %q %q, not listed by the toolchain", got[i].Addr, got[i].Text, got[i].Rest))
			}
			i++
		} else {
			if !loose {
				unexplained = append(unexplained, fmt.Sprintf("%#x: want %q %q, not listed here", want[j].Addr, want[j].Text, want[j].Rest))
			}
			j++
		}
		if loose {
			explained++
		}
	}
	return unexplained, explained
}
