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
// by Mono's name ("Work:Fib (int)"), as perf report's, as checkShares
// compares them. Mono's JIT code keeps no frame pointer, so the
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
	data := filepath.Join(dir, "perf.data")
	removeTmpJITFiles(t, recordedPIDs(data)) // Mono's perf map
	perfRecord(t, perf, "-k", "1", "-o", data, "--", mono, "--jitmap", exe, "1.5")
	want, report := perfReportOf(t, perf, data)
	if want["Work:Hot (uint)"] < 20 || want["Work:Fib (int)"] < 5 {
		t.Fatalf("perf report does not name Mono's JIT code:\n%s", report)
	}
	got, r := runTop(t, dir, perfCacheEnv(), data)
	if n := checkShares(t, got, want); n < 2 {
		t.Errorf("%d methods compared, want Hot and Fib at least", n)
	}
	if strings.Contains(string(r.stderr), "anonymous executable memory") {
		t.Errorf("JIT code left unsymbolized:\n%s", r.stderr)
	}
}
