package disasm

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// name@plt entries, from package plt; objdump prefers other aliases and
// names GOT slots by its own rules).
func TestObjdumpAgreement(t *testing.T) {
	testenv.Long(t, "disassembles millions of instructions of real binaries, and objdump does too")
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
		{name: "libc/att", file: libc, tool: func(*testing.T) string { return objdump }, min: 0.972, minNoSym: 0.9999},
		{name: "libc/intel", file: libc, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.975, minNoSym: 0.9999},
		{name: "clang-O2-cxx/att", file: func(t *testing.T) string { return buildCXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, min: 0.98, minNoSym: 1},
		{name: "clang-O2-cxx/intel", file: func(t *testing.T) string { return buildCXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.98, minNoSym: 1},
		{name: "node/att", file: node, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, min: 0.97, minNoSym: 0.99999},
		{name: "node/intel", file: node, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, intel: true, min: 0.97, minNoSym: 0.99999},
		// More x86-64 C++ from Debian: libstdc++, and the first 4 MiB of
		// the code of the JVM and of LLVM (thread_local variables' "data16
		// data16 rex.W call __tls_get_addr@plt", rdseed).
		// 32-bit x86: Debian's 386 C library (g++-multilib installs it).
		{name: "libc386/att", file: func(t *testing.T) string { return testenv.File(t, "/lib32/libc.so.6", "libc6-i386") },
			tool: func(*testing.T) string { return objdump }, min: 0.985, minNoSym: 0.9999},
		{name: "libc386/intel", file: func(t *testing.T) string { return testenv.File(t, "/lib32/libc.so.6", "libc6-i386") },
			tool: func(*testing.T) string { return objdump }, intel: true, min: 0.985, minNoSym: 0.9999},
		{name: "libstdc++", file: func(t *testing.T) string {
			return testenv.File(t, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++6")
		}, tool: func(*testing.T) string { return objdump }, min: 0.972, minNoSym: 0.9999},
		{name: "libjvm", file: func(t *testing.T) string {
			return testenv.File(t, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "openjdk-17-jdk-headless")
		}, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, min: 0.995, minNoSym: 0.9999},
		{name: "libjvm/intel", file: func(t *testing.T) string {
			return testenv.File(t, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "openjdk-17-jdk-headless")
		}, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, intel: true, min: 0.995, minNoSym: 0.9999},
		{name: "libLLVM-19", file: func(t *testing.T) string {
			return testenv.File(t, "/usr/lib/llvm-19/lib/libLLVM-19.so", "libllvm19")
		}, tool: func(*testing.T) string { return objdump }, textBytes: 4 << 20, min: 0.994, minNoSym: 0.9999},
		{name: "gcc-O2-cxx/att", file: func(t *testing.T) string { return buildGXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, min: 0.98, minNoSym: 1},
		{name: "gcc-O2-cxx/intel", file: func(t *testing.T) string { return buildGXX(t, tmp) }, tool: func(*testing.T) string { return objdump }, intel: true, min: 0.98, minNoSym: 1},
		{name: "go-arm64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "arm64") }, tool: crossObjdump("aarch64-linux-gnu"), min: 1, minNoSym: 1},
		{name: "jit-object-0/att", file: jitObject(0), tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "jit-object-0/intel", file: jitObject(0), tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "jit-object-1/att", file: jitObject(1), tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "jit-object-1/intel", file: jitObject(1), tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "i386-obj/att", file: func(t *testing.T) string { return buildKernels(t, tmp, "-m32") }, tool: func(*testing.T) string { return objdump }, min: 1, minNoSym: 1},
		{name: "i386-obj/intel", file: func(t *testing.T) string { return buildKernels(t, tmp, "-m32") }, tool: func(*testing.T) string { return objdump }, intel: true, min: 1, minNoSym: 1},
		{name: "aarch64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=aarch64-linux-gnu") }, tool: crossObjdump("aarch64-linux-gnu"), min: 0.99, minNoSym: 0.99},
		// SVE: loops clang vectorizes for SVE machines, as LLVM's JITs
		// do on such a host (sve.go and sve2.go decode SVE and SVE2;
		// arm64asm does not).
		{name: "aarch64-sve-obj", file: func(t *testing.T) string { return buildSVE(t, tmp, "14", "-march=armv8.2-a+sve") }, tool: crossObjdump("aarch64-linux-gnu"), min: 1, minNoSym: 1},
		{name: "aarch64-neoverse-v1-obj", file: func(t *testing.T) string { return buildSVE(t, tmp, "19", "-mcpu=neoverse-v1") }, tool: crossObjdump("aarch64-linux-gnu"), min: 1, minNoSym: 1},
		{name: "aarch64-neoverse-n2-obj", file: func(t *testing.T) string { return buildSVE(t, tmp, "19", "-mcpu=neoverse-n2") }, tool: crossObjdump("aarch64-linux-gnu"), min: 1, minNoSym: 1},
		// The other machines LLVM JITs for: a clang-14 -O2 object and a
		// Go program each (Go's riscv64 code leaves out the compressed
		// instructions clang's uses). ppc64 is big-endian.
		{name: "riscv64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=riscv64-linux-gnu") }, tool: crossObjdump("riscv64-linux-gnu"), min: 0.975, minNoSym: 1},
		{name: "riscv32-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=riscv32-linux-gnu") }, tool: crossObjdump("riscv64-linux-gnu"), min: 0.98, minNoSym: 1},
		{name: "go-riscv64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "riscv64") }, tool: crossObjdump("riscv64-linux-gnu"), min: 0.985, minNoSym: 0.997},
		{name: "ppc64le-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc64le-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-ppc64le", file: func(t *testing.T) string { return buildGoArch(t, tmp, "ppc64le") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.999, minNoSym: 0.999},
		{name: "ppc64-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc64-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.95, minNoSym: 1},
		{name: "ppc32-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=powerpc-linux-gnu") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-ppc64", file: func(t *testing.T) string { return buildGoArch(t, tmp, "ppc64") }, tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.999, minNoSym: 0.999},
		// 32-bit ARM: ARM mode (clang's default for ARMv7, Go's only).
		{name: "arm-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=armv7-linux-gnueabihf") }, tool: crossObjdump("arm-linux-gnueabihf"), min: 0.99, minNoSym: 0.99},
		{name: "go-arm", file: func(t *testing.T) string { return buildGoArch(t, tmp, "arm") }, tool: crossObjdump("arm-linux-gnueabihf"), min: 0.999, minNoSym: 0.999},
		// Thumb-2: Debian's armhf C and C++ libraries (GCC's default for
		// armhf; stripped, so Thumb code is told apart by the Thumb bit
		// of their dynamic symbols, literal pools are read as
		// instructions, as objdump reads them) and clang's Thumb
		// objects, VFP code included.
		{name: "armhf-libc", file: crossLib("arm-linux-gnueabihf", "libc.so.6", "libc6-armhf-cross"), tool: crossObjdump("arm-linux-gnueabihf"), min: 0.978, minNoSym: 0.999},
		{name: "armhf-libstdc++", file: crossLib("arm-linux-gnueabihf", "libstdc++.so.6", "libstdc++6-armhf-cross"), tool: crossObjdump("arm-linux-gnueabihf"), min: 0.987, minNoSym: 0.9995},
		{name: "thumb-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=armv7-linux-gnueabihf", "-mthumb") }, tool: crossObjdump("arm-linux-gnueabihf"), min: 0.99, minNoSym: 0.99},
		{name: "thumb-Os-obj", file: func(t *testing.T) string {
			return buildKernels(t, tmp, "--target=armv7-linux-gnueabihf", "-mthumb", "-Os")
		}, tool: crossObjdump("arm-linux-gnueabihf"), min: 0.99, minNoSym: 0.99},
		{name: "thumb-vfp-obj", file: func(t *testing.T) string {
			return buildVector(t, tmp, "--target=armv7-linux-gnueabihf", "-mthumb", "-mfpu=vfpv3-d16")
		}, tool: crossObjdump("arm-linux-gnueabihf"), min: 1, minNoSym: 1},
		// NEON (Advanced SIMD), which armasm does not decode (neon.go
		// does), in ARM and Thumb code.
		{name: "arm-neon-obj", file: func(t *testing.T) string { return buildVector(t, tmp, "--target=armv7-linux-gnueabihf", "-mfpu=neon") }, tool: crossObjdump("arm-linux-gnueabihf"), min: 1, minNoSym: 1},
		{name: "thumb-neon-obj", file: func(t *testing.T) string {
			return buildVector(t, tmp, "--target=armv7-linux-gnueabihf", "-mthumb", "-mfpu=neon")
		}, tool: crossObjdump("arm-linux-gnueabihf"), min: 1, minNoSym: 1},
		// MIPS: clang's objects (o32, big-endian; n64, little-endian) and
		// Debian's C libraries for both (GCC, stripped).
		{name: "mips-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=mips-linux-gnu") }, tool: crossObjdump("mips-linux-gnu"), min: 1, minNoSym: 1},
		{name: "mips64el-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=mips64el-linux-gnuabi64") }, tool: crossObjdump("mips64el-linux-gnuabi64"), min: 1, minNoSym: 1},
		{name: "mips-libc", file: crossLib("mips-linux-gnu", "libc.so.6", "libc6-mips-cross"), tool: crossObjdump("mips-linux-gnu"), min: 0.985, minNoSym: 1},
		{name: "mips64el-libc", file: crossLib("mips64el-linux-gnuabi64", "libc.so.6", "libc6-mips64el-cross"), tool: crossObjdump("mips64el-linux-gnuabi64"), min: 0.98, minNoSym: 1},
		{name: "s390x-obj", file: func(t *testing.T) string { return buildKernels(t, tmp, "--target=s390x-linux-gnu") }, tool: crossObjdump("s390x-linux-gnu"), min: 1, minNoSym: 1},
		{name: "go-s390x", file: func(t *testing.T) string { return buildGoArch(t, tmp, "s390x") }, tool: crossObjdump("s390x-linux-gnu"), min: 0.999, minNoSym: 0.999},
		// Debian's C libraries of the other 64-bit machines (GCC,
		// stripped): compressed RISC-V code, pointer authentication,
		// BTI, memory tagging and SVE (its A64FX memcpy) on AArch64,
		// data words in PowerPC text.
		{name: "arm64-libc", file: crossLib("aarch64-linux-gnu", "libc.so.6", "libc6-arm64-cross"), tool: crossObjdump("aarch64-linux-gnu"), min: 0.974, minNoSym: 1},
		{name: "riscv64-libc", file: crossLib("riscv64-linux-gnu", "libc.so.6", "libc6-riscv64-cross"), tool: crossObjdump("riscv64-linux-gnu"), min: 0.969, minNoSym: 0.9999},
		{name: "ppc64le-libc", file: crossLib("powerpc64le-linux-gnu", "libc.so.6", "libc6-ppc64el-cross"), tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.976, minNoSym: 0.9999},
		{name: "s390x-libc", file: crossLib("s390x-linux-gnu", "libc.so.6", "libc6-s390x-cross"), tool: crossObjdump("s390x-linux-gnu"), min: 0.971, minNoSym: 0.9999},
		// And of machines Debian 12 ships cross libraries for but not
		// cross binutils (armhf's and ppc64el's objdump read them): ARM
		// mode GCC code (armel), 32-bit PowerPC, big-endian ELFv1 ppc64.
		{name: "armel-libc", file: crossLib("arm-linux-gnueabi", "libc.so.6", "libc6-armel-cross"), tool: crossObjdump("arm-linux-gnueabihf"), min: 0.97, minNoSym: 0.999},
		{name: "powerpc-libc", file: crossLib("powerpc-linux-gnu", "libc.so.6", "libc6-powerpc-cross"), tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.98, minNoSym: 0.9999},
		{name: "ppc64-libc", file: crossLib("powerpc64-linux-gnu", "libc.so.6", "libc6-ppc64-cross"), tool: crossObjdump("powerpc64le-linux-gnu"), min: 0.835, minNoSym: 0.9999},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// With CI=true nothing is skipped, -short or not.
			if testing.Short() && tt.textBytes != 0 && !testenv.InCI() {
				t.Skip("the ranges of big binaries are slow; -short")
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
	return testenv.File(t, "/lib/x86_64-linux-gnu/libc.so.6", "libc6")
}

// crossLib returns a library of another Debian port, which package pkg
// installs under /usr/TRIPLE/lib: GCC builds Debian's armhf libraries
// as Thumb-2 code.
func crossLib(triple, name, pkg string) func(t *testing.T) string {
	return func(t *testing.T) string { return testenv.File(t, "/usr/"+triple+"/lib/"+name, pkg) }
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

// buildKernels compiles testdata/kernels.c into an object with clang-14
// -O2 and the given flags ("--target=aarch64-linux-gnu", "-m32"; a later
// -O flag wins).
func buildKernels(t *testing.T, dir string, flags ...string) string {
	out := filepath.Join(dir, "kernels"+strings.Trim(strings.Join(flags, ""), "-=")+".o")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "clang-14", "clang-14")
	args := append(append([]string{"-O2"}, flags...), "-c", "-o", out, "testdata/kernels.c")
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, b)
	}
	return out
}

// buildVector compiles testdata/vector.c into an object with clang-14
// -O3 and the given flags.
func buildVector(t *testing.T, dir string, flags ...string) string {
	out := filepath.Join(dir, "vector"+strings.Trim(strings.Join(flags, ""), "-=")+".o")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "clang-14", "clang-14")
	if b, err := exec.Command(cc, append(flags, "-O3", "-c", "-o", out, "testdata/vector.c")...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, b)
	}
	return out
}

// buildSVE compiles testdata/sve.c for AArch64 with the clang of
// Debian's package clang-version, -O3 and the given flags.
func buildSVE(t *testing.T, dir, version string, flags ...string) string {
	out := filepath.Join(dir, "sve-"+version+strings.Trim(strings.Join(flags, ""), "-=")+".o")
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cc := testenv.Tool(t, "clang-"+version, "clang-"+version)
	// -fno-math-errno: sqrt is an instruction, not a call of the libm
	// function, which a relocatable object leaves unrelocated.
	args := append([]string{"--target=aarch64-linux-gnu", "-O3", "-ffreestanding", "-fno-math-errno"}, flags...)
	if b, err := exec.Command(cc, append(args, "-c", "-o", out, "testdata/sve.c")...).CombinedOutput(); err != nil {
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

// TestLoongArchAgainstLLVM decodes clang-19's LoongArch objects, plain
// and with the LASX (and so LSX) vector extensions, section by section
// and compares each instruction with llvm-objdump-19's: no GNU objdump on
// Debian 12 reads LoongArch, so this checks the decoding (mnemonic and
// operands), not GNU's text. The two spell some things differently, which
// the comparison undoes: LLVM prints unsigned immediates in decimal and
// annotates branch offsets with "<sym+off>", binutils (and so Decode)
// prints them in hex and adds "# target"; LLVM 19 does not use binutils'
// aliases bgtz, bltz, blez and bgez of blt and bge with $zero.
func TestLoongArchAgainstLLVM(t *testing.T) {
	t.Parallel()
	clang := testenv.Tool(t, "clang-19", "clang-19")
	llvmObjdump := testenv.Tool(t, "llvm-objdump-19", "llvm-19")
	dir := t.TempDir()
	total, vector := 0, 0
	for i, c := range []struct {
		src   string
		flags []string
	}{
		{src: "testdata/kernels.c", flags: []string{"-O2"}},
		{src: "testdata/kernels.c", flags: []string{"-Os"}},
		{src: "testdata/kernels.c", flags: []string{"-O3", "-mlasx"}},
		{src: "testdata/vector.c", flags: []string{"-O2", "-mlsx"}},
		{src: "testdata/vector.c", flags: []string{"-O3", "-mlasx"}},
		{src: "testdata/vector.c", flags: []string{"-O3", "-mlasx", "-ffast-math"}},
	} {
		obj := filepath.Join(dir, fmt.Sprintf("la%d.o", i))
		args := append([]string{"--target=loongarch64-linux-gnu", "-ffunction-sections", "-c", "-o", obj, c.src}, c.flags...)
		if b, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", clang, strings.Join(args, " "), err, b)
		}
		want := llvmSections(t, llvmObjdump, obj)
		f, err := elf.Open(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 {
				continue
			}
			code, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			insts, err := Decode(f.Machine, f.ByteOrder, code, 0, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := want[s.Name]
			if len(w) != len(insts) {
				t.Errorf("%s %s: %d instructions, llvm-objdump prints %d", obj, s.Name, len(insts), len(w))
				continue
			}
			for k, in := range insts {
				if got := llvmSpelling(in.Text); got != w[k] {
					t.Errorf("%s %s+%#x: %q reads %q, llvm-objdump prints %q", c.src, s.Name, in.Addr, in.Text, got, w[k])
				}
				if strings.HasPrefix(in.Text, "v") || strings.HasPrefix(in.Text, "xv") {
					vector++
				}
			}
			total += len(insts)
		}
		f.Close()
	}
	t.Logf("%d instructions, %d of them LSX or LASX", total, vector)
	if total < 1000 || vector < 100 {
		t.Errorf("%d instructions, %d vector ones: want at least 1000 and 100", total, vector)
	}
}

// llvmSections returns the instruction texts llvm-objdump prints for
// each section of obj, its "<sym+off>" annotations left out and white
// space collapsed.
func llvmSections(t *testing.T, tool, obj string) map[string][]string {
	t.Helper()
	out, err := exec.Command(tool, "-d", "--no-show-raw-insn", obj).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", tool, obj, err)
	}
	secs := map[string][]string{}
	var cur string
	for line := range strings.Lines(string(out)) {
		if name, ok := strings.CutPrefix(line, "Disassembly of section "); ok {
			cur = strings.TrimSuffix(strings.TrimSpace(name), ":")
			continue
		}
		addr, text, ok := strings.Cut(line, ":")
		if _, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64); !ok || err != nil || !strings.HasPrefix(line, " ") {
			continue
		}
		if i := strings.Index(text, " <"); i >= 0 {
			text = text[:i]
		}
		secs[cur] = append(secs[cur], normalize(text))
	}
	return secs
}

// llvmSpelling rewrites Decode's LoongArch text as llvm-objdump 19 spells
// it: no "# target" comment, hex immediates in decimal, binutils' branch
// aliases spelled out.
func llvmSpelling(text string) string {
	if i := strings.Index(text, "\t# "); i >= 0 {
		text = text[:i]
	}
	f := strings.Fields(strings.ReplaceAll(text, ",", " "))
	for i, a := range f {
		if v, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64); err == nil && strings.HasPrefix(a, "0x") {
			f[i] = strconv.FormatUint(v, 10)
		}
	}
	if len(f) == 3 {
		switch f[0] {
		case "bgtz":
			f = []string{"blt", "$zero", f[1], f[2]}
		case "bltz":
			f = []string{"blt", f[1], "$zero", f[2]}
		case "blez":
			f = []string{"bge", "$zero", f[1], f[2]}
		case "bgez":
			f = []string{"bge", f[1], "$zero", f[2]}
		}
	}
	if len(f) < 2 {
		return strings.Join(f, "")
	}
	return f[0] + " " + strings.Join(f[1:], ", ")
}
