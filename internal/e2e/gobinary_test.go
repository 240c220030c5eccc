package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestStrippedGoBinaryPerfData records a Go program (an executable, and a
// PIE) with perf record -g, its binary stripped of its symbol table and
// DWARF as Go binaries often ship, and checks that pprof, reading the
// recording, gives the program's functions the same files, lines and
// inline frames from the Go runtime's own table as from the DWARF of the
// binary before strip (put at the same path, with the same build ID):
// every report on the program's functions is byte-identical. Upstream
// pprof's binutils give a binary without symbols nothing but addresses.
func TestStrippedGoBinaryPerfData(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	llvmStrip := testenv.Tool(t, "llvm-strip-19", "llvm-19")
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "internal", "objtool", "testdata", "goinline.go.txt")
	// A PIE runs where ASLR puts it: its mapping's base is computed.
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			testStrippedGoPerfData(t, perf, llvmStrip, dir, src, mode)
		})
	}
}

// testStrippedGoPerfData is TestStrippedGoBinaryPerfData for one
// -buildmode.
func testStrippedGoPerfData(t *testing.T, perf, llvmStrip, dir, src, mode string) {
	bin := filepath.Join(dir, "goinline-"+mode)
	testenv.GoBuild(t, dir, "go", src, "goinline-"+mode+".dwarf", nil, "-buildmode="+mode)
	testenv.Run(t, dir, llvmStrip, "-o", bin, bin+".dwarf")
	data := filepath.Join(dir, mode+".data")
	perfRecord(t, perf, "-g", "-o", data, bin, "100")
	stripped, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	withDWARF, err := os.ReadFile(bin + ".dwarf")
	if err != nil {
		t.Fatal(err)
	}
	report := func(t *testing.T, binary []byte, args ...string) []byte {
		t.Helper()
		if err := os.WriteFile(bin, binary, 0o755); err != nil {
			t.Fatal(err)
		}
		r := run(pprofCmd(t, dir, nil, append(args, data)...))
		if r.err != nil {
			t.Fatalf("pprof %v: %v\n%s", args, r.err, r.stderr)
		}
		return r.stdout
	}
	for _, args := range [][]string{
		{"-top", "-lines", `-show=^main\.`},
		{"-traces", "-lines", `-show=^main\.`},
		{"-peek", `^main\.work$`, `-show=^main\.`},
		{"-list", `^main\.work$`},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			got, want := report(t, stripped, args...), report(t, withDWARF, args...)
			if !bytes.Equal(got, want) {
				t.Errorf("stripped binary:\n%s\nwith DWARF:\n%s", got, want)
			}
			if !bytes.Contains(got, []byte("main.work")) {
				t.Errorf("no main.work in the report:\n%s", got)
			}
		})
	}
	top := report(t, stripped, "-top", "-lines", "-nodecount=1000")
	for _, want := range []string{"main.go:", "(inline)", "runtime."} {
		if !bytes.Contains(top, []byte(want)) {
			t.Errorf("no %q in the stripped binary's report:\n%s", want, top)
		}
	}
}

// goFrames is a Go program whose leaf function has no frame of its own
// (no frame pointer pushed): unwinding by frame pointers skips its
// caller.
const goFrames = `package main

import "fmt"

//go:noinline
func leaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i*i ^ (s >> 3)
	}
	return s
}

//go:noinline
func mid(n int) int { return leaf(n) + leaf(n/2) }

//go:noinline
func top(n int) int {
	s := 0
	for i := 0; i < 200; i++ {
		s += mid(n)
	}
	return s
}

func main() { fmt.Println(top(1000000)) }
`

// TestGoBinaryDwarfUnwinding records a Go program with perf record
// --call-graph dwarf, built three ways. Go's linker writes its call frame
// information as a compressed .debug_frame, not .eh_frame; without DWARF
// (-ldflags=-w, and -s -w) the runtime's own SP-delta table unwinds Go
// code. Either way each sample in main.leaf must have its caller
// main.mid, which the frame pointer chain skips (leaf pushes none), then
// main.top and main.main.
func TestGoBinaryDwarfUnwinding(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	dir := t.TempDir()
	src := filepath.Join(dir, "frames.go")
	if err := os.WriteFile(src, []byte(goFrames), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ name, ldflags string }{{"dwarf", ""}, {"w", "-w"}, {"sw", "-s -w"}} {
		t.Run(b.name, func(t *testing.T) {
			bin := testenv.GoBuild(t, dir, "go", src, "frames-"+b.name, nil, "-ldflags="+b.ldflags)
			data := filepath.Join(dir, b.name+".data")
			perfRecord(t, perf, "-F", "1000", "--call-graph", "dwarf", "-o", data, bin)
			out := filepath.Join(dir, b.name+".pb.gz")
			runPProf(t, dir, nil, "-proto", "-output", out, data)
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.ParseData(raw)
			if err != nil {
				t.Fatal(err)
			}
			leaf, whole := 0, 0
			for _, s := range p.Sample {
				var fns []string
				for _, l := range s.Location {
					for _, ln := range l.Line {
						fns = append(fns, ln.Function.Name)
					}
				}
				if len(fns) == 0 || fns[0] != "main.leaf" {
					continue
				}
				leaf += int(s.Value[0])
				if len(fns) >= 4 && fns[1] == "main.mid" && fns[2] == "main.top" && fns[3] == "main.main" {
					whole += int(s.Value[0])
				}
			}
			if leaf < 100 || whole*100 < leaf*95 {
				t.Errorf("%d of %d samples in main.leaf have main.mid, main.top and main.main above it", whole, leaf)
			}
		})
	}
}
