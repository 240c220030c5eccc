package cfi

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/testenv"
)

// workload is a C program with frames of several shapes: leaf functions,
// calls through the PLT, a variable-length array (a frame pointer even at
// -O2), recursion and a function that saves many registers.
const workload = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) double leaf(double x, int n) { for (int i = 0; i < n; i++) x = x * 1.0000001 + 0.5; return x; }
__attribute__((noinline)) double mid(double x, int n) { return leaf(x, n) + leaf(x + 1, n / 2); }
__attribute__((noinline)) long vla(int n) { char buf[n]; memset(buf, n, n); long s = 0; for (int i = 0; i < n; i++) s += buf[i] * mid(i, 1000); return s; }
__attribute__((noinline)) long rec(int d, long a, long b, long c, long e) { if (d == 0) return vla(64 + (int)(a & 63)); return rec(d - 1, b, c, e, a + 1) + a * b - c; }
__attribute__((noinline)) double top(int n) { double s = 0; for (int i = 0; i < 200; i++) s += mid(i, n) + rec(i % 7, i, 2, 3, 4); return s; }
int main(int argc, char **argv) { printf("%f\n", top(argc > 1 ? atoi(argv[1]) : 200000)); return 0; }
`

// readelfNames are binutils' names of DWARF registers in readelf -wF.
var readelfNames = map[*Arch]func(int) string{
	X86_64: func(r int) string {
		names := []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"}
		switch {
		case r < 8:
			return names[r]
		case r < 16:
			return fmt.Sprintf("r%d", r)
		case r == 16:
			return "rip"
		}
		return fmt.Sprintf("r%d", r)
	},
	ARM64: func(r int) string {
		switch {
		case r < 31:
			return fmt.Sprintf("x%d", r)
		case r == 31:
			return "sp"
		}
		return fmt.Sprintf("r%d", r)
	},
}

// readelfRow is one row of readelf -wF's table of an FDE.
type readelfRow struct {
	loc  uint64
	cols map[string]string // "CFA" and each register column
}

type readelfFDE struct {
	lo, hi uint64
	rows   []readelfRow
}

var fdeLine = regexp.MustCompile(`^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)$`)

// readelfFrames runs readelf -wF (binutils' interpretation of the tables)
// on file and returns the FDEs of its .eh_frame.
func readelfFrames(t *testing.T, readelf, file string) []readelfFDE {
	// readelf exits 1 when it cannot follow a .gnu_debuglink (libc6-dbg
	// missing): its table of .eh_frame is complete all the same.
	out, err := exec.Command(readelf, "-wF", file).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("%s -wF %s: %v", readelf, file, err)
	}
	var fdes []readelfFDE
	var cur *readelfFDE
	var header []string
	section, ehSeen := "", 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Contents of the ") {
			section = line
			cur = nil
			if strings.Contains(line, ".eh_frame") {
				ehSeen++
			}
			continue
		}
		// After the file's own .eh_frame, readelf may print that of the
		// detached debug file (NOBITS there): only the first counts.
		if strings.Contains(line, "has the NOBITS type") {
			ehSeen = 2
		}
		if !strings.Contains(section, ".eh_frame") || ehSeen > 1 {
			continue
		}
		if m := fdeLine.FindStringSubmatch(line); m != nil {
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			fdes = append(fdes, readelfFDE{lo: lo, hi: hi})
			cur, header = &fdes[len(fdes)-1], nil
			continue
		}
		if strings.Contains(line, " CIE ") || strings.HasSuffix(line, " ZERO terminator") {
			cur = nil
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if cur == nil {
			continue
		}
		var f []string
		for _, w := range strings.Fields(line) {
			if strings.HasPrefix(w, "(") && len(f) > 0 {
				f[len(f)-1] += " " + w // a register rule: "r1 (rdx)"
				continue
			}
			f = append(f, w)
		}
		if f[0] == "LOC" {
			header = f[1:]
			continue
		}
		loc, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil || len(f)-1 != len(header) {
			t.Fatalf("%s: readelf row %q does not fit its header %q", file, line, header)
		}
		row := readelfRow{loc: loc, cols: map[string]string{}}
		for i, h := range header {
			row.cols[h] = f[1+i]
		}
		cur.rows = append(cur.rows, row)
	}
	return fdes
}

// render gives our row's rule for a readelf column, as readelf prints it.
func render(arch *Arch, rw *row, col string) (string, bool) {
	name := readelfNames[arch]
	if col == "CFA" {
		if rw.cfaExpr != nil {
			return "exp", true
		}
		return fmt.Sprintf("%s%+d", name(int(rw.cfaReg)), rw.cfaOff), true
	}
	reg := -1
	if col == "ra" {
		reg = int(rw.ra)
	} else {
		for r := range MaxRegs {
			if name(r) == col {
				reg = r
			}
		}
	}
	if reg < 0 || reg >= MaxRegs {
		return "", false // a register Step does not track (vector registers)
	}
	ru := rw.regs[reg]
	switch ru.kind {
	case ruleSame, ruleUndefined:
		return "u", true
	case ruleOffset:
		return fmt.Sprintf("c%+d", ru.off), true
	case ruleValOffset:
		return fmt.Sprintf("v%+d", ru.off), true
	case ruleRegister:
		return fmt.Sprintf("r%d (%s)", ru.reg, name(int(ru.reg))), true
	case ruleExpr:
		return "exp", true
	case ruleValExpr:
		return "vexp", true
	}
	return "?", true
}

// buildWorkload compiles workload with the compilers and flags given.
func buildWorkload(t *testing.T, dir string) []string {
	src := filepath.Join(dir, "w.c")
	if err := os.WriteFile(src, []byte(workload), 0o644); err != nil {
		t.Fatal(err)
	}
	gcc := testenv.Tool(t, "gcc", "build-essential")
	clang := testenv.Tool(t, "clang-19", "clang-19")
	ld := testenv.Tool(t, "aarch64-linux-gnu-ld", "binutils-aarch64-linux-gnu")
	var files []string
	for _, b := range []struct {
		name string
		args []string
	}{
		{"gcc-O2", []string{gcc, "-O2", "-g", "-o"}},
		{"gcc-O2-pie-fp", []string{gcc, "-O2", "-fPIE", "-pie", "-fno-omit-frame-pointer", "-o"}},
		{"gcc-O0", []string{gcc, "-O0", "-o"}},
		{"clang-O2", []string{clang, "-O2", "-g", "-o"}},
		{"clang-Os-async", []string{clang, "-Os", "-fasynchronous-unwind-tables", "-o"}},
		{"a64-clang-O2.o", []string{clang, "--target=aarch64-linux-gnu", "-O2", "-fPIC", "-c", "-o"}},
		{"a64-gcc-style.o", []string{clang, "--target=aarch64-linux-gnu", "-O1", "-fPIC", "-fno-omit-frame-pointer", "-c", "-o"}},
	} {
		out := filepath.Join(dir, b.name)
		args := append(b.args, out, src)
		if cmd := exec.Command(args[0], args[1:]...); true {
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%q: %v\n%s", args, err, msg)
			}
		}
		if strings.HasSuffix(out, ".o") {
			so := strings.TrimSuffix(out, ".o") + ".so"
			if msg, err := exec.Command(ld, "-shared", "-o", so, out).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", ld, err, msg)
			}
			out = so
		}
		files = append(files, out)
	}
	return files
}

// TestSameRowsAsReadelf compares, for every FDE of real binaries (Debian's
// libc, its dynamic loader and libstdc++, programs built by GCC and clang
// for x86-64 and AArch64), each row of the unwinding table with binutils'
// readelf -wF: the code each entry covers, the CFA rule and every
// register's rule, at each row's first address and its last.
func TestSameRowsAsReadelf(t *testing.T) {
	readelf := testenv.Tool(t, "readelf", "binutils")
	files := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			testenv.Missing(t, f, "a Debian 12 system (libc6, libstdc++6)")
		}
	}
	files = append(files, buildWorkload(t, t.TempDir())...)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cf, _ := openELF(t, file)
			want := readelfFrames(t, readelf, file)
			if len(want) == 0 {
				t.Fatalf("readelf lists no FDE in %s", file)
			}
			sameRows(t, cf, want)
		})
	}
}

// openELF opens the ELF file at path and reads its call frame
// information; the file is closed when the test ends.
func openELF(t *testing.T, path string) (*File, *elfrel.File) {
	t.Helper()
	ef, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	cf, err := OpenELF(ef)
	if err != nil {
		t.Fatal(err)
	}
	return cf, ef
}

// sameRows checks that each FDE of want is one of cf's, covering the same
// code, with the same rows.
func sameRows(t *testing.T, cf *File, want []readelfFDE) {
	t.Helper()
	rows, cols := 0, 0
	for _, w := range want {
		f, ok := cf.find(w.lo)
		if !ok || f.lo != w.lo || f.hi != w.hi {
			t.Errorf("FDE [%#x, %#x): ours %+v", w.lo, w.hi, f)
			continue
		}
		for i, wr := range w.rows {
			end := w.hi
			if i+1 < len(w.rows) {
				end = w.rows[i+1].loc
			}
			for _, addr := range []uint64{wr.loc, end - 1} {
				rw := new(row)
				if err := cf.rowAt(f, addr, rw); err != nil {
					t.Fatalf("row at %#x: %v", addr, err)
				}
				rows++
				for col, v := range wr.cols {
					got, ok := render(cf.arch, rw, col)
					if !ok {
						continue
					}
					cols++
					if v == "s" {
						v = "u" // same value: as unreferenced, for unwinding
					}
					if got != v {
						t.Errorf("FDE [%#x, %#x) at %#x: %s is %s, readelf says %s", w.lo, w.hi, addr, col, got, v)
					}
				}
			}
		}
	}
	if cf.Len() != len(want) {
		t.Errorf("%d FDEs, readelf lists %d", cf.Len(), len(want))
	}
	t.Logf("%d FDEs, %d rows, %d rules: the same as readelf's", len(want), rows, cols)
}

// TestJITObjects reads the call frame information of JIT objects (the
// LLVM dumps of testdata/mcjit/golden: relocatable, their sections' load
// addresses in their headers): each FDE starts at the load address of
// its function (its symbol's section's address and its value) and has
// the rows readelf -wF gives it. (readelf relocates the FDEs' starts with
// the symbols' values only, not the load addresses of their sections:
// its FDEs, in the order of the section, are moved to the functions' load
// addresses, in the order their code was emitted.)
func TestJITObjects(t *testing.T) {
	readelf := testenv.Tool(t, "readelf", "binutils")
	objs, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "jit", "*.elf"))
	if len(objs) == 0 {
		t.Fatal("no JIT object in testdata/mcjit/golden/jit")
	}
	for _, obj := range objs {
		t.Run(filepath.Base(obj), func(t *testing.T) {
			cf, ef := openELF(t, obj)
			if b, ok := cf.Bias(0, 0, 0x1234); !ok || b != 0 {
				t.Errorf("bias %#x, %v; want 0: the table has load addresses", b, ok)
			}
			syms, err := ef.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			// The functions in the order their code was emitted, which
			// is the order of their FDEs: by section, then by value.
			var funcs []elfrel.Symbol
			for _, s := range syms {
				if s.Type() == elf.STT_FUNC {
					funcs = append(funcs, s)
				}
			}
			slices.SortFunc(funcs, func(a, b elfrel.Symbol) int {
				return cmp.Or(cmp.Compare(a.Section, b.Section), cmp.Compare(a.Value, b.Value))
			})
			want := readelfFrames(t, readelf, obj)
			if len(want) != len(funcs) || len(want) < 4 {
				t.Fatalf("readelf lists %d FDEs for %d functions", len(want), len(funcs))
			}
			for i := range want {
				d := ef.SymbolAddr(&funcs[i]) - want[i].lo
				want[i].lo += d
				want[i].hi += d
				for k := range want[i].rows {
					want[i].rows[k].loc += d
				}
			}
			sameRows(t, cf, want)
		})
	}
}
