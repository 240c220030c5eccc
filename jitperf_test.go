package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataDwarfThroughJITCode records the MCJIT host running
// workload.c compiled without frame pointers (LLVM's default) with perf
// record --call-graph dwarf, under MCJIT and ORC (RuntimeDyld and
// JITLink), for each LLVM version ./test.sh builds it with: a stack
// through JIT code is unwound with the call frame information of the
// LLVM dumps (.eh_frame, relocated to the code's load addresses), which
// perf cannot use without perf inject and a jitdump with unwinding
// records. Nearly every sample in JIT code must reach the host's main (by
// frame pointers, which this JIT code does not keep, none did), and
// jit_sort_records one of its two callers, jit_cpu_round and
// jit_heap_round.
func TestPerfDataDwarfThroughJITCode(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	var runs []mcjitRun
	for _, r := range append(mcjitRuns(t), orcRuns(t)...) {
		// The fresh builds (the checked-in one is not run), each LLVM
		// version and JIT linker; orc-gdb's objects are jitsnap's copies
		// of what orc-jitlink links.
		if r.name != "golden" && r.jit != "orc-gdb" {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		testenv.Missing(t, "a freshly built MCJIT host (JITPPROF_FRESH_MCJIT)", "run ./test.sh, which builds it with testdata/mcjit/generate.sh")
	}
	for _, fr := range runs {
		t.Run(fr.name, func(t *testing.T) { dwarfThroughJITCode(t, perf, fr) })
	}
}

// dwarfThroughJITCode records run's host with perf record --call-graph
// dwarf, its workload compiled without frame pointers, and checks the
// stacks through its JIT code.
func dwarfThroughJITCode(t *testing.T, perf string, fr mcjitRun) {
	clang := testenv.Tool(t, fmt.Sprintf("clang-%d", fr.llvm), fmt.Sprintf("clang-%d", fr.llvm))
	dir := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit")
	var bitcode []string
	for _, part := range []string{"1", "2"} {
		bc := filepath.Join(dir, "workload"+part+".bc")
		cmd := exec.Command(clang, "-g", "-O1", "-fomit-frame-pointer", "-DWORKLOAD_PART="+part,
			"-emit-llvm", "-c", "workload.c", "-o", bc)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		bitcode = append(bitcode, bc)
	}
	data := filepath.Join(dir, "perf.data")
	out := filepath.Join(dir, "out")
	perfRecord(t, perf, append([]string{"-F", "1000", "--call-graph", "dwarf", "-o", data,
		fr.path("bin/jit_host"), "--jit", fr.jit, "--out", out, "--seconds", "1", "--threads", "1"}, bitcode...)...)

	pb := filepath.Join(dir, "p.pb.gz")
	runPProf(t, dir, nil, "-jit_dir", filepath.Join(out, "jit"), "-proto", "-output", pb, data)
	b, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	var jit, toMain, sort, sortCalled int64
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location { // leaf first, each location's inlined callees before their callers
			for _, ln := range l.Line {
				names = append(names, ln.Function.Name)
			}
		}
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "jit_") }) {
			continue
		}
		n := s.Value[0]
		jit += n
		if slices.Contains(names, "main") {
			toMain += n
		}
		if k := slices.Index(names, "jit_sort_records"); k >= 0 {
			sort += n
			if k+1 < len(names) && (names[k+1] == "jit_cpu_round" || names[k+1] == "jit_heap_round") {
				sortCalled += n
			}
		}
	}
	t.Logf("%d samples in JIT code, %d reach main; jit_sort_records %d, called by one of its callers %d", jit, toMain, sort, sortCalled)
	if jit < 500 || toMain*100 < jit*90 {
		t.Errorf("%d of %d samples in JIT code reach main, want 90%%", toMain, jit)
	}
	if sort < 20 || sortCalled*100 < sort*98 {
		t.Errorf("%d of %d samples in jit_sort_records have one of its callers, jit_cpu_round and jit_heap_round", sortCalled, sort)
	}
}
