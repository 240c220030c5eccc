package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataMono records a C# program run by Mono 6.8's JIT with
// --jitmap (a perf map in /tmp) under perf record: each method's share,
// by Mono's name ("Work:Fib (int)"), as perf report's within 0.5
// percentage point. Mono's JIT code keeps no frame pointer, so the
// recording has no stacks (perf report's would be as broken).
func TestPerfDataMono(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	mono := testenv.Tool(t, "mono", "mono-runtime")
	mcs := testenv.Tool(t, "mcs", "mono-mcs")
	dir := t.TempDir()
	exe := filepath.Join(dir, "Work.exe")
	if out, err := exec.Command(mcs, "-optimize", "-out:"+exe, filepath.Join(testenv.RepoRoot(t), "testdata", "mono", "Work.cs")).CombinedOutput(); err != nil {
		t.Fatalf("mcs: %v\n%s", err, out)
	}
	removeNewTmpJITFiles(t) // Mono's perf map
	data := filepath.Join(dir, "perf.data")
	perfRecord(t, perf, "-k", "1", "-o", data, "--", mono, "--jitmap", exe, "1.5")
	want, report := perfReportOf(t, perf, data)
	if want["Work:Hot (uint)"] < 20 || want["Work:Fib (int)"] < 5 {
		t.Fatalf("perf report does not name Mono's JIT code:\n%s", report)
	}
	r := runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
	if n := checkShares(t, topShares(string(r.stdout)), want, 1, nil); n < 2 {
		t.Errorf("%d methods compared, want Hot and Fib at least", n)
	}
	if strings.Contains(string(r.stderr), "anonymous executable memory") {
		t.Errorf("JIT code left unsymbolized:\n%s", r.stderr)
	}
}
