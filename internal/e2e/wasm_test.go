package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataWasm records Node.js running a WebAssembly module
// (testdata/wasm/work.cc, built here with clang++-19 and wasm-ld-19) with
// perf record -g, V8 writing a perf map (--perf-basic-prof) or a jitdump
// (--perf-prof). V8 names each function's code in each tier apart
// ("JS:hash_loop-1-liftoff", "JS:hash_loop-1-turbofan"); pprof names the
// function, so that its tiers add up to one row, and each function's
// share is perf report's over its tiers, as checkShares compares them (of
// the jitdump, after perf inject --jit; and pprof's of the recording
// perf inject wrote, its code in the ELF files perf made, as of the
// original). The samples in fib reach run (WebAssembly) and, through
// the JavaScript that calls it (interpreted, so
// Builtins_InterpreterEntryTrampoline), V8's entry from node's C++.
func TestPerfDataWasm(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	node := testenv.Tool(t, "node", "nodejs")
	cxx := testenv.Tool(t, "clang++-19", "clang-19")
	ld := testenv.Tool(t, "wasm-ld-19", "lld-19")
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "wasm")
	wasm := filepath.Join(t.TempDir(), "work.wasm")
	if out, err := exec.Command(cxx, "--target=wasm32", "-O2", "-nostdlib", "-fuse-ld="+ld, "-Wl,--no-entry", "-o", wasm, filepath.Join(src, "work.cc")).CombinedOutput(); err != nil {
		t.Fatalf("clang++-19 --target=wasm32: %v\n%s", err, out)
	}
	for _, flag := range []string{"--perf-basic-prof", "--perf-prof"} {
		t.Run(strings.TrimPrefix(flag, "--"), func(t *testing.T) {
			dir := t.TempDir() // the jitdump, written where node runs
			data := filepath.Join(dir, "perf.data")
			removeTmpJITFiles(t, recordedPIDs(data)) // the perf map
			perfRecord(t, perf, "-g", "-k", "1", "-o", data, "--", "sh", "-c", `cd "$0" && exec "$@"`, dir,
				node, flag, filepath.Join(src, "run.js"), wasm, "1.5")
			reported, global, env := data, []string(nil), []string(nil)
			if flag == "--perf-prof" {
				reported, global, env = perfInject(t, perf, data)
			}
			want, out := perfReportOf(t, perf, reported, global...) // by function, as pprof
			if want["hash_loop"] < 20 || want["wasmwork::fib"] < 5 {
				t.Fatalf("perf report does not name the WebAssembly functions:\n%s", out)
			}

			got, r := runTop(t, dir, perfCacheEnv(), data)
			checkShares(t, got, want)
			if strings.Contains(string(r.stdout), "liftoff") || strings.Contains(string(r.stdout), "turbofan") {
				t.Errorf("a tier in pprof's names:\n%s", r.stdout)
			}
			if reported != data {
				checkInjected(t, dir, reported, env, got)
			}

			p, _ := protoOf(t, dir, nil, data)
			var fib, toRun, toJS int64
			has := func(s *profile.Sample, match func(string) bool) bool {
				return slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
					return slices.ContainsFunc(l.Line, func(ln profile.Line) bool { return match(ln.Function.Name) })
				})
			}
			for _, s := range p.Sample {
				if ln := s.Location[0].Line; len(ln) == 0 || ln[0].Function.Name != "wasmwork::fib" {
					continue
				}
				fib += s.Value[0]
				if has(s, func(fn string) bool { return fn == "run" }) {
					toRun += s.Value[0]
				}
				if has(s, func(fn string) bool { return fn == "Builtins_JSEntry" }) {
					toJS += s.Value[0]
				}
			}
			if fib == 0 || toRun*100 < fib*95 || toJS*100 < fib*95 {
				t.Errorf("of %d samples in fib, %d reach run and %d V8's entry from C++, want 95%%", fib, toRun, toJS)
			}
		})
	}
}
