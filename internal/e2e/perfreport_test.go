package e2e

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/testenv"
)

// perfReportShares reads perf report --no-children --sort sym --stdio -q
// -g none output from the file at path: "    52.55%  [.] hot_mix" lines,
// or, with -F overhead,period,sym (perfReportArgs), "    52.55%
// 26275000000  [.] hot_mix", by function.
func perfReportShares(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parsePerfReport(b)
}

// perfReportArgs are the options of perf report whose output
// perfReportShares reads: a row per function (symbol), its share
// (overhead) and the sum of its samples' periods, of which the share is
// computed exactly (perf rounds the overhead to two decimals).
// testdata/perf/generate.sh writes its reports so.
var perfReportArgs = []string{"--no-children", "--sort", "sym", "-F", "overhead,period,sym", "--stdio", "-q", "-g", "none"}

// perfReportOf runs perf report (as perfReportShares reads it) on the
// recording data and returns its shares by function and its output; the
// options global go before the command ("--buildid-dir", DIR).
func perfReportOf(t *testing.T, perf, data string, global ...string) (map[string]float64, []byte) {
	t.Helper()
	return perfReportWith(t, perf, data, global, nil)
}

// perfReportWith is perfReportOf with the options opts instead of
// perfReportArgs.
func perfReportWith(t *testing.T, perf, data string, global, opts []string) (map[string]float64, []byte) {
	t.Helper()
	if opts == nil {
		opts = perfReportArgs
	}
	args := slices.Concat(global, []string{"report", "-i", data}, opts)
	out, err := exec.Command(perf, args...).Output()
	if err != nil {
		t.Fatalf("perf report -i %s: %v", data, err)
	}
	return parsePerfReport(out), out
}

// perfCacheEnv is the environment that has pprof read the build-ID
// cache the tests' perf record writes to (runTests' configuration), as
// perf report reads it: perf's copy of the vDSO, say, which no file
// holds.
func perfCacheEnv() []string {
	return []string{"PERF_CONFIG=" + os.Getenv("PERF_CONFIG")}
}

// perfInject runs perf inject --jit on the recording data, which writes
// an ELF file of each piece of code of the jitdumps the recording names
// (beside the jitdump) and a recording that maps those, inject.data
// beside data, whose path it returns. perf inject copies the ELF files
// into perf's build-ID cache, the tests' (runTests), where perf record
// put its copies of the files the recording sampled (the vDSO's among
// them, which no file holds): it returns the options that have perf
// read that cache (none: the tests' perf reads it), and the environment
// that has pprof read it, perfCacheEnv.
func perfInject(t *testing.T, perf, data string) (string, []string, []string) {
	t.Helper()
	out := filepath.Join(filepath.Dir(data), "inject.data")
	if b, err := exec.Command(perf, "inject", "--jit", "-i", data, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("perf inject: %v\n%s", err, b)
	}
	return out, nil, perfCacheEnv()
}

// v8Wasm matches V8's name of WebAssembly code: the name section's name
// (demangled C++, with spaces), the function's index, the tier.
var v8Wasm = regexp.MustCompile(`^JS:(.+)-\d+-(?:liftoff|turbofan)$`)

// parsePerfReport reads perf report output as perfReportShares does,
// V8's names of JavaScript and WebAssembly code by function (a
// WebAssembly function's tiers add up).
func parsePerfReport(report []byte) map[string]float64 {
	return parsePerfReportRows(report, nil)
}

// kernelRow is pprof's name for the kernel's code it cannot name: the
// name of the kernel's mapping in perf.data, in brackets.
const kernelRow = "[[kernel.kallsyms]]"

// unnamedRow is the row the shares of code neither tool names are
// compared in: perf report lists each address of such code
// ("0x000000000009e154", "[unknown]"), pprof each file's
// ("[beam.smp]", kernelRow) and anonymous memory's ("[anon]", perf's
// "//anon"; "<unknown>" where a location has no mapping). PLT
// stubs are counted there too: perf report names each after the
// function it jumps to (malloc@plt); pprof, as llvm-symbolizer and
// addr2line, after the symbol before the .plt section, _init (of .init,
// which comes first), for all of them, and leaves them unnamed in a
// stripped program (beam.smp).
const unnamedRow = "(unnamed code)"

// perfUnnamed matches perf report's name of an address no symbol covers.
var perfUnnamed = regexp.MustCompile(`^(0x[0-9a-f]+|\[unknown\])$`)

// parsePerfReportRows is parsePerfReport, with the functions unnamed
// says (of the kernel or not, by name) counted as unnamed code: pprof
// cannot name the kernel frames of a recording made on another kernel,
// and lists them as one row, kernelRow. With a period on every row, the
// shares are the periods' shares of their sum, not the rounded
// overheads.
func parsePerfReportRows(report []byte, unnamed func(kernel bool, name string) bool) map[string]float64 {
	shares, periods := map[string]float64{}, map[string]float64{}
	total, exact := 0.0, true
	// The share, the period, the process (with --sort pid,sym), the
	// function.
	re := regexp.MustCompile(`^\s*([\d.]+)%\s+(?:(\d+)\s+)?(?:\d+:.*?\s+)?\[(.)\]\s+(.+?)\s*$`)
	sc := bufio.NewScanner(bytes.NewReader(report))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		name := m[4]
		if w := v8Wasm.FindStringSubmatch(name); w != nil {
			name = withoutArgs(w[1])
		} else if rest, ok := strings.CutPrefix(name, "JS:"); ok {
			name, _, _ = strings.Cut(strings.TrimLeft(rest, "*~^+"), " ")
		}
		if unnamed != nil && unnamed(m[3] == "k", name) {
			name = unnamedRow
		}
		name = withoutTemplateArgs(name)
		shares[name] += v
		if m[2] == "" {
			exact = false
			continue
		}
		p, _ := strconv.ParseFloat(m[2], 64)
		periods[name] += p
		total += p
	}
	if !exact || total == 0 {
		return shares
	}
	for name, p := range periods {
		periods[name] = p * 100 / total
	}
	return periods
}

// The comparisons of pprof's shares with perf report's: both count the
// same samples of a recording, so every function either lists at
// shareMin percent or more must have the same share in both, but for
// rounding. perf report's are computed from its periods, exactly;
// pprof prints two decimals, so one of its shares is off by at most
// 0.005 percentage point per row added up into it (unnamed code of
// several files, aliases), and shareTol allows 20 such rows. Names are
// compared as canonicalName makes them.
const (
	shareMin = 0.2 // percent
	shareTol = 0.1 // percentage point
)

// topArgs are pprof's options for the -top whose shares are compared
// with perf report's: every function listed (perf report drops none,
// pprof drops those under 0.5% by default), and code inlined into a
// function counted for it, as perf report counts a symbol's samples.
var topArgs = []string{"-top", "-nodecount=1000000", "-nodefraction=0", "-noinlines"}

// runTop runs pprof with topArgs and args and returns pprof's shares by
// function and what it printed.
func runTop(t *testing.T, dir string, env []string, args ...string) (map[string]float64, result) {
	t.Helper()
	r := runPProf(t, dir, env, slices.Concat(topArgs, args)...)
	return topShares(string(r.stdout)), r
}

// checkShares fails the test for each function that got (pprof's shares)
// or want (perf report's) gives shareMin percent or more whose shares
// differ by more than shareTol percentage point; it logs the largest
// difference and returns how many functions it compared.
func checkShares(t *testing.T, got, want map[string]float64) int {
	t.Helper()
	return compareShares(t, got, want, "perf report")
}

// compareShares is checkShares with want's name for the messages.
func compareShares(t *testing.T, got, want map[string]float64, wantName string) int {
	t.Helper()
	got, want = canonicalShares(got), canonicalShares(want)
	compared := map[string]bool{}
	for _, shares := range []map[string]float64{got, want} {
		for fn, v := range shares {
			if v >= shareMin {
				compared[fn] = true
			}
		}
	}
	largest, at := 0.0, "none differ"
	for _, fn := range slices.Sorted(maps.Keys(compared)) {
		d := math.Abs(got[fn] - want[fn])
		if d > largest {
			largest, at = d, fn
		}
		if d > shareTol {
			t.Errorf("%s: %.2f%% in pprof, %.2f%% in %s", fn, got[fn], want[fn], wantName)
		}
	}
	t.Logf("%d functions with %.1f%% or more compared; the largest difference %.2f percentage point (%s)", len(compared), shareMin, largest, at)
	return len(compared)
}

// checkInjected runs pprof -top on injected, the recording perf inject
// --jit wrote, whose JIT code is in the ELF files perf made of the
// jitdump, and compares its shares with orig's, pprof's shares of the
// original recording, as checkShares does: the same samples, named
// alike. env is perfInject's.
func checkInjected(t *testing.T, dir, injected string, env []string, orig map[string]float64) {
	t.Helper()
	got, _ := runTop(t, dir, env, injected)
	compareShares(t, orig, got, "the recording perf inject wrote")
}

// removeTmpJITFiles removes, when the test ends, the JIT files the
// processes pids gives (called then) wrote into /tmp, where the
// runtimes the tests run write them: perf-PID.map, jit-PID.dump, and
// the ELF files perf inject --jit writes beside such a jitdump,
// jitted-PID-N.so. Those of other processes, another test's running at
// the same time, are left alone. Call it after t.TempDir has made the
// directory pids reads from: cleanups run last first.
func removeTmpJITFiles(t *testing.T, pids func() []uint32) {
	t.Helper()
	t.Cleanup(func() {
		for _, pid := range pids() {
			injected, _ := filepath.Glob(fmt.Sprintf("/tmp/jitted-%d-*.so", pid))
			for _, f := range append(injected, fmt.Sprintf("/tmp/perf-%d.map", pid), fmt.Sprintf("/tmp/jit-%d.dump", pid)) {
				os.Remove(f)
			}
		}
	})
}

// recordedPIDs returns the function that reads the processes the
// recording data has records of (a recording of a command: it and what
// it started), none if data cannot be read.
func recordedPIDs(data string) func() []uint32 {
	return func() []uint32 {
		f, err := os.Open(data)
		if err != nil {
			return nil
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil
		}
		pf, err := perfdata.Open(f, st.Size(), data)
		if err != nil {
			return nil
		}
		rec, err := pf.Scan("")
		if err != nil {
			return nil
		}
		return rec.PIDs
	}
}

// canonicalName is the name a function's share is compared by: perf
// report and pprof name some functions apart on purpose. perf report
// adds the symbol's version (cfree@GLIBC_2.2.5); pprof names a function
// after its DWARF, where GCC's clones have their function's name
// (unlink_chunk, the symbol unlink_chunk.constprop.0), and an alias
// after its debug info (__libc_malloc, __memcpy_avx_unaligned_erms)
// where perf report takes the symbol table's (malloc,
// __memmove_avx_unaligned_erms). V8's code in node's own text has a
// symbol there (Builtins_InterpreterEntryTrampoline,
// Builtins_DecHandler), which pprof prefers, and a name in V8's perf
// map and jitdump (Builtin:InterpreterEntryTrampoline,
// BytecodeHandler:Dec), which perf report takes from the ELF files perf
// inject --jit makes of the jitdump. So the version and the clone's
// suffix are dropped, a C library alias is named by its aliases' first
// name (libcAliases), a V8 builtin by its symbol; PLT stubs and unnamed
// code are unnamedRow.
func canonicalName(name string) string {
	switch {
	case perfUnnamed.MatchString(name), name == "<unknown>", strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]"):
		return unnamedRow
	case strings.HasSuffix(name, "@plt"), name == "_init":
		return unnamedRow
	}
	if rest, ok := strings.CutPrefix(name, "Builtin:"); ok {
		return "Builtins_" + rest
	}
	if rest, ok := strings.CutPrefix(name, "BytecodeHandler:"); ok {
		return "Builtins_" + rest + "Handler" // Builtins_DecHandler
	}
	if i := strings.IndexByte(name, '@'); i > 0 && !strings.ContainsAny(name[:i], " (<") {
		name = name[:i] // cfree@GLIBC_2.2.5, pthread_rwlock_unlock@@GLIBC_2.34
	}
	name = cloneSuffix.ReplaceAllString(name, "")
	if a, ok := libcAliases()[name]; ok {
		return a
	}
	return name
}

// cloneSuffix matches the suffixes GCC gives the clones it makes of a
// function (.constprop.0, .isra.0, .part.0, .cold).
var cloneSuffix = regexp.MustCompile(`(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$`)

// canonicalShares adds up shares by canonicalName.
func canonicalShares(shares map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for fn, v := range shares {
		out[canonicalName(fn)] += v
	}
	return out
}

// libcAliases maps each name of a function of the C library that has
// several (the symbols of its code's address, in the library and in its
// debug file, libc6-dbg's), clone suffixes dropped, to the first of
// them in byte order. Without the library it is empty.
var libcAliases = sync.OnceValue(func() map[string]string {
	libs, _ := filepath.Glob("/lib/*/libc.so.6")
	if len(libs) == 0 {
		return nil
	}
	byAddr := map[uint64][]string{}
	add := func(path string) []byte {
		f, err := elf.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		syms, _ := f.Symbols()
		dyn, _ := f.DynamicSymbols()
		for _, sym := range slices.Concat(syms, dyn) {
			if typ := elf.ST_TYPE(sym.Info); (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) || sym.Value == 0 {
				continue
			}
			byAddr[sym.Value] = append(byAddr[sym.Value], cloneSuffix.ReplaceAllString(sym.Name, ""))
		}
		return buildID(f)
	}
	if id := add(libs[0]); len(id) > 1 {
		add(fmt.Sprintf("/usr/lib/debug/.build-id/%x/%x.debug", id[:1], id[1:]))
	}
	out := map[string]string{}
	for _, names := range byAddr {
		slices.Sort(names)
		names = slices.Compact(names)
		for _, n := range names[1:] {
			if _, ok := out[n]; !ok {
				out[n] = names[0]
			}
		}
	}
	return out
})

// buildID returns the GNU build ID of f, or nil.
func buildID(f *elf.File) []byte {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return nil
	}
	b, err := s.Data()
	// namesz, descsz, type, "GNU\0", then the ID.
	if err != nil || len(b) < 16 || f.ByteOrder.Uint32(b[4:]) != uint32(len(b)-16) {
		return nil
	}
	return b[16:]
}

// topShares reads the flat% column of pprof -top by function.
func topShares(top string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^\s*\S+\s+([\d.]+)%\s+\S+%\s+\S+\s+\S+%\s+(.+?)\s*$`)
	for _, m := range re.FindAllStringSubmatch(top, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		out[m[2]] += v
	}
	return out
}

// withoutTemplateArgs drops the <...> parts of a C++ name, as pprof's
// default demangling simplifies names: WriteToFlat<unsigned char> is
// WriteToFlat.
func withoutTemplateArgs(name string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// perfRecord runs perf record -q -e cpu-clock with args; a machine where
// perf cannot record skips the test, or fails it under CI.
func perfRecord(t *testing.T, perf string, args ...string) {
	t.Helper()
	perfRecordEvents(t, perf, "cpu-clock", args...)
}

// perfRecordEvents is perfRecord of the events events (perf record -e).
func perfRecordEvents(t *testing.T, perf, events string, args ...string) {
	t.Helper()
	rec := exec.Command(perf, append([]string{"record", "-q", "-e", events}, args...)...)
	if out, err := rec.CombinedOutput(); err != nil {
		if testenv.InCI() {
			t.Fatalf("perf record: %v\n%s", err, out)
		}
		t.Skipf("perf cannot record here: %v\n%s", err, out)
	}
}

// freshPerfDir returns the directory of the recordings ./test.sh makes
// with testdata/perf/generate.sh ($JITPPROF_FRESH_PERF); without it, the
// test is skipped, or fails under CI.
func freshPerfDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("JITPPROF_FRESH_PERF")
	if dir == "" {
		if testenv.InCI() {
			t.Fatal("JITPPROF_FRESH_PERF is not set: under CI, ./test.sh must record the perf.data files")
		}
		t.Skip("needs the recordings of testdata/perf/generate.sh (JITPPROF_FRESH_PERF)")
	}
	return dir
}

// withoutArgs drops the parameter list of a C++ name, as pprof's default
// demangling does: "wasmwork::fib(unsigned int)" is "wasmwork::fib".
func withoutArgs(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i]
	}
	return name
}

// valueOf returns, of a profile, the sum of the values of sample type
// typ of the samples whose stack has a function named fn ("" for all).
func valueOf(t *testing.T, p *profile.Profile, typ, fn string) int64 {
	t.Helper()
	// An event recorded in user space only is "cpu-clock:u".
	i := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == typ || st.Type == typ+":u" })
	if i < 0 {
		t.Fatalf("no sample type %s in %v", typ, p.SampleType)
	}
	var sum int64
	for _, s := range p.Sample {
		if fn == "" || slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
			return slices.ContainsFunc(l.Line, func(ln profile.Line) bool { return ln.Function.Name == fn })
		}) {
			sum += s.Value[i]
		}
	}
	return sum
}
