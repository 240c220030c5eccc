// Package synth builds synthetic JIT object dumps for tests and
// benchmarks: a C++ translation unit of many small functions (namespaces,
// templates, inlined helpers), compiled by g++ into a relocatable object
// with one section per function, whose SHF_ALLOC sections are then given
// scattered load addresses the way a JIT host's dump records them.
//
// The command synth/synthobj wraps [Generate] for scripts.
package synth

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Generate writes the C++ source of nfuncs functions (see [Source]) to
// dir/synth.cc, compiles it with g++ -g -O1 -ffunction-sections -c,
// hides .debug_aranges (LLVM emits none), scatters the loaded sections
// over about 5 GiB from 0x7f0000000000 with holes between them (see
// [Scatter]), and returns the path of the result, dir/synth.elf. The
// environment variable CXX, when set, names the compiler. Compiling
// 40,000 functions takes g++ tens of seconds.
func Generate(dir string, nfuncs int) (string, error) {
	if nfuncs < 1 {
		return "", fmt.Errorf("synth: nfuncs is %d, want at least 1", nfuncs)
	}
	src := filepath.Join(dir, "synth.cc")
	if err := os.WriteFile(src, []byte(Source(nfuncs)), 0o644); err != nil {
		return "", err
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	obj := filepath.Join(dir, "synth.o")
	if err := Compile(cxx, "-g", "-O1", "-ffunction-sections", "-c", "-o", obj, src); err != nil {
		return "", err
	}
	data, err := os.ReadFile(obj)
	if err != nil {
		return "", err
	}
	if _, err := HideSection(data, ".debug_aranges"); err != nil {
		return "", fmt.Errorf("synth: %s: %w", obj, err)
	}
	if _, err := Scatter(data, ScatterOptions{Base: 0x7f0000000000, Span: 5 << 30, Seed: 1}); err != nil {
		return "", fmt.Errorf("synth: %s: %w", obj, err)
	}
	out := filepath.Join(dir, "synth.elf")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// GenerateExe writes the source of nfuncs functions to dir/synth.cc, as
// Generate does, and links it with an empty main into the non-PIE
// executable dir/synth-exe (g++ -g -O1 -no-pie), whose path it returns:
// a large native binary with DWARF for the native benchmarks.
func GenerateExe(dir string, nfuncs int) (string, error) {
	return GenerateExeUnits(dir, nfuncs, 1)
}

// GenerateExeUnits is GenerateExe with the functions split over units
// translation units, dir/synth-K.cc for K from 0 (one file, synth.cc,
// for 1), each with a share of the namespaces of Source, compiled on as
// many processes as there are CPUs: an executable of as many compile
// units, as large programs are.
func GenerateExeUnits(dir string, nfuncs, units int) (string, error) {
	if nfuncs < 1 || units < 1 {
		return "", fmt.Errorf("synth: %d functions in %d units, want at least 1 of each", nfuncs, units)
	}
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "g++"
	}
	out := filepath.Join(dir, "synth-exe")
	const main = "\nint main() { return 0; }\n"
	if units == 1 {
		src := filepath.Join(dir, "synth.cc")
		if err := os.WriteFile(src, []byte(Source(nfuncs)+main), 0o644); err != nil {
			return "", err
		}
		if err := Compile(cxx, "-g", "-O1", "-no-pie", "-o", out, src); err != nil {
			return "", err
		}
		return out, nil
	}
	groups := (nfuncs + group - 1) / group
	units = min(units, groups)
	objs := make([]string, units)
	errs := make([]error, units)
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for k := range units {
		src := filepath.Join(dir, fmt.Sprintf("synth-%d.cc", k))
		text := sourceGroups(nfuncs, k*groups/units, (k+1)*groups/units)
		if k == 0 {
			text += main
		}
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			return "", err
		}
		objs[k] = strings.TrimSuffix(src, ".cc") + ".o"
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[k] = Compile(cxx, "-g", "-O1", "-c", "-o", objs[k], src)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	if err := Compile(cxx, append([]string{"-no-pie", "-o", out}, objs...)...); err != nil {
		return "", err
	}
	return out, nil
}

// Compile runs a compiler with args and returns an error carrying its
// output if it fails.
func Compile(compiler string, args ...string) error {
	cmd := exec.Command(compiler, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("synth: %s %s: %w\n%s", compiler, strings.Join(args, " "), err, out)
	}
	return nil
}

// Source returns a C++ translation unit defining nfuncs functions,
// grouped 200 to a namespace synth::gK. Each group has an always-inline
// helper, a class template whose members get inlined, a class with a
// constructor, and a function template instantiated in COMDAT sections.
// Most functions are one-liners around the inlined helper, a quarter loop
// over the class template, and about one in sixteen calls another
// function, so that its section has relocations.
func Source(nfuncs int) string {
	return sourceGroups(nfuncs, 0, (nfuncs+group-1)/group)
}

// group is how many functions Source puts in each namespace.
const group = 200

// sourceGroups returns the namespaces synth::gK of Source(nfuncs) for K
// in [lo, hi): each stands alone.
func sourceGroups(nfuncs, lo, hi int) string {
	var b strings.Builder
	b.WriteString("// Generated by github.com/jitpprof/pprof/internal/jitsym/synth. DO NOT EDIT.\n\n")
	for g := lo; g < hi && g*group < nfuncs; g++ {
		fmt.Fprintf(&b, "namespace synth {\nnamespace g%d {\n\n", g)
		b.WriteString(groupPrelude)
		for i := g * group; i < nfuncs && i < (g+1)*group; i++ {
			writeFunc(&b, i, i == g*group)
		}
		b.WriteString("\n} // namespace\n} // namespace synth\n\n")
	}
	return b.String()
}

const groupPrelude = `inline __attribute__((always_inline)) int mix(int a, int b) {
  int r = a ^ (b << 3);
  return r + (a >> 2) - b;
}

template <typename T> struct Acc {
  T v;
  void add(T x) { v += x * 3 + 1; }
  T get() const { return v ^ (v >> 5); }
};

class Widget {
 public:
  explicit Widget(int k);
  int scale(int x) const;
 private:
  int k_;
};

template <int K> int tpl(int x) {
  Acc<int> a{x};
  a.add(mix(x, K));
  return a.get() * K;
}

`

// writeFunc writes function number i; first marks the first of a group,
// which also defines the group's Widget members.
func writeFunc(b *strings.Builder, i int, first bool) {
	if first {
		fmt.Fprintf(b, "Widget::Widget(int k) : k_(mix(k, %d)) {}\n\n", i)
		b.WriteString("int Widget::scale(int x) const {\n  Acc<int> a{x};\n  a.add(k_);\n  return a.get();\n}\n\n")
	}
	switch {
	case i%16 == 15:
		fmt.Fprintf(b, "__attribute__((noinline)) int f%d(int x) {\n  return f%d(x + 1) + mix(x, %d);\n}\n\n", i, i-1, i%7)
	case i%20 == 7:
		fmt.Fprintf(b, "template int tpl<%d>(int);\n\n", i)
		fmt.Fprintf(b, "__attribute__((noinline)) int f%d(int x) {\n  Widget w(x);\n  return w.scale(x) + %d;\n}\n\n", i, i)
	case i%4 == 0:
		fmt.Fprintf(b, "__attribute__((noinline)) int f%d(int x) {\n  Acc<int> a{x};\n  for (int i = 0; i < (x & 7); i++)\n    a.add(mix(x, i + %d));\n  return a.get();\n}\n\n", i, i%13)
	case i%4 == 1:
		fmt.Fprintf(b, "__attribute__((noinline)) long f%d(long x, int y) {\n  Acc<long> a{x};\n  a.add(y);\n  return a.get();\n}\n\n", i)
	default:
		fmt.Fprintf(b, "__attribute__((noinline)) int f%d(int x) {\n  return mix(x, %d) * %d;\n}\n\n", i, i%13, i%1000+1)
	}
}
