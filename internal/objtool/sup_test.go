package objtool

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// dwzPair is two programs built alike, each kept as built (orig) and
// given to dwz (path).
type dwzPair struct {
	orig, path [2]string
}

// buildForDWZ builds testdata/inline.cc, and inline.cc with split2.cc,
// with cc -O2 -g and args into dir, and copies each for dwz: dir/x and
// dir/y, as built in dir/x.orig and dir/y.orig.
func buildForDWZ(t *testing.T, dir, cc string, args ...string) dwzPair {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var p dwzPair
	for i, srcs := range [][]string{{"inline.cc"}, {"inline.cc", "split2.cc"}} {
		name := string(rune('x' + i))
		p.orig[i], p.path[i] = filepath.Join(dir, name+".orig"), filepath.Join(dir, name)
		cmd := []string{cc, "-O2", "-g", "-o", p.orig[i]}
		for _, s := range srcs {
			abs, err := filepath.Abs(filepath.Join("testdata", s))
			if err != nil {
				t.Fatal(err)
			}
			cmd = append(cmd, abs)
		}
		testenv.Run(t, dir, append(cmd, args...)...)
		testenv.Run(t, dir, "cp", p.orig[i], p.path[i])
	}
	return p
}

// TestSupplementaryFiles checks SourceLine on binaries whose DWARF dwz
// shrank, moving what several binaries share into a supplementary file
// (GNU's .gnu_debugaltlink and DWARF 5's .debug_sup; 64- and 32-bit
// binaries), as Debian's and
// Fedora's debug packages are made: every address of each binary must
// get the frames llvm-symbolizer --inlining gives the binary before dwz,
// inline functions named. llvm-symbolizer does not read supplementary
// files: on the binaries after dwz it names many inline frames "??",
// which each case checks, so that a case whose names did not move could
// not pass. The file is found where gdb looks: at the link's absolute or
// relative name (relative to a debug file's real directory, reached
// through its build ID link) or by its build ID; without it, or with
// another file in its place, the frames are llvm-symbolizer's of the
// binary after dwz and a warning names the binary and the file.
func TestSupplementaryFiles(t *testing.T) {
	testenv.Long(t, "builds programs, runs dwz and compares with llvm-symbolizer")
	dwz := testenv.Tool(t, "dwz", "dwz")
	gxx := testenv.Tool(t, "g++", "g++")
	clangxx := testenv.Tool(t, fmt.Sprintf("clang++-%d", oracleLLVM), fmt.Sprintf("clang-%d", oracleLLVM))
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	root := t.TempDir()
	// multi runs dwz -m over p's two binaries, with the link name and
	// more arguments args, and returns the supplementary file.
	multi := func(p dwzPair, sup, link string, args ...string) string {
		t.Helper()
		testenv.Run(t, filepath.Dir(p.path[0]), append(append([]string{dwz, "-m", sup, "-M", link}, args...), p.path[0], p.path[1])...)
		return sup
	}

	type tcase struct {
		name      string
		p         dwzPair
		dirs      []string // debug directories
		missing   string   // a warning that must contain this, if not ""
		unchanged bool     // the frames are llvm-symbolizer's of p.path, not p.orig
		elf32     bool     // read with the standard library (foreign.go)
	}
	var cases []tcase

	// GNU's link, absolute, for GCC's DWARF 5 and 4 and clang's DWARF 4
	// (dwz 0.15 cannot read clang's DWARF 5).
	for _, b := range []struct{ name, cc, flag string }{
		{"g++ DWARF 5", gxx, "-gdwarf-5"},
		{"g++ DWARF 4", gxx, "-gdwarf-4"},
		{"clang++ DWARF 4", clangxx, "-gdwarf-4"},
	} {
		dir := filepath.Join(root, strings.ReplaceAll(b.name, " ", "-"))
		p := buildForDWZ(t, dir, b.cc, b.flag)
		multi(p, filepath.Join(dir, "common.debug"), filepath.Join(dir, "common.debug"))
		cases = append(cases, tcase{name: b.name + ", .gnu_debugaltlink", p: p})
	}

	// 32-bit binaries, read with the standard library.
	d32 := filepath.Join(root, "elf32")
	p32 := buildForDWZ(t, d32, gxx, "-m32")
	multi(p32, filepath.Join(d32, "common.debug"), filepath.Join(d32, "common.debug"))
	cases = append(cases, tcase{name: "g++ -m32, .gnu_debugaltlink", p: p32, elf32: true})

	// DWARF 5's .debug_sup, its name relative to the binaries.
	d5 := filepath.Join(root, "debug-sup")
	p5 := buildForDWZ(t, d5, gxx)
	multi(p5, filepath.Join(d5, "sup.debug"), "sup.debug", "--dwarf-5")
	cases = append(cases, tcase{name: "g++ DWARF 5, .debug_sup, relative name", p: p5})

	// One file: dwz makes partial units that the units import, and no
	// supplementary file.
	ds := filepath.Join(root, "single")
	ps := buildForDWZ(t, ds, gxx)
	testenv.Run(t, ds, dwz, ps.path[0], ps.path[1])
	if n := partialUnits(t, ps.path[1]); n == 0 {
		t.Fatalf("%s: dwz made no partial unit", ps.path[1])
	}
	cases = append(cases, tcase{name: "one file, partial units", p: ps})

	// Fedora's layout: the binaries stripped of their DWARF, found by
	// build ID, a link to DEBUG/usr/bin/NAME.debug, whose supplementary
	// file is named relative to that directory: ../../.dwz/pkg.
	df := filepath.Join(root, "fedora")
	pf := buildForDWZ(t, df, gxx)
	debug := filepath.Join(df, "debug")
	bin := filepath.Join(debug, "usr", "bin")
	for _, d := range []string{bin, filepath.Join(debug, ".dwz")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var debugFiles [2]string
	for i, path := range pf.path {
		debugFiles[i] = filepath.Join(bin, filepath.Base(path)+".debug")
		testenv.Run(t, df, objcopy, "--only-keep-debug", path, debugFiles[i])
		// Not --strip-debug, which takes the STT_FILE symbols too.
		testenv.Run(t, df, objcopy, "--wildcard", "--remove-section=.debug_*", path)
		linkByBuildID(t, debug, path, debugFiles[i])
	}
	multi(dwzPair{path: debugFiles}, filepath.Join(debug, ".dwz", "pkg"), "../../.dwz/pkg")
	cases = append(cases, tcase{name: "separate debug files, relative to their real directory", p: pf, dirs: []string{debug}})

	// The link's name leads nowhere: the file is found by its build ID.
	db := filepath.Join(root, "by-build-id")
	pb := buildForDWZ(t, db, gxx)
	sup := multi(pb, filepath.Join(db, "common.debug"), "/nonexistent/common.debug")
	dbDebug := filepath.Join(db, "debug")
	linkByBuildID(t, dbDebug, sup, sup)
	cases = append(cases, tcase{name: "found by build ID", p: pb, dirs: []string{dbDebug}})

	// No file, and another dwz's file in its place.
	dm := filepath.Join(root, "missing")
	pm := buildForDWZ(t, dm, gxx)
	if err := os.Remove(multi(pm, filepath.Join(dm, "common.debug"), filepath.Join(dm, "common.debug"))); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tcase{name: "missing", p: pm, missing: "not found", unchanged: true})
	dw := filepath.Join(root, "wrong")
	pw := buildForDWZ(t, dw, gxx)
	multi(pw, filepath.Join(dw, "common.debug"), filepath.Join(dw, "common.debug"))
	testenv.Run(t, dw, "cp", filepath.Join(root, "g++-DWARF-4", "common.debug"), filepath.Join(dw, "common.debug"))
	cases = append(cases, tcase{name: "another file", p: pw, missing: "not the supplementary file", unchanged: true})

	total := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var said []string
			tool := New(Options{DebugDirs: tc.dirs, Warn: func(msg string) { said = append(said, msg) }})
			defer tool.Close()
			moved := 0
			for i := range tc.p.path {
				sample := sampleCode
				if tc.elf32 {
					sample = sampleForeign
				}
				addrs := sample(t, tc.p.orig[i], 3000)
				after := testenv.LLVMSymbolizeWith(t, oracleLLVM, tc.p.path[i], addrs)
				want := testenv.LLVMSymbolizeWith(t, oracleLLVM, tc.p.orig[i], addrs)
				if tc.unchanged {
					want = after
				}
				compareFrames(t, tool, tc.p.path[i], addrs, want)
				moved += unnamed(after) - unnamed(want)
				total += len(addrs)
			}
			if !tc.unchanged && tc.name != "one file, partial units" && moved == 0 {
				t.Errorf("llvm-symbolizer names every frame of the binaries after dwz: nothing was moved to a supplementary file")
			}
			if tc.missing == "" && len(said) > 0 {
				t.Errorf("said %q, want nothing", said)
			}
			if tc.missing != "" {
				if len(said) != 2 {
					t.Fatalf("said %q, want one warning per binary", said)
				}
				for i, msg := range said {
					if !strings.Contains(msg, tc.missing) || !strings.Contains(msg, "common.debug") ||
						!strings.Contains(msg, tc.p.path[0]) && !strings.Contains(msg, tc.p.path[1]) {
						t.Errorf("warning %d is %q, want %q naming the binary and the file", i, msg, tc.missing)
					}
				}
			}
			if got := len(tool.sups.Drain()); tc.name == "g++ DWARF 5, .gnu_debugaltlink" && got != 1 {
				t.Errorf("%d supplementary files read for two binaries naming one, want 1", got)
			}
		})
	}
	t.Logf("%d addresses compared", total)
}

// partialUnits counts the partial units of the binary at path.
func partialUnits(t *testing.T, path string) int {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := d.Reader(); ; r.SkipChildren() {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return n
		}
		if e.Tag == dwarf.TagPartialUnit {
			n++
		}
	}
}

// unnamed counts the frames of frames that have no function name.
func unnamed(frames [][]testenv.Frame) int {
	n := 0
	for _, fs := range frames {
		for _, f := range fs {
			if f.Func == "" {
				n++
			}
		}
	}
	return n
}

// linkByBuildID makes DEBUG/.build-id/xx/rest.debug, for the build ID
// of the file idOf, a symbolic link to target.
func linkByBuildID(t *testing.T, debug, idOf, target string) {
	t.Helper()
	f, err := elfrel.Open(idOf)
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.BuildID()
	f.Close()
	if err != nil || len(id) < 2 {
		t.Fatalf("%s: build ID %x, %v", idOf, id, err)
	}
	h := hex.EncodeToString(id)
	link := filepath.Join(debug, ".build-id", h[:2], h[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(link), target)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ls", "-lL", link).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", link, err, out)
	}
}
