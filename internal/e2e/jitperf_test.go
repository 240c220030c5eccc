package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	dir := t.TempDir()
	bitcode := workloadWithoutFramePointers(t, fr.llvm, dir)
	data := filepath.Join(dir, "perf.data")
	out := filepath.Join(dir, "out")
	perfRecord(t, perf, append([]string{"-F", "1000", "--call-graph", "dwarf", "-o", data,
		fr.path("bin/jit_host"), "--jit", fr.jit, "--out", out, "--seconds", "1", "--threads", "1"}, bitcode...)...)
	st := jitStacksOf(t, dir, data, "-jit_dir", filepath.Join(out, "jit"))
	if st.jit < 500 || st.toMain*100 < st.jit*90 {
		t.Errorf("%d of %d samples in JIT code reach main, want 90%%", st.toMain, st.jit)
	}
	st.checkSortCallers(t)
}

// workloadWithoutFramePointers compiles testdata/mcjit/workload.c to
// bitcode in dir as generate.sh does, but without frame pointers (LLVM's
// default), with the clang of LLVM llvm, and returns the two files.
func workloadWithoutFramePointers(t *testing.T, llvm int, dir string) []string {
	clang := testenv.Tool(t, fmt.Sprintf("clang-%d", llvm), fmt.Sprintf("clang-%d", llvm))
	var bitcode []string
	for _, part := range []string{"1", "2"} {
		bc := filepath.Join(dir, "workload"+part+".bc")
		cmd := exec.Command(clang, "-g", "-O1", "-fomit-frame-pointer", "-DWORKLOAD_PART="+part,
			"-emit-llvm", "-c", "workload.c", "-o", bc)
		cmd.Dir = filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		bitcode = append(bitcode, bc)
	}
	return bitcode
}

// jitStacks counts the samples of a recording of jit_host by what their
// stacks through JIT code (a jit_* function) show. Samples taken in
// gperftools' SIGPROF handler (the host profiles itself too) are left
// out: the handler's frames, libunwind's and the kernel's signal frame
// (with the FPU state) fill much of perf's 8 KiB copy of the stack, which
// then can end before the interrupted JIT frame's caller.
type jitStacks struct {
	jit     int64 // with a JIT function on the stack
	jitLeaf int64 // with a JIT function as the leaf
	lined   int64 // of those, with a line of workload.c
	toMain  int64 // reaching main
	// jit_sort_records on the stack, and with one of its callers,
	// jit_cpu_round and jit_heap_round, above it
	sort, sortCalled int64
	orphans          []string // a few stacks of jit_sort_records without a caller
}

// jitStacksOf runs pprof with args on the recording data, from dir, and
// counts its samples' stacks.
func jitStacksOf(t *testing.T, dir, data string, args ...string) jitStacks {
	t.Helper()
	p, _ := protoOf(t, dir, nil, append(args, data)...)
	var st jitStacks
	for _, s := range p.Sample {
		var names []string
		for _, l := range s.Location { // leaf first, each location's inlined callees before their callers
			for _, ln := range l.Line {
				names = append(names, ln.Function.Name)
			}
		}
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "jit_") }) ||
			slices.Contains(names, "ProfileHandler::SignalHandler") {
			continue
		}
		n := s.Value[0]
		st.jit += n
		if leaf := s.Location[0].Line; len(leaf) > 0 && strings.HasPrefix(leaf[0].Function.Name, "jit_") {
			st.jitLeaf += n
			if leaf[0].Line > 0 && strings.HasSuffix(leaf[0].Function.Filename, "testdata/mcjit/workload.c") {
				st.lined += n
			}
		}
		if slices.Contains(names, "main") {
			st.toMain += n
		}
		if k := slices.Index(names, "jit_sort_records"); k >= 0 {
			st.sort += n
			if k+1 < len(names) && (names[k+1] == "jit_cpu_round" || names[k+1] == "jit_heap_round") {
				st.sortCalled += n
			} else if len(st.orphans) < 3 {
				st.orphans = append(st.orphans, fmt.Sprintf("%#x %s", s.Location[0].Address, strings.Join(names, " < ")))
			}
		}
	}
	t.Logf("%d samples in JIT code, %d in a JIT leaf, %d of those at a workload.c line, %d reach main; jit_sort_records %d, called by one of its callers %d",
		st.jit, st.jitLeaf, st.lined, st.toMain, st.sort, st.sortCalled)
	return st
}

// checkSortCallers fails the test unless nearly every sample in
// jit_sort_records has one of its callers above it.
func (st jitStacks) checkSortCallers(t *testing.T) {
	t.Helper()
	if st.sort < 20 || st.sortCalled*100 < st.sort*98 {
		t.Errorf("%d of %d samples in jit_sort_records have one of its callers, jit_cpu_round and jit_heap_round; without:\n%s",
			st.sortCalled, st.sort, strings.Join(st.orphans, "\n"))
	}
}

// TestPerfDataORCPerfSupport records the MCJIT host's workload under
// LLVM's ORC with LLVM's own perf support (PerfSupportPlugin, LLVM 18 and
// later: jit_host --jit orc-perf), compiled without frame pointers, with
// perf record -k mono --call-graph dwarf, as LLVM's documentation has it.
// The plugin writes a jitdump with line records and one unwinding record
// per object (its .eh_frame at its load address, the .eh_frame_hdr first,
// mapped_size 0); perf inject refuses the file (LLVM 19 writes garbage in
// its header's flags). pprof finds the jitdump from the recording alone,
// names the JIT functions with workload.c's lines, and unwinds through
// them: nearly every sample in JIT code reaches main. The host's
// gperftools profile of the same run is symbolized from the same jitdump,
// found under $JITDUMPDIR.
func TestPerfDataORCPerfSupport(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	var run *mcjitRun
	for _, r := range mcjitRuns(t) {
		if r.name != "golden" && r.llvm >= 18 {
			run = &r
		}
	}
	if run == nil {
		testenv.Missing(t, "the MCJIT host built with LLVM 18 or later (JITPPROF_FRESH_MCJIT_19)",
			"run ./test.sh with LLVM 19 in JITPPROF_LLVM_VERSIONS (the default)")
	}
	dir := t.TempDir()
	bitcode := workloadWithoutFramePointers(t, run.llvm, dir)
	jitdumpDir := filepath.Join(dir, "home")
	out := filepath.Join(dir, "out")
	for _, d := range []string{jitdumpDir, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("JITDUMPDIR", jitdumpDir) // for the host, and for pprof below
	data := filepath.Join(dir, "perf.data")
	perfRecord(t, perf, append([]string{"-k", "mono", "-F", "1000", "--call-graph", "dwarf", "-o", data,
		run.path("bin/jit_host"), "--jit", "orc-perf", "--out", out, "--seconds", "1", "--threads", "1"}, bitcode...)...)
	dumps, _ := filepath.Glob(filepath.Join(jitdumpDir, ".debug", "jit", "llvm-IR-jit-*", "jit-*.dump"))
	if len(dumps) != 1 {
		t.Fatalf("the host wrote jitdumps %v, want one", dumps)
	}

	// No -jit_dir: the recording names the jitdump.
	st := jitStacksOf(t, dir, data)
	if st.jitLeaf < 300 || st.lined*100 < st.jitLeaf*98 {
		t.Errorf("%d of %d samples in a JIT leaf have a workload.c line, want 98%%", st.lined, st.jitLeaf)
	}
	if st.toMain*100 < st.jit*90 {
		t.Errorf("%d of %d samples in JIT code reach main, want 90%%", st.toMain, st.jit)
	}
	st.checkSortCallers(t)

	// The gperftools profile of the same run: its JIT code is in an
	// anonymous mapping; the jitdump is found under $JITDUMPDIR.
	r := runPProf(t, dir, run.env(), "-top", "-nodecount=10000", filepath.Join(out, "cpu.prof"))
	if got := topShares(string(r.stdout)); got["jit_sort_records"] < 2 || got["jit_matmul"] < 1 {
		t.Errorf("gperftools profile: JIT functions not named from the jitdump (jit_sort_records %.2f%%, jit_matmul %.2f%%):\n%s\n%s",
			got["jit_sort_records"], got["jit_matmul"], r.stdout, r.stderr)
	}
}
