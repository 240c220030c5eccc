package objtool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestSplitDWARFSameAsLLVMSymbolizer: binaries of two translation units
// built with -gsplit-dwarf by GCC and clang, DWARF 5 and DWARF 4 (GNU's
// extension), whose inline frames only their split DWARF has (or, with
// clang's -fsplit-dwarf-inlining, some in the skeletons too, which
// llvm-symbolizer uses only without the split files). Every
// address gets llvm-symbolizer 19's frames, field for field: from the
// .dwo files next to the objects (found from the skeletons'
// DW_AT_comp_dir and DW_AT_dwo_name), from a DWARF package (PROG.dwp, by
// llvm-dwp, and for DWARF 4 by GNU dwp) with the .dwo files gone, and, with neither or with a .dwo of
// another build, from the skeletons' line tables alone, as llvm-symbolizer
// does, said once; FIFOs in their place do not block.
func TestSplitDWARFSameAsLLVMSymbolizer(t *testing.T) {
	testenv.Long(t, "builds split-DWARF programs and compares with llvm-symbolizer")
	t.Parallel()
	srcs := []string{"testdata/inline.cc", "testdata/split2.cc"}
	for i, s := range srcs {
		abs, err := filepath.Abs(s)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = abs
	}
	dwp := testenv.Tool(t, fmt.Sprintf("llvm-dwp-%d", oracleLLVM), fmt.Sprintf("llvm-%d", oracleLLVM))
	gnuDWP := testenv.Tool(t, "dwp", "binutils")
	run := func(dir string, args ...string) { t.Helper(); testenv.Run(t, dir, args...) }
	// build compiles and links the sources in dir with cxx and flags;
	// GCC and clang write each object's .dwo next to it.
	build := func(dir, cxx string, flags ...string) string {
		t.Helper()
		var objs []string
		for i, src := range srcs {
			obj := fmt.Sprintf("tu%d.o", i)
			run(dir, append([]string{cxx, "-O2", "-g", "-gsplit-dwarf", "-c", "-o", obj, src}, flags...)...)
			objs = append(objs, obj)
		}
		run(dir, append([]string{cxx, "-o", "prog"}, objs...)...)
		return filepath.Join(dir, "prog")
	}
	gxx := testenv.Tool(t, "g++", "g++")
	clangxx := testenv.Tool(t, fmt.Sprintf("clang++-%d", oracleLLVM), fmt.Sprintf("clang-%d", oracleLLVM))
	for _, tc := range []struct {
		name  string
		cxx   string
		flags []string
		// skeletonInlines: the skeletons have inline frames of their own
		// (clang's -fsplit-dwarf-inlining), which only serve without the
		// split files.
		skeletonInlines bool
	}{
		{"g++ DWARF 5", gxx, []string{"-gdwarf-5"}, false},
		{"g++ DWARF 4", gxx, []string{"-gdwarf-4"}, false},
		{"clang++ DWARF 5", clangxx, []string{"-gdwarf-5"}, false},
		{"clang++ DWARF 4", clangxx, []string{"-gdwarf-4"}, false},
		{"clang++ DWARF 5 -fsplit-dwarf-inlining", clangxx, []string{"-gdwarf-5", "-fsplit-dwarf-inlining"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog := build(dir, tc.cxx, tc.flags...)
			addrs := sampleCode(t, prog, 3000)
			// last is what llvm-symbolizer said in the last check.
			var last [][]testenv.Frame
			// check compares every address with llvm-symbolizer on the
			// files as they are now (or, if again, with what it said
			// last), with a new Tool, and returns how many have inline
			// frames and what the Tool said.
			check := func(what string, again bool) (inline int, warnings []string) {
				t.Helper()
				tool := New(Options{Warn: func(msg string) { warnings = append(warnings, msg) }})
				defer tool.Close()
				if !again {
					last = testenv.LLVMSymbolizeWith(t, oracleLLVM, prog, addrs)
				}
				inline = compareFrames(t, tool, prog, addrs, last)
				t.Logf("%s: %d addresses, %d with inline frames; warnings %q", what, len(addrs), inline, warnings)
				return inline, warnings
			}
			if inline, w := check(".dwo files", false); inline == 0 || len(w) > 0 {
				t.Errorf(".dwo files: %d addresses with inline frames, warnings %q; want some and none", inline, w)
			}

			// A DWARF package, the .dwo files moved away; but first the
			// package cut short, which is not an object file: as
			// llvm-symbolizer, the .dwo files serve instead, said once.
			run(dir, dwp, "-e", "prog", "-o", "prog.dwp")
			whole, err := os.ReadFile(prog + ".dwp")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(prog+".dwp", whole[:40], 0o644); err != nil {
				t.Fatal(err)
			}
			if inline, w := check("a broken package", false); inline == 0 || len(w) != 1 || !strings.Contains(w[0], ".dwo files are read instead") {
				t.Errorf("a broken package: %d addresses with inline frames, warnings %q; want some, and one warning", inline, w)
			}
			if err := os.WriteFile(prog+".dwp", whole, 0o644); err != nil {
				t.Fatal(err)
			}
			var gnuPackage string // GNU dwp's of the .dwo files, for DWARF 4
			if slices.Contains(tc.flags, "-gdwarf-4") {
				gnuPackage = filepath.Join(dir, "gnu.dwp")
				run(dir, gnuDWP, "-e", "prog", "-o", gnuPackage)
			}
			moved := filepath.Join(dir, "moved")
			if err := os.Mkdir(moved, 0o755); err != nil {
				t.Fatal(err)
			}
			dwos, _ := filepath.Glob(filepath.Join(dir, "*.dwo"))
			if len(dwos) != len(srcs) {
				t.Fatalf(".dwo files %q, want one per source", dwos)
			}
			for _, f := range dwos {
				if err := os.Rename(f, filepath.Join(moved, filepath.Base(f))); err != nil {
					t.Fatal(err)
				}
			}
			if inline, w := check("DWARF package", false); inline == 0 || len(w) > 0 {
				t.Errorf("DWARF package: %d addresses with inline frames, warnings %q; want some and none", inline, w)
			}
			if gnuPackage != "" {
				// GNU dwp's (version 2 of the index; binutils 2.40's dwp
				// fails on DWARF 5 .dwo files).
				if err := os.Rename(gnuPackage, prog+".dwp"); err != nil {
					t.Fatal(err)
				}
				if inline, w := check("GNU dwp's package", false); inline == 0 || len(w) > 0 {
					t.Errorf("GNU dwp's package: %d addresses with inline frames, warnings %q; want some and none", inline, w)
				}
			}

			// Neither: the skeletons alone, said once.
			if err := os.Remove(prog + ".dwp"); err != nil {
				t.Fatal(err)
			}
			inline, w := check("no split DWARF", false)
			if (inline != 0) != tc.skeletonInlines || len(w) != 1 || !strings.Contains(w[0], prog) || !strings.Contains(w[0], "not found") {
				t.Errorf("no split DWARF: %d addresses with inline frames, warnings %q; want the skeletons' (%v) and one warning saying what is not found", inline, w, tc.skeletonInlines)
			}

			// FIFOs where the .dwo files were, which an open(2) would wait
			// on for ever (llvm-symbolizer's does): passed over, said once,
			// the frames those without the files.
			for _, f := range dwos {
				if err := syscall.Mkfifo(f, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			inline, w = check("FIFOs for .dwo files", true)
			if (inline != 0) != tc.skeletonInlines || len(w) != 1 || !strings.Contains(w[0], "not a regular file") {
				t.Errorf("FIFOs for .dwo files: %d addresses with inline frames, warnings %q; want the skeletons' (%v) and one warning saying it is not a regular file", inline, w, tc.skeletonInlines)
			}
			for _, f := range dwos {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}

			// The .dwo files of another build (other code, other unit IDs).
			other := t.TempDir()
			build(other, tc.cxx, append(tc.flags, "-O1", "-fno-inline")...)
			dwos, _ = filepath.Glob(filepath.Join(other, "*.dwo"))
			for _, f := range dwos {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			inline, w = check("another build's .dwo files", false)
			if (inline != 0) != tc.skeletonInlines || len(w) != 1 || !strings.Contains(w[0], "no unit with ID") || !strings.Contains(w[0], prog) {
				t.Errorf("another build's .dwo files: %d addresses with inline frames, warnings %q; want the skeletons' (%v) and one warning naming the mismatch", inline, w, tc.skeletonInlines)
			}
		})
	}
}
