package e2e

import (
	"cmp"
	"debug/elf"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestOtherMachineJIT runs pprof on a profile of JIT code of each of the
// other machines LLVM JITs for (64-bit, and 386, 32-bit PowerPC, ARMv7
// in ARM and Thumb-2 code, RV32 and MIPS): a clang object, its sections
// scattered as a JIT loads them, in a -jit_dir, and a profile whose
// samples fall in its functions, in an anonymous mapping as a JIT's code
// is. -top names the functions, -disasm and -list show each with its own
// samples, the instructions are the machine's, and -disasm prints the
// same bytes in every run.
func TestOtherMachineJIT(t *testing.T) {
	t.Parallel()
	src, err := filepath.Abs(filepath.Join(testenv.RepoRoot(t), "internal/objtool/testdata/inline.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		triple string
		flags  []string
		insn   string // a mnemonic of the machine's code for work
		clang  string // clang-14 if empty
	}{
		{triple: "riscv64-linux-gnu", insn: "lw"},
		{triple: "powerpc64le-linux-gnu", insn: "cmpwi"},
		{triple: "powerpc64-linux-gnu", insn: "cmpwi"}, // ELFv1: function descriptors
		{triple: "powerpc64-linux-gnu", flags: []string{"-mabi=elfv2"}, insn: "cmpwi"},
		{triple: "s390x-linux-gnu", insn: "l"},
		{triple: "i386-linux-gnu", insn: "push"},     // 32-bit
		{triple: "powerpc-linux-gnu", insn: "cmpwi"}, // 32-bit, big-endian
		{triple: "armv7-linux-gnueabihf", flags: []string{"-marm"}, insn: "ldr"},
		{triple: "armv7-linux-gnueabihf", flags: []string{"-mthumb"}, insn: "ldr.w"}, // Thumb-2
		{triple: "riscv32-linux-gnu", insn: "lw"},
		{triple: "mips-linux-gnu", insn: "lw"},          // big-endian o32
		{triple: "mips64el-linux-gnuabi64", insn: "lw"}, // n64
		{triple: "loongarch64-linux-gnu", clang: "clang-19", insn: "ld.w"},
	} {
		t.Run(m.triple+strings.Join(m.flags, ""), func(t *testing.T) {
			t.Parallel()
			clang := cmp.Or(m.clang, "clang-14")
			clang = testenv.Tool(t, clang, clang)
			dir := t.TempDir()
			jitDir := filepath.Join(dir, "jit")
			if err := os.Mkdir(jitDir, 0o755); err != nil {
				t.Fatal(err)
			}
			obj := filepath.Join(jitDir, "inline.elf")
			args := append([]string{"--target=" + m.triple, "-g", "-O2", "-ffunction-sections", "-c", "-o", obj, src}, m.flags...)
			if err := synth.Compile(clang, args...); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(obj)
			if err != nil {
				t.Fatal(err)
			}
			base := uint64(0x7f0000000000)
			if elf.Class(data[elf.EI_CLASS]) == elf.ELFCLASS32 {
				base = 0x10000000
			}
			if _, err := synth.Scatter(data, synth.ScatterOptions{Base: base, Span: 1 << 28, Seed: 5}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(obj, data, 0o644); err != nil {
				t.Fatal(err)
			}
			// 3 samples at every fourth byte of work, 1 of sorted, 2
			// of main.
			prof := writeFunctionProfile(t, obj, filepath.Join(dir, "cpu.pb.gz"), base, map[string]int64{"work": 3, "sorted": 1, "main": 2})
			pprof := func(args ...string) string {
				t.Helper()
				return string(runPProf(t, dir, nil, append(append([]string{"-jit_dir", jitDir}, args...), prof)...).stdout)
			}
			top := pprof("-top", "-noinlines")
			for _, fn := range []string{"work", "sorted", "main"} {
				flat := regexp.MustCompile(`(?m)^\s*(\d+)\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+` + fn + `$`).FindStringSubmatch(top)
				if flat == nil {
					t.Fatalf("-top -noinlines has no row for %s:\n%s", fn, top)
				}
				// (pprof matches -disasm's regexp against names that
				// begin with an address: no ^ anchor.)
				dis := pprof("-disasm", fn)
				for range 2 {
					if again := pprof("-disasm", fn); again != dis {
						t.Fatalf("-disasm %s printed something else in another run:\n%s\nfirst run:\n%s", fn, again, dis)
					}
				}
				m2 := regexp.MustCompile(`(?m)^\s*(\d+)\s+\d+ \(flat, cum\)`).FindStringSubmatch(dis)
				if m2 == nil || m2[1] != flat[1] {
					t.Errorf("-disasm %s: flat %v, -top -noinlines says %s:\n%s", fn, m2, flat[1], dis)
				}
				if fn == "work" && !regexp.MustCompile(`(?m)^\s+\S+\s+\S+\s+[0-9a-f]+:\s+`+m.insn+`\s`).MatchString(dis) {
					t.Errorf("-disasm %s shows no %s instruction:\n%s", fn, m.insn, dis)
				}
				// The source view: the function's lines, its own and
				// its inlined callees' samples together as cum.
				list := pprof("-list", fn)
				cum := regexp.MustCompile(`(?m)^\s*\d+\s+(\d+) \(flat, cum\)`).FindStringSubmatch(list)
				if !strings.Contains(list, "ROUTINE ======================== "+fn+" in "+src) || cum == nil || cum[1] != flat[1] ||
					!strings.Contains(list, "for (int i = ") {
					t.Errorf("-list %s: not the function's source with %s samples:\n%s", fn, flat[1], list)
				}
			}
		})
	}
}

// writeFunctionProfile writes to path a CPU profile of the JIT object obj:
// for each function named in weights, a sample of that weight at every
// fourth byte of its code, each at its own location in one anonymous
// mapping of 1 GiB from base, over the object's code.
func writeFunctionProfile(t *testing.T, obj, path string, base uint64, weights map[string]int64) string {
	t.Helper()
	f, err := elfrel.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	opd, err := f.FunctionDescriptors()
	if err != nil {
		t.Fatal(err)
	}
	m := &profile.Mapping{ID: 1, Start: base, Limit: base + 1<<30}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1,
		Mapping:    []*profile.Mapping{m},
	}
	for i := range syms {
		s := &syms[i]
		w, ok := weights[s.Name]
		if !ok || s.Type() != elf.STT_FUNC {
			continue
		}
		start := f.CodeAddr(s)
		if code, ok := opd[start]; ok {
			start = code // ELFv1: the symbol is the function's descriptor
		}
		for a := start; a < start+s.Size; a += 4 {
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: a}
			p.Location = append(p.Location, l)
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{w}})
		}
		delete(weights, s.Name)
	}
	if len(weights) != 0 {
		t.Fatalf("%s has no function symbol for %v", obj, weights)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := p.Write(out); err != nil {
		t.Fatal(err)
	}
	return path
}
