package jitsym

import (
	"cmp"
	"debug/elf"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

// The differential tests compile real C and C++ with clang-14 and g++,
// give the sections scattered load addresses, and compare every frame of
// every address of the code with what llvm-symbolizer 14 prints.

// buildConfig is one way of compiling the test sources.
type buildConfig struct {
	name      string
	tool, pkg string
	args      []string
	llvm      int // llvm-symbolizer's major version to compare with; 0 means 14
}

func buildConfigs() []buildConfig {
	clang := func(name string, args ...string) buildConfig {
		return buildConfig{name: name, tool: "clang-14", pkg: "clang-14", args: args}
	}
	clang19 := func(name string, args ...string) buildConfig {
		return buildConfig{name: name, tool: "clang-19", pkg: "clang-19", args: args, llvm: 19}
	}
	gcc := func(name string, args ...string) buildConfig {
		return buildConfig{name: name, tool: "g++", pkg: "g++", args: args}
	}
	return []buildConfig{
		clang("clang14-O1-dwarf5", "-g", "-O1"),
		clang("clang14-O2-dwarf5", "-g", "-O2"),
		clang("clang14-O2-dwarf4", "-gdwarf-4", "-O2"),
		clang("clang14-O0-dwarf5", "-g", "-O0"),
		clang("clang14-aarch64-O2-dwarf5", "--target=aarch64-linux-gnu", "-g", "-O2"),
		clang("clang14-aarch64-O1-dwarf4", "--target=aarch64-linux-gnu", "-gdwarf-4", "-O1"),
		gcc("gcc-O1-dwarf5", "-g", "-O1"),
		gcc("gcc-O1-dwarf4", "-gdwarf-4", "-O1"),
		gcc("gcc-O2-dwarf5", "-g", "-O2"),
		gcc("gcc-O2-dwarf4", "-gdwarf-4", "-O2"),
		clang("clang14-O2-gmlt", "-gline-tables-only", "-O2"),
		gcc("gcc-O2-g1", "-g1", "-O2"),
		clang("clang14-O2-nodebug", "-g0", "-O2"),
		gcc("gcc-O2-nodebug", "-g0", "-O2"),
		// Relocatable objects of the other 64-bit machines LLVM JITs for:
		// RISC-V writes lengths and line advances as ADD/SUB relocation
		// pairs; PowerPC and s390x are big-endian.
		clang("clang14-riscv64-O2-dwarf5", "--target=riscv64-linux-gnu", "-g", "-O2"),
		clang("clang14-riscv64-O1-dwarf4", "--target=riscv64-linux-gnu", "-gdwarf-4", "-O1"),
		clang("clang14-ppc64le-O2-dwarf5", "--target=powerpc64le-linux-gnu", "-g", "-O2"),
		clang("clang14-ppc64-O2-dwarf4", "--target=powerpc64-linux-gnu", "-gdwarf-4", "-O2"),
		clang("clang14-s390x-O2-dwarf5", "--target=s390x-linux-gnu", "-g", "-O2"),
		// LLVM 17 and later name RISC-V's label-difference symbols ".L0 "
		// and add mapping symbols; LoongArch came with LLVM 16.
		clang19("clang19-riscv64-O2-dwarf5", "--target=riscv64-linux-gnu", "-g", "-O2"),
		clang19("clang19-riscv64-O2-nodebug", "--target=riscv64-linux-gnu", "-g0", "-O2"),
		clang19("clang19-loongarch64-O2-dwarf5", "--target=loongarch64-linux-gnu", "-g", "-O2"),
		clang19("clang19-loongarch64-O1-dwarf4", "--target=loongarch64-linux-gnu", "-gdwarf-4", "-O1"),
		// 32-bit objects (ELFCLASS32, SHT_REL relocations with implicit
		// addends): 386 and ARM, in ARM and Thumb-2 code.
		clang("clang14-i386-O2-dwarf5", "--target=i386-linux-gnu", "-g", "-O2"),
		gcc("gcc-m32-O2-dwarf5", "-m32", "-g", "-O2"),
		clang("clang14-armv7-O2-dwarf5", "--target=armv7-linux-gnueabihf", "-g", "-O2"),
		clang("clang14-thumb2-O1-dwarf4", "--target=armv7-linux-gnueabihf", "-mthumb", "-gdwarf-4", "-O1"),
		// 32-bit and big-endian, SHT_RELA.
		clang("clang14-ppc32-O2-dwarf5", "--target=powerpc-linux-gnu", "-g", "-O2"),
		clang("clang14-ppc32-O1-dwarf4", "--target=powerpc-linux-gnu", "-gdwarf-4", "-O1"),
		// MIPS: MIPS64's relocation entries hold three types and their
		// own layout of r_info (mips64el's bytes do not read as one
		// little-endian word); MIPS32's are SHT_REL.
		clang("clang14-mips64el-O2-dwarf5", "--target=mips64el-linux-gnuabi64", "-g", "-O2"),
		clang("clang14-mips64-O1-dwarf4", "--target=mips64-linux-gnuabi64", "-gdwarf-4", "-O1"),
		clang("clang14-mipsel-O2-dwarf5", "--target=mipsel-linux-gnu", "-g", "-O2"),
		clang("clang14-mips-O2-dwarf4", "--target=mips-linux-gnu", "-gdwarf-4", "-O2"),
		// RV32: 32-bit RISC-V, its label differences as RV64's.
		clang("clang14-riscv32-O2-dwarf5", "--target=riscv32-linux-gnu", "-g", "-O2"),
	}
}

// compileObject compiles src (under testdata/src) with c and
// -ffunction-sections -c, hides .debug_aranges (see TestGCCAranges),
// scatters the loaded sections, and returns the path of the result.
func compileObject(t *testing.T, c buildConfig, src string) string {
	return compileObjectAranges(t, c, src, false)
}

// compileObjectAranges is compileObject, keeping .debug_aranges if
// keepAranges.
func compileObjectAranges(t *testing.T, c buildConfig, src string, keepAranges bool) string {
	t.Helper()
	tool := testenv.Tool(t, c.tool, c.pkg)
	abs, err := filepath.Abs(filepath.Join("testdata", "src", src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	obj := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src))+".o")
	args := append(append([]string(nil), c.args...), "-ffunction-sections", "-c", "-o", obj)
	if strings.HasSuffix(src, ".c") && c.tool == "g++" {
		args = append(args, "-x", "c")
	}
	if err := synth.Compile(tool, append(args, abs)...); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	if !keepAranges {
		if _, err := synth.HideSection(data, ".debug_aranges"); err != nil {
			t.Fatal(err)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(c.name + src))
	if _, err := synth.Scatter(data, scatterFor(data, h.Sum64())); err != nil {
		t.Fatal(err)
	}
	out := obj + ".elf"
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// loadedRanges returns whether an address lies in a loaded section of
// obj.
func loadedRanges(t *testing.T, obj string) func(uint64) bool {
	t.Helper()
	f, err := elfrel.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var secs [][2]uint64
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC != 0 && sec.Size > 0 {
			secs = append(secs, [2]uint64{sec.Addr, sec.Addr + sec.Size})
		}
	}
	return func(a uint64) bool {
		for _, r := range secs {
			if r[0] <= a && a < r[1] {
				return true
			}
		}
		return false
	}
}

// scatterFor returns where to scatter the sections of obj: over 4 GiB
// high in the address space, or 256 MiB low in it for a 32-bit object.
func scatterFor(obj []byte, seed uint64) synth.ScatterOptions {
	if len(obj) > elf.EI_CLASS && elf.Class(obj[elf.EI_CLASS]) == elf.ELFCLASS32 {
		return synth.ScatterOptions{Base: 0x10000000, Span: 1 << 28, Seed: seed}
	}
	return synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 32, Seed: seed}
}

// codeAddresses returns every byte address of every executable section,
// and the first address after each, which is in a hole or another
// section.
func codeAddresses(t *testing.T, path string) []uint64 {
	t.Helper()
	f, err := elfrel.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var addrs []uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 {
			continue
		}
		for a := s.Addr; a <= s.Addr+s.Size; a++ {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// llvmSymbolize runs one llvm-symbolizer-14 process for all addrs
// (testenv.LLVMSymbolize) and returns its frames in our representation.
func llvmSymbolize(t *testing.T, obj string, addrs []uint64) [][]Frame {
	t.Helper()
	return llvmSymbolizeWith(t, 14, obj, addrs)
}

// llvmSymbolizeWith is llvmSymbolize with llvm-symbolizer of the given
// major version.
func llvmSymbolizeWith(t *testing.T, version int, obj string, addrs []uint64) [][]Frame {
	t.Helper()
	res := testenv.LLVMSymbolizeWith(t, version, obj, addrs)
	out := make([][]Frame, len(res))
	for i, frames := range res {
		for _, f := range frames {
			out[i] = append(out[i], Frame(f))
		}
	}
	return out
}

// diffStats counts what a comparison found.
type diffStats struct {
	addrs, frames int
	qualified     int // frames where we add namespaces to llvm's short name
	holes         int // addresses in no section that llvm names after a size-0 symbol
	mismatches    int
}

// compareWithLLVM symbolizes addrs with s and with llvm-symbolizer and
// reports every address whose frames differ in function, file, line,
// column or start line. The only accepted difference is documented on
// SourceLine: for a function without a linkage name or symbol, our name
// may qualify llvm's short one ("ns::f" for "f").
func compareWithLLVM(t *testing.T, s *Symbolizer, obj string, addrs []uint64) diffStats {
	t.Helper()
	return compareWithLLVMVersion(t, 14, s, obj, addrs)
}

// compareWithLLVMVersion is compareWithLLVM with llvm-symbolizer of the
// given major version.
func compareWithLLVMVersion(t *testing.T, version int, s *Symbolizer, obj string, addrs []uint64) diffStats {
	t.Helper()
	want := llvmSymbolizeWith(t, version, obj, addrs)
	loaded := loadedRanges(t, obj)
	st := diffStats{addrs: len(addrs)}
	for i, a := range addrs {
		got, err := s.SourceLine(a)
		if err != nil {
			t.Fatalf("SourceLine(%#x): %v", a, err)
		}
		if w := want[i]; len(got) == 0 && len(w) == 1 && w[0].File == "" && w[0].Line == 0 && !loaded(a) {
			// A symbol of size 0 (GCC's __x86.get_pc_thunk.bx) reaches,
			// for llvm-symbolizer, over the hole after its section up
			// to the next symbol; no code is there.
			st.holes++
			continue
		}
		ok := len(got) == len(want[i])
		for k := 0; ok && k < len(got); k++ {
			g, w := got[k], want[i][k]
			if g.Func != w.Func && w.Func != "" && strings.HasSuffix(g.Func, "::"+w.Func) {
				st.qualified++
				g.Func = w.Func
			}
			ok = g == w
		}
		st.frames += len(got)
		if !ok {
			st.mismatches++
			if st.mismatches <= 10 {
				t.Errorf("%#x: got frames\n\t%v\nwant (llvm-symbolizer)\n\t%v", a, fmtFrames(got), fmtFrames(want[i]))
			}
		}
	}
	return st
}

func fmtFrames(fs []Frame) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s %s:%d:%d (start %d)", f.Func, f.File, f.Line, f.Column, f.StartLine))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, "\n\t")
}

func TestDifferential(t *testing.T) {
	testenv.Long(t, "compares every code address of real objects with llvm-symbolizer's answers")
	total := diffStats{}
	for _, c := range buildConfigs() {
		for _, src := range []string{"inline.cc", "plain.c", "cold.c"} {
			t.Run(c.name+"/"+src, func(t *testing.T) {
				obj := compileObject(t, c, src)
				s, err := Open(obj)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := s.HasDWARF(), !slices.Contains(c.args, "-g0"); got != want {
					t.Fatalf("HasDWARF() = %v, want %v", got, want)
				}
				st := compareWithLLVMVersion(t, cmp.Or(c.llvm, 14), s, obj, codeAddresses(t, obj))
				t.Logf("%d addresses, %d frames, %d qualified names, %d holes named by llvm, %d mismatches", st.addrs, st.frames, st.qualified, st.holes, st.mismatches)
				total.addrs += st.addrs
				total.holes += st.holes
				total.frames += st.frames
				total.qualified += st.qualified
				total.mismatches += st.mismatches
			})
		}
	}
	t.Logf("total: %d addresses, %d frames, %d qualified names, %d holes named by llvm, %d mismatches", total.addrs, total.frames, total.qualified, total.holes, total.mismatches)
}

// TestDebugSectionAddresses gives the debug sections non-zero sh_addr
// values, as a JIT host that loads all sections would record them. We
// must answer exactly as for the same object with sh_addr 0 there;
// llvm-symbolizer 14 adds those addresses to DWARF offsets and finds no
// line at all (only symbol names, and the STT_FILE name of local ones),
// which is why we do not follow it here.
func TestDebugSectionAddresses(t *testing.T) {
	for _, c := range []buildConfig{buildConfigs()[0], buildConfigs()[7]} {
		t.Run(c.name, func(t *testing.T) {
			obj := compileObject(t, c, "inline.cc")
			data, err := os.ReadFile(obj)
			if err != nil {
				t.Fatal(err)
			}
			next := uint64(0x500000)
			err = synth.SetAddr(data, func(s elfrel.Section) (uint64, bool) {
				if s.Flags&elf.SHF_ALLOC != 0 || !strings.HasPrefix(s.Name, ".debug_") {
					return 0, false
				}
				next += 0x100000
				return next, true
			})
			if err != nil {
				t.Fatal(err)
			}
			moved := obj + ".moved"
			if err := os.WriteFile(moved, data, 0o644); err != nil {
				t.Fatal(err)
			}
			orig, err := Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(moved)
			if err != nil {
				t.Fatal(err)
			}
			sameAnswersLLVMBlind(t, s, orig, moved, codeAddresses(t, obj))
		})
	}
}

// TestAssemblerLabelsNameNoFrame compiles a loop for RISC-V, whose
// objects keep the assembler's labels (.LBB0_3) in their symbol table for
// linker relaxation. llvm-symbolizer (14 and 19) names the outermost frame
// of an address after the label before it; GNU addr2line, which reads
// DWARF's subprogram, names it main, as we do: a basic block's label is
// not a function.
func TestAssemblerLabelsNameNoFrame(t *testing.T) {
	const src = `
static unsigned t[64];
static inline unsigned mix(unsigned x) { x ^= x >> 16; x *= 0x7feb352dU; return x ^ (x >> 15); }
int main(int argc, char **argv) {
  (void)argv;
  for (int i = 0; i < 64; i++) t[i] = mix((unsigned)(i * argc));
  return (int)t[argc & 63];
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "loop.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "loop.o")
	clang := testenv.Tool(t, "clang-14", "clang-14")
	if err := synth.Compile(clang, "--target=riscv64-linux-gnu", "-g", "-O2", "-ffunction-sections", "-c", "-o", obj, filepath.Join(dir, "loop.c")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Scatter(data, synth.ScatterOptions{Base: 0x7f0000000000, Span: 1 << 30, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	addrs := codeAddresses(t, obj)
	addrs = addrs[:len(addrs)-1] // the address after the code
	gnu := gnuOutermost(t, testenv.Tool(t, "riscv64-linux-gnu-addr2line", "binutils-riscv64-linux-gnu"), obj, addrs)
	labels := 0
	for i, a := range addrs {
		got, _ := s.SourceLine(a)
		if len(got) == 0 || got[len(got)-1].Func != "main" || gnu[i] != "main" {
			t.Errorf("%#x: got %v, GNU addr2line %q; want main outermost", a, fmtFrames(got), gnu[i])
		}
	}
	for _, version := range []int{14, 19} {
		for _, w := range llvmSymbolizeWith(t, version, obj, addrs) {
			if len(w) > 0 && strings.HasPrefix(w[len(w)-1].Func, ".L") {
				labels++
			}
		}
	}
	if labels == 0 {
		t.Errorf("llvm-symbolizer named no frame after a label; this test documents that it does")
	}
	t.Logf("%d addresses; llvm-symbolizer 14 and 19 name %d of their frames after a label", len(addrs), labels)
}

// gnuOutermost returns the outermost function GNU addr2line (-f -i)
// gives for each of addrs in obj.
func gnuOutermost(t *testing.T, addr2line, obj string, addrs []uint64) []string {
	t.Helper()
	args := []string{"-a", "-f", "-i", "-e", obj}
	for _, a := range addrs {
		args = append(args, fmt.Sprintf("%#x", a))
	}
	out, err := exec.Command(addr2line, args...).Output()
	if err != nil {
		t.Fatalf("%s: %v", addr2line, err)
	}
	var outer []string
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "0x") {
			outer = append(outer, "")
			continue
		}
		if len(outer) > 0 && i+1 < len(lines) {
			outer[len(outer)-1] = lines[i] // function, then file:line
			i++
		}
	}
	if len(outer) != len(addrs) {
		t.Fatalf("%s printed %d addresses, want %d", addr2line, len(outer), len(addrs))
	}
	return outer
}

// TestGCCAranges keeps the .debug_aranges GCC writes (LLVM writes none).
// We ignore it and answer as without it; llvm-symbolizer 14 reads it
// without applying its relocations, finds no unit for any loaded address,
// and prints no line at all, which is why the other tests hide it.
func TestGCCAranges(t *testing.T) {
	c := buildConfigs()[6] // gcc-O1-dwarf5
	with := compileObjectAranges(t, c, "inline.cc", true)
	without := compileObject(t, c, "inline.cc")
	sw, err := Open(with)
	if err != nil {
		t.Fatal(err)
	}
	swo, err := Open(without)
	if err != nil {
		t.Fatal(err)
	}
	sameAnswersLLVMBlind(t, sw, swo, with, codeAddresses(t, with))
}

// sameAnswersLLVMBlind checks that s answers every address of addrs as
// ref does, and that llvm-symbolizer finds no line at all for them in
// obj, s's file: the tests using it document inputs where llvm-symbolizer
// fails and we do not.
func sameAnswersLLVMBlind(t *testing.T, s, ref *Symbolizer, obj string, addrs []uint64) {
	t.Helper()
	llvm := llvmSymbolize(t, obj, addrs)
	llvmLines := 0
	for i, a := range addrs {
		got, _ := s.SourceLine(a)
		want, _ := ref.SourceLine(a)
		if fmtFrames(got) != fmtFrames(want) {
			t.Errorf("%#x: got %v, want %v", a, fmtFrames(got), fmtFrames(want))
		}
		for _, f := range llvm[i] {
			if f.Line != 0 {
				llvmLines++
			}
		}
	}
	if llvmLines != 0 {
		t.Errorf("llvm-symbolizer found %d lines; this test documents that it finds none", llvmLines)
	}
}

// TestMCJITGolden compares the MCJIT dumps under testdata/mcjit/golden/jit
// with llvm-symbolizer: every line table row address (instruction
// boundaries) and the address before each, the last address of each
// sequence, and every byte of the code.
func TestMCJITGolden(t *testing.T) {
	objs, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden", "jit", "*.elf"))
	if len(objs) == 0 {
		t.Fatal("no MCJIT dumps in testdata/mcjit/golden/jit")
	}
	for _, obj := range objs {
		t.Run(filepath.Base(obj), func(t *testing.T) {
			s, err := Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			seen := make(map[uint64]bool)
			var addrs []uint64
			for _, r := range s.rowAddrs() {
				for _, a := range []uint64{r, r - 1} {
					if !seen[a] {
						seen[a] = true
						addrs = append(addrs, a)
					}
				}
			}
			for _, hi := range s.seqHi {
				if !seen[hi-1] {
					seen[hi-1] = true
					addrs = append(addrs, hi-1)
				}
			}
			for _, a := range codeAddresses(t, obj) {
				if !seen[a] {
					seen[a] = true
					addrs = append(addrs, a)
				}
			}
			if len(addrs) == 0 {
				t.Fatalf("no line table rows (HasDWARF %v)", s.HasDWARF())
			}
			st := compareWithLLVM(t, s, obj, addrs)
			t.Logf("%d addresses, %d frames, %d qualified names, %d mismatches", st.addrs, st.frames, st.qualified, st.mismatches)
		})
	}
}
