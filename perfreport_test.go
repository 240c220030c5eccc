package main

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// perfReportShares reads perf report --no-children --sort sym --stdio -q
// -g none output from the file at path: "    52.55%  [.] hot_mix" lines,
// by function.
func perfReportShares(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parsePerfReport(b)
}

// perfReportOf runs perf report (as perfReportShares reads it) on the
// recording data and returns its shares by function and its output; the
// options global go before the command ("--buildid-dir", DIR).
func perfReportOf(t *testing.T, perf, data string, global ...string) (map[string]float64, []byte) {
	t.Helper()
	args := slices.Concat(global, []string{"report", "-i", data, "--no-children", "--sort", "sym", "--stdio", "-q", "-g", "none"})
	out, err := exec.Command(perf, args...).Output()
	if err != nil {
		t.Fatalf("perf report -i %s: %v", data, err)
	}
	return parsePerfReport(out), out
}

// perfInject runs perf inject --jit on the recording data, which writes
// an ELF file of each piece of code of the jitdumps the recording names
// (beside the jitdump) and a recording that maps those, inject.data
// beside data, whose path it returns. perf inject copies the ELF files
// into perf's build-ID cache: a directory of the test's, not the user's
// ~/.debug; it returns the options that have perf read that cache, and
// the environment that has pprof read it.
func perfInject(t *testing.T, perf, data string) (string, []string, []string) {
	t.Helper()
	dir := filepath.Dir(data)
	cache := filepath.Join(dir, "buildid")
	out := filepath.Join(dir, "inject.data")
	if b, err := exec.Command(perf, "--buildid-dir", cache, "inject", "--jit", "-i", data, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("perf inject: %v\n%s", err, b)
	}
	return out, []string{"--buildid-dir", cache}, []string{"PERF_BUILDID_DIR=" + cache}
}

// v8Wasm matches V8's name of WebAssembly code: the name section's name
// (demangled C++, with spaces), the function's index, the tier.
var v8Wasm = regexp.MustCompile(`^JS:(.+)-\d+-(?:liftoff|turbofan)$`)

// parsePerfReport reads perf report output as perfReportShares does,
// V8's names of JavaScript and WebAssembly code by function (a
// WebAssembly function's tiers add up).
func parsePerfReport(report []byte) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`^\s*([\d.]+)%\s+\[.\]\s+(.+?)\s*$`)
	sc := bufio.NewScanner(bytes.NewReader(report))
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		name := m[2]
		if w := v8Wasm.FindStringSubmatch(name); w != nil {
			name = withoutArgs(w[1])
		} else if rest, ok := strings.CutPrefix(name, "JS:"); ok {
			name, _, _ = strings.Cut(strings.TrimLeft(rest, "*~^+"), " ")
		}
		out[aliasName(withoutTemplateArgs(name))] += v
	}
	return out
}

// checkShares fails the test for each function whose share want (perf
// report's) gives as min percent or more, unless skip says so, and got
// (pprof's) differs from by more than 0.5 percentage point; it returns how
// many it compared.
func checkShares(t *testing.T, got, want map[string]float64, min float64, skip func(string) bool) int {
	t.Helper()
	n := 0
	for fn, w := range want {
		if w < min || (skip != nil && skip(fn)) {
			continue
		}
		n++
		if g := got[fn]; math.Abs(g-w) > 0.5 {
			t.Errorf("%s: %.2f%% in pprof, %.2f%% in perf report", fn, g, w)
		}
	}
	return n
}

// checkSharesOf fails the test for each of the functions fns whose
// share in got (pprof's) differs from want's (perf report's) by more than
// 0.5 percentage point.
func checkSharesOf(t *testing.T, got, want map[string]float64, fns ...string) {
	t.Helper()
	for _, fn := range fns {
		if math.Abs(got[fn]-want[fn]) > 0.5 {
			t.Errorf("%s: %.2f%% in pprof, %.2f%% in perf report", fn, got[fn], want[fn])
		}
	}
}

// checkInjected runs pprof -top on injected, the recording perf inject
// --jit wrote, whose JIT code is in the ELF files perf made of the
// jitdump, and fails the test for each of the functions fns whose share
// differs by more than 0.5 percentage point from orig's, pprof's shares
// of the original recording: both are named alike. env is perfInject's.
func checkInjected(t *testing.T, dir, injected string, env []string, orig map[string]float64, fns ...string) {
	t.Helper()
	got := topShares(string(runPProf(t, dir, env, "-top", "-nodecount=10000", injected).stdout))
	for _, fn := range fns {
		if math.Abs(got[fn]-orig[fn]) > 0.5 {
			t.Errorf("%s: %.2f%% in the recording perf inject wrote, %.2f%% in the original", fn, got[fn], orig[fn])
		}
	}
}

// removeNewTmpJITFiles removes, when the test ends, the perf maps and
// jitdumps in /tmp that were not there when it was called: those the
// runtimes the test runs write there, and the ELF files perf inject
// --jit writes beside such a jitdump.
func removeNewTmpJITFiles(t *testing.T) {
	t.Helper()
	jitFiles := func() []string {
		maps, _ := filepath.Glob("/tmp/perf-*.map")
		dumps, _ := filepath.Glob("/tmp/jit-*.dump")
		injected, _ := filepath.Glob("/tmp/jitted-*.so")
		return slices.Concat(maps, dumps, injected)
	}
	before := jitFiles()
	t.Cleanup(func() {
		for _, f := range jitFiles() {
			if !slices.Contains(before, f) {
				os.Remove(f)
			}
		}
	})
}

// aliasName gives glibc's memmove variants the name of the memcpy ones:
// they are aliases, one code at one address (libc's DWARF names it
// __memcpy_*, which pprof and llvm-symbolizer print; perf report prints
// the symbol table's __memmove_* alias).
func aliasName(name string) string {
	if rest, ok := strings.CutPrefix(name, "__memmove_"); ok {
		return "__memcpy_" + rest
	}
	return name
}

// topShares reads the flat% column of pprof -top by function.
func topShares(top string) map[string]float64 {
	out := map[string]float64{}
	re := regexp.MustCompile(`(?m)^\s*\S+\s+([\d.]+)%\s+\S+%\s+\S+\s+\S+%\s+(.+?)\s*$`)
	for _, m := range re.FindAllStringSubmatch(top, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		out[aliasName(m[2])] += v
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
