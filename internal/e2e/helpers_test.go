package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// pprofBin is the pprof command under test, built by TestMain from this
// checkout; it is not changed afterwards.
var pprofBin string

// TestMain builds the pprof command once and runs the tests with perf's
// build-ID cache in a temporary directory, both removed when they end.
// perf record keeps a copy of every file it samples in that cache,
// ~/.debug unless its configuration says otherwise (perf ignores
// $PERF_BUILDID_DIR, which it only sets for the scripts it runs): the
// tests' recordings of Node, the JVM and their own binaries left
// gigabytes there. $PERF_CONFIG names the only configuration file perf
// then reads, so a user's ~/.perfconfig does not change what the tests'
// perf report prints either. Tests that need pprof to read a cache still
// give it one ($PERF_BUILDID_DIR, which pprofCmd clears).
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && !testenv.InCI() {
		fmt.Println("e2e: end-to-end tests skipped under -short (CI=true runs them)")
		os.Exit(0)
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "jitpprof-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	pprofBin = filepath.Join(dir, "pprof")
	build := exec.Command("go", "build", "-o", pprofBin, "github.com/jitpprof/pprof")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building pprof: %v\n%s", err, out)
		return 1
	}
	config := filepath.Join(dir, "perfconfig")
	if err := os.WriteFile(config, []byte(perfConfig(filepath.Join(dir, "buildid"))), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: perf's build-ID cache for the tests:", err)
		return 1
	}
	os.Setenv("PERF_CONFIG", config)
	return m.Run()
}

// perfConfig returns a perf configuration file (perf-config(1)) that
// sets the build-ID cache to dir.
func perfConfig(dir string) string {
	return fmt.Sprintf("[buildid]\n\tdir = %s\n", strconv.Quote(dir))
}

// result is what one pprof run printed.
type result struct {
	stdout, stderr []byte
	err            error
}

// pprofCmd returns a command running this repository's pprof with args,
// in directory dir, with a clean environment for pprof (no PPROF_*
// variables, HOME in a temporary directory) plus env.
func pprofCmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(pprofBin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(t), env...)
	return cmd
}

// cleanEnv returns the environment without the variables pprof and
// jitpprof read (and llvm-symbolizer's DEBUGINFOD_ ones, and perf's
// PERF_CONFIG, which runTests sets for the tests' own perf runs), and
// with HOME and PPROF_TMPDIR in a temporary directory.
func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PPROF_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "PERF_BUILDID_DIR=") || strings.HasPrefix(kv, "PERF_CONFIG") || strings.HasPrefix(kv, "DEBUGINFOD_") {
			continue
		}
		env = append(env, kv)
	}
	home := t.TempDir()
	return append(env, "HOME="+home, "PPROF_TMPDIR="+filepath.Join(home, "pprof"))
}

// run runs cmd and returns what it printed.
func run(cmd *exec.Cmd) result {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return result{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
}

// exitCode returns the exit status of a finished command, or -1.
func (r result) exitCode() int {
	if r.err == nil {
		return 0
	}
	if ee, ok := r.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// runPProf runs pprof and fails the test if it fails.
func runPProf(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	r := run(pprofCmd(t, dir, env, args...))
	if r.err != nil {
		t.Fatalf("pprof %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r
}

// protoOf runs pprof -proto with args (the profile last) from dir, with
// env, and returns the profile it writes and what it printed.
func protoOf(t *testing.T, dir string, env []string, args ...string) (*profile.Profile, result) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.pb.gz")
	args = append([]string{"-proto", "-output", out}, args...)
	r := runPProf(t, dir, env, args...)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("pprof %s wrote no profile: %v\n%s", strings.Join(args, " "), err, r.stderr)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// pprofProto runs pprof on a profile of run with args and returns the
// profile it writes with -proto.
func pprofProto(t *testing.T, run mcjitRun, prof string, args ...string) (*profile.Profile, result) {
	t.Helper()
	return protoOf(t, t.TempDir(), run.env(), append(args, run.path(prof))...)
}

// An mcjitRun is the output of testdata/mcjit/generate.sh: profiles of a
// real LLVM 14 MCJIT host whose JIT code sits right below libleaf.so, the
// JIT objects it dumped, and its binaries.
type mcjitRun struct {
	name string
	dir  string
	llvm int    // the LLVM version the host was built with
	jit  string // its JIT mode (jit_host --jit): mcjit, orc-rtdyld, orc-jitlink, orc-gdb
}

func (r mcjitRun) path(name string) string { return filepath.Join(r.dir, name) }

func (r mcjitRun) jitDir() string { return r.path("jit") }

// env makes pprof find the run's binaries by base name.
func (r mcjitRun) env() []string { return []string{"PPROF_BINARY_PATH=" + r.path("bin")} }

// mcjitRuns returns the checked-in run, and the fresh one ./test.sh
// generates when JITPPROF_FRESH_MCJIT names it.
func mcjitRuns(t *testing.T) []mcjitRun {
	t.Helper()
	runs := []mcjitRun{{name: "golden", dir: filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "golden"), llvm: 14, jit: "mcjit"}}
	if dir := os.Getenv("JITPPROF_FRESH_MCJIT"); dir != "" {
		runs = append(runs, mcjitRun{name: "fresh", dir: dir, llvm: 14, jit: "mcjit"})
	} else if testenv.InCI() {
		t.Fatal("JITPPROF_FRESH_MCJIT is not set: under CI, ./test.sh must regenerate the MCJIT fixtures")
	}
	// The host built against other LLVM versions (JITPPROF_LLVM_VERSIONS
	// of ./test.sh): JITPPROF_FRESH_MCJIT_19=DIR, ...
	for v := 15; v <= 25; v++ {
		if dir := os.Getenv(fmt.Sprintf("JITPPROF_FRESH_MCJIT_%d", v)); dir != "" {
			runs = append(runs, mcjitRun{name: fmt.Sprintf("fresh-llvm%d", v), dir: dir, llvm: v, jit: "mcjit"})
		}
	}
	return runs
}

// orcRuns returns the runs of the same host under ORC, which ./test.sh
// makes for each LLVM version of its matrix: JITPPROF_FRESH_ORC_19_JITLINK
// names the directory of LLVM 19's orc-jitlink run, and so on. Their code
// is where LLVM's memory managers put it, not below libleaf.so, so only
// the symbolization tests use them.
func orcRuns(t *testing.T) []mcjitRun {
	t.Helper()
	var runs []mcjitRun
	for v := 14; v <= 25; v++ {
		for _, m := range orcModes {
			if dir := os.Getenv(fmt.Sprintf("JITPPROF_FRESH_ORC_%d_%s", v, m.env)); dir != "" {
				runs = append(runs, mcjitRun{name: fmt.Sprintf("llvm%d-%s", v, m.jit), dir: dir, llvm: v, jit: m.jit})
			}
		}
	}
	if len(runs) == 0 && testenv.InCI() {
		t.Fatal("no JITPPROF_FRESH_ORC_* runs: under CI, ./test.sh must run the host under ORC for each LLVM version")
	}
	return runs
}

// measured is a pprof run through GNU time.
type measured struct {
	result
	rss     int64         // peak, in bytes
	cpu     time.Duration // user and system, as GNU time says
	elapsed time.Duration
	timeout bool
}

// runMeasured runs pprof with args in dir, with env, through GNU time,
// for at most limit.
func runMeasured(t *testing.T, dir string, env []string, limit time.Duration, args ...string) measured {
	t.Helper()
	if _, err := os.Stat(timeTool); err != nil {
		testenv.Missing(t, timeTool, "apt-get install time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	// Through GNU time: a process forked from this (large) test binary
	// would report the test's own peak RSS, which Linux carries across
	// exec.
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.CommandContext(ctx, timeTool, append([]string{"-f", "%U %S %M", "-o", rssFile, pprofBin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(t), env...)
	cmd.WaitDelay = time.Second
	start := time.Now()
	m := measured{result: run(cmd)}
	m.elapsed = time.Since(start)
	m.timeout = ctx.Err() != nil
	if b, err := os.ReadFile(rssFile); err == nil {
		// The last line (GNU time may say first how the command ended).
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if f := strings.Fields(lines[len(lines)-1]); len(f) == 3 {
			user, _ := strconv.ParseFloat(f[0], 64)
			sys, _ := strconv.ParseFloat(f[1], 64)
			m.cpu = time.Duration((user + sys) * float64(time.Second))
			kb, _ := strconv.ParseInt(f[2], 10, 64)
			m.rss = kb << 10
		}
	}
	return m
}

// measuredRun is runMeasured, failing t if pprof did not end within
// limit or its peak RSS could not be read: what it printed, its peak RSS
// and how long it took.
func measuredRun(t *testing.T, dir string, env []string, limit time.Duration, args ...string) (result, int64, time.Duration) {
	t.Helper()
	m := runMeasured(t, dir, env, limit, args...)
	if m.timeout {
		t.Fatalf("did not end within %v", limit)
	}
	if m.rss == 0 {
		t.Fatal("no peak RSS from /usr/bin/time")
	}
	return m.result, m.rss, m.elapsed
}

// requireRecord skips the test in -short mode and where this user may
// not record (fails it under CI).
func requireRecord(t *testing.T) {
	t.Helper()
	if testing.Short() && !testenv.InCI() {
		t.Skip("records programs for seconds")
	}
	if runtime.GOOS != "linux" {
		t.Skip("-record needs Linux")
	}
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		testenv.Missing(t, "perf events (/proc/sys/kernel/perf_event_paranoid)", "a Linux kernel with perf events")
	}
	if strings.TrimSpace(string(b)) > "2" && os.Geteuid() != 0 {
		testenv.Missing(t, "the permission to record (kernel.perf_event_paranoid is "+strings.TrimSpace(string(b))+")", "run as root")
	}
}

// requireRoot skips the test (fails it under CI) unless it runs as root.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root", "run the tests as root (./test.sh does)")
	}
}

// buildC compiles the C program src (under testdata) into dir with gcc
// and flags, and returns the executable's path.
func buildC(t *testing.T, dir, src, name string, flags ...string) string {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "gcc")
	bin := filepath.Join(dir, name)
	args := append(append([]string{"-g", "-pthread"}, flags...), "-o", bin, filepath.Join(testenv.RepoRoot(t), "testdata", src))
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// buildWork builds testdata/perf/work.c with frame pointers.
func buildWork(t *testing.T, dir string) string {
	return buildC(t, dir, "perf/work.c", "work", "-O1", "-fno-omit-frame-pointer")
}

// nameAt returns the name of the last range of ranges (in file order)
// that covers addr, or "": in a perf map, a later line over the same
// addresses wins.
func nameAt(ranges []codeRange, addr uint64) string {
	name := ""
	for _, r := range ranges {
		if addr >= r.start && addr-r.start < r.size {
			name = r.name
		}
	}
	return name
}

// readPerfMapLines reads a perf map line by line, in file order.
func readPerfMapLines(t *testing.T, path string) []codeRange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []codeRange
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 3)
		if len(fields) != 3 {
			continue
		}
		start, err1 := strconv.ParseUint(strings.TrimPrefix(fields[0], "0x"), 16, 64)
		size, err2 := strconv.ParseUint(strings.TrimPrefix(fields[1], "0x"), 16, 64)
		if err1 == nil && err2 == nil {
			out = append(out, codeRange{start, size, fields[2]})
		}
	}
	return out
}

// referenceFlat sums the profile's CPU time (ms) per function of the
// leaf addresses outside file mappings, named by name.
func referenceFlat(t *testing.T, prof string, name func(uint64) string) map[string]int64 {
	t.Helper()
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	// The profile's own memory map, as upstream parsed it: only named
	// file mappings count as files here.
	inFile := func(addr uint64) bool {
		for _, m := range p.Mapping {
			if m.File != "" && !strings.HasPrefix(m.File, "[") && addr >= m.Start && addr < m.Limit {
				return true
			}
		}
		return false
	}
	want := map[string]int64{}
	for _, s := range p.Sample {
		addr := s.Location[0].Address
		if inFile(addr) {
			continue
		}
		if n := name(addr); n != "" {
			want[n] += s.Value[1] / 1e6
		}
	}
	return want
}

// goProfiles writes a real CPU and heap profile of this test process with
// runtime/pprof (the proto format) and returns their paths.
func goProfiles(t *testing.T) (cpu, heap string) {
	t.Helper()
	dir := t.TempDir()
	cpu, heap = filepath.Join(dir, "go.cpu.pb.gz"), filepath.Join(dir, "go.heap.pb.gz")
	f, err := os.Create(cpu)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	var sink []string
	for i := range 200000 {
		sink = append(sink, strings.Repeat("x", i%64))
	}
	runtime.KeepAlive(busy(200e6))
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	h, err := os.Create(heap)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(h, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(sink)
	return cpu, heap
}

//go:noinline
func busy(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

// orcModes are jit_host's ORC modes, by the suffix of their variable.
var orcModes = []struct{ env, jit string }{{"RTDYLD", "orc-rtdyld"}, {"JITLINK", "orc-jitlink"}, {"GDB", "orc-gdb"}}

// timeTool measures the peak RSS of the hostile corpus's pprof runs.
const timeTool = "/usr/bin/time"
