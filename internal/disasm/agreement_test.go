package disasm

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestObjdumpAgreement decodes real binaries symbol by symbol, as objdump
// does, and compares each instruction's text with GNU objdump's
// (`objdump -d --no-show-raw-insn`, `-M intel`) after collapsing white
// space. doc/disasm.md lists the measured rates and the classes of
// remaining differences; the thresholds sit just under the measured
// rates so that a formatting regression fails (libc and node keep a few
// instructions of slack for other builds). "identical" compares the whole
// text; "ignoring symbols" leaves out the <symbol+off> annotations, whose
// names come from the Symbolizer (here the symbol tables plus objdump's
// name@plt entries; objdump prefers other aliases and names GOT slots by
// its own rules).
func TestObjdumpAgreement(t *testing.T) {
	objdump := testenv.Tool(t, "objdump", "binutils")
	tmp := t.TempDir()
	tests := []struct {
		name          string
		file          func(t *testing.T) string
		tool          func(t *testing.T) string
		textBytes     uint64 // only this many bytes from the start of .text, 0 for all
		intel         bool
		min, minNoSym float64
	}{
		{name: "libc/att", file: libc, tool: func(*testing.T) string { return objdump }, min: 0.965, minNoSym: 0.9999},
		{name: "libc/intel", file: libc, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.965, minNoSym: 0.9999},
		{name: "clang-O2-cxx/att", file: func(t *testing.T) string { return buildCXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, min: 0.98, minNoSym: 1},
		{name: "clang-O2-cxx/intel", file: func(t *testing.T) string { return buildCXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.98, minNoSym: 1},
		{name: "node/att", file: node, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, min: 0.97, minNoSym: 0.99999},
		{name: "node/intel", file: node, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, intel: true, min: 0.97, minNoSym: 0.99999},
		{name: "gcc-O2-cxx/att", file: func(t *testing.T) string { return buildGXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, min: 0.98, minNoSym: 1},
		{name: "gcc-O2-cxx/intel", file: func(t *testing.T) string { return buildGXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.98, minNoSym: 1},
		{name: "go-arm64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "arm64") }, tool: crossObjdump("aarch64-linux-gnu"), min: 0.9995, minNoSym: 0.9995},
		{name: "jit-object-0/att", file: jitObject(0), tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "jit-object-0/intel", file: jitObject(0), tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "jit-object-1/att", file: jitObject(1), tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "jit-object-1/intel", file: jitObject(1), tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "i386-obj/att", file: func(t *testing.T) string { return buildKernels(t, tmp, "-m32") }, tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "i386-obj/intel", file: func(t *testing.T) string { return buildKernels(t, tmp, "-m32") }, tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "aarch64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=aarch64-linux-gnu") }, tool: crossObjdump("aarch64-linux-gnu"), min: 0.99, minNoSym: 0.99},
		// The other machines LLVM JITs for: a clang-14 -O2 object and a
		// Go program each (Go's riscv64 code leaves out the compressed
		// instructions clang's uses). ppc64 is big-endian.
		{name: "riscv64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=riscv64-linux-gnu") }, tool: crossObjdump("riscv64-linux-gnu"), min: 0.975, minNoSym: 1},
		{name: "go-riscv64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "riscv64") }, tool: crossObjdump("riscv64-linux-gnu"), min: 0.985, minNoSym: 0.997},
		{name: "ppc64le-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc64le-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-ppc64le", file: func(t *testing.T) string { return buildGoArch(t, tmp, "ppc64le") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.999, minNoSym: 0.999},
		{name: "ppc64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc64-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.95, minNoSym: 1},
		{name: "ppc32-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-ppc64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "ppc64") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.999, minNoSym: 0.999},
		{name: "s390x-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=s390x-linux-gnu") }, tool: crossObjdump("s390x-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-s390x", file: func(t *testing.T) string { return buildGoArch(t, tmp, "s390x") }, tool: crossObjdump("s390x-linux-gnu"), min: 0.999, minNoSym: 0.999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.textBytes != 0 {
				t.Skip("node's range is slow; -short")
			}
			file := tt.file(t)
			var start, stop uint64
			if tt.textBytes != 0 {
				start = textStart(t, file)
				stop = start + tt.textBytes
			}
			a := compare(t, tt.tool(t), file, start, stop, tt.intel)
			t.Logf("%s: %v", tt.name, a)
			if a.total < 100 {
				t.Fatalf("objdump printed %d instructions, want at least 100", a.total)
			}
			if a.rate() < tt.min || a.rateNoSym() < tt.minNoSym {
				t.Errorf("agreement %.4f (ignoring symbols %.4f), want >= %.4f (%.4f)", a.rate(), a.rateNoSym(), tt.min, tt.minNoSym)
			}
		})
	}
}

// libc returns Debian's C library.
func libc(t *testing.T) string {
	const p = "/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, p, "apt-get install libc6")
	}
	return p
}

// jitObject returns the i'th of the checked-in MCJIT objects (ET_REL,
// .text at its load address), the code jitpprof's views disassemble.
func jitObject(i int) func(t *testing.T) string {
	return func(t *testing.T) string {
		objs, err := filepath.Glob("../../testdata/mcjit/golden/jit/*.elf")
		if err != nil || len(objs) <= i {
			t.Fatalf("want at least %d JIT objects in testdata/mcjit/golden/jit, have %d (%v)", i+1, len(objs), err)
		}
		return objs[i]
	}
}

// node returns the Node.js executable; the test reads 4 MiB of its .text
// (all of it takes minutes in objdump).
func node(t *testing.T) string {
	p := testenv.Tool(t, "node", "nodejs")
	p, _ = filepath.EvalSymlinks(p)
	return p
}

// textStart returns the address of file's .text section.
func textStart(t *testing.T, file string) uint64 {
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".text")
	if s == nil {
		t.Fatalf("%s has no .text section", file)
	}
	return s.Addr
}

// buildCXX compiles testdata/inline.cc with clang++-14 -O2.
func buildCXX(t *testing.T, dir string) string {
	out := filepath.Join(dir, "inline")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "clang++-14", "clang-14")
	if b, err := exec.Command(cc, "-O2", "-o", out, "testdata/inline.cc").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, b)
	}
	return out
}

// buildKernels compiles testdata/kernels.c into an object for the
// given clang flags ("--target=aarch64-linux-gnu", "-m32").
func buildKernels(t *testing.T, dir, flag string) string {
	out := filepath.Join(dir, "kernels"+strings.TrimLeft(flag, "-=")+".o")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "clang-14", "clang-14")
	if b, err := exec.Command(cc, flag, "-O2", "-c", "-o", out, "testdata/kernels.c").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, b)
	}
	return out
}

// buildGXX compiles testdata/inline.cc with g++ -O2.
func buildGXX(t *testing.T, dir string) string {
	out := filepath.Join(dir, "inline-gcc")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "g++", "build-essential")
	if b, err := exec.Command(cc, "-O2", "-o", out, "testdata/inline.cc").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, b)
	}
	return out
}

// crossObjdump returns the objdump of Debian's binutils for the given
// target triple ("riscv64-linux-gnu").
func crossObjdump(triple string) func(t *testing.T) string {
	return func(t *testing.T) string {
		return testenv.Tool(t, triple+"-objdump", "binutils-"+triple)
	}
}

// buildGoArch cross-compiles testdata/goarm for linux/arch.
func buildGoArch(t *testing.T, dir, arch string) string {
	out := filepath.Join(dir, "go-"+arch)
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cmd := exec.Command("go", "build", "-o", out, "./testdata/goarm")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}
