package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
)

// The JIT code of a recording, named with nothing for the user to set:
// the runtimes' switches added to a launched command's environment, an
// LLVM JIT's objects copied at its exit, a JVM attached to asked for its
// perf map.

// sharesOf sums the -top shares of the functions whose names contain
// each of names.
func sharesOf(top string, names ...string) map[string]float64 {
	got := topShares(top)
	out := map[string]float64{}
	for _, want := range names {
		for name, v := range got {
			if strings.Contains(name, want) {
				out[want] += v
			}
		}
	}
	return out
}

// requireShares fails t unless each of names has at least min percent of
// the samples in the -top report r.
func requireShares(t *testing.T, r result, min float64, names ...string) {
	t.Helper()
	got := sharesOf(string(r.stdout), names...)
	for _, n := range names {
		if got[n] < min {
			t.Errorf("%s has %.2f%% of the samples, want at least %.0f%%:\n%s\n%s", n, got[n], min, r.stdout, r.stderr)
		}
	}
}

// dirFiles lists the names in dir.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRecordNodeNothingSet records `node work.js` with no flag given to
// node: pprof adds V8's perf switches to NODE_OPTIONS, and the
// JavaScript functions come out named from the jitdump V8 wrote; the
// jitdump and V8's log are moved out of the command's directory. Kept
// with -record_output, the recording names them again when read later,
// from FILE.jit.
func TestRecordNodeNothingSet(t *testing.T) {
	requireRecord(t)
	node := testenv.Tool(t, "node", "nodejs")
	dir := t.TempDir()
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	saved := filepath.Join(t.TempDir(), "node.data")
	removeTmpJITFiles(t, recordedPIDs(saved))
	r := runPProf(t, dir, nil, "-top", "-nodecount=10000", "-record", "-record_output", saved, "--", node, script, "1500")
	if !strings.Contains(string(r.stderr), "JIT output switched on: NODE_OPTIONS=--perf-prof") {
		t.Errorf("pprof does not say what it added to NODE_OPTIONS:\n%s", r.stderr)
	}
	requireShares(t, r, 10, "fib")
	if left := dirFiles(t, dir); len(left) != 0 {
		t.Errorf("the command's directory holds %q after the recording, want nothing", left)
	}
	if dumps, _ := filepath.Glob(filepath.Join(saved+".jit", "jit-*.dump")); len(dumps) != 1 {
		t.Errorf("%s.jit holds %q, want the jitdump", saved, dirFiles(t, saved+".jit"))
	}
	again := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=10000", saved)
	requireShares(t, again, 10, "fib")

	// Not kept: no message names the temporary recording or its JIT
	// files, which are gone once pprof ends.
	temp := runPProf(t, dir, []string{"TMPDIR=" + t.TempDir()}, "-top", "-nodecount=10000", "-record", "--", node, script, "500")
	if strings.Contains(string(temp.stderr), "pprof-record-") || !strings.Contains(string(temp.stderr), "JIT objects: using 1 from the recording's JIT files") {
		t.Errorf("the messages of a recording not kept:\n%s", temp.stderr)
	}

	// -record_jit=false: the environment is left alone, and V8 writes
	// nothing.
	plain := runPProf(t, dir, nil, "-top", "-nodecount=10000", "-record", "-record_jit=false", "--", node, script, "500")
	if strings.Contains(string(plain.stderr), "JIT output switched on") || len(dirFiles(t, dir)) != 0 {
		t.Errorf("-record_jit=false: stderr %s, directory %q", plain.stderr, dirFiles(t, dir))
	}
}

// startUntilReady starts cmd and waits until its standard output or
// error has printed a line matching ready, or fails t; the command is
// killed when the test ends.
func startUntilReady(t *testing.T, cmd *exec.Cmd, ready *regexp.Regexp) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if ready.MatchString(sc.Text()) {
				found <- true
				break
			}
		}
		found <- false
		for sc.Scan() {
		}
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("%s ended before it was ready", cmd.Path)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s was not ready after a minute", cmd.Path)
	}
}

// TestRecordNodeAttached attaches to a running Node.js started with
// --perf-basic-prof (a switch only the process's start can give): its
// JavaScript functions are named from its perf map.
func TestRecordNodeAttached(t *testing.T) {
	requireRecord(t)
	node := testenv.Tool(t, "node", "nodejs")
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	cmd := exec.Command(node, "--perf-basic-prof", "-e",
		`console.log("ready"); process.argv[2] = "8000"; require(process.argv[1])`, script)
	cmd.Dir = t.TempDir()
	startUntilReady(t, cmd, regexp.MustCompile(`^ready$`))
	removeTmpJITFiles(t, func() []uint32 { return []uint32{uint32(cmd.Process.Pid)} })
	time.Sleep(500 * time.Millisecond) // its hot functions compiled
	r := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=10000", "-record", "-pid", fmt.Sprint(cmd.Process.Pid), "-seconds", "2")
	requireShares(t, r, 10, "fib")
}

// javaApp compiles testdata/java/App.java into a directory and returns
// it.
func javaApp(t *testing.T) string {
	t.Helper()
	javac := testenv.Tool(t, "javac", "openjdk-17-jdk-headless")
	dir := t.TempDir()
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(testenv.RepoRoot(t), "testdata", "java", "App.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return dir
}

// TestRecordJava records `java App` with no option given to the JVM:
// pprof adds HotSpot's perf map switches to JAVA_TOOL_OPTIONS, and the
// Java methods come out named from the perf map the JVM wrote at its
// exit.
func TestRecordJava(t *testing.T) {
	requireRecord(t)
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	classes := javaApp(t)
	saved := filepath.Join(t.TempDir(), "java.data")
	removeTmpJITFiles(t, recordedPIDs(saved))
	r := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=10000", "-record", "-record_output", saved, "--", java, "-cp", classes, "App", "3000")
	if !strings.Contains(string(r.stderr), "JAVA_TOOL_OPTIONS=") {
		t.Errorf("pprof does not say what it added to JAVA_TOOL_OPTIONS:\n%s", r.stderr)
	}
	// Its time is in the JIT code of App.hot and of the JDK's sort
	// (java.util.DualPivotQuicksort, or Arrays.sort where it is
	// inlined), which sortWork calls.
	requireShares(t, r, 1, "App.hot", "App.sortWork")
	requireShares(t, r, 30, "java.util.")
	// The perf map the JVM wrote because pprof asked it to is moved out
	// of /tmp, beside the recording.
	for _, pid := range recordedPIDs(saved)() {
		if _, err := os.Stat(fmt.Sprintf("/tmp/perf-%d.map", pid)); err == nil {
			t.Errorf("/tmp/perf-%d.map is still there", pid)
		}
	}
	if maps, _ := filepath.Glob(filepath.Join(saved+".jit", "perf-*.map")); len(maps) == 0 {
		t.Errorf("%s.jit holds %q, want the JVM's perf map", saved, dirFiles(t, saved+".jit"))
	}
}

// TestRecordJavaAttached attaches to a running JVM started with no perf
// option: at the end of the recording pprof has it write its perf map
// (Compiler.perfmap, as jcmd sends it), which names its hot methods.
func TestRecordJavaAttached(t *testing.T) {
	requireRecord(t)
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	classes := javaApp(t)
	cmd := exec.Command(java, "-cp", classes, "-XX:+PreserveFramePointer", "App", "60000")
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	removeTmpJITFiles(t, func() []uint32 { return []uint32{uint32(cmd.Process.Pid)} })
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	time.Sleep(3 * time.Second) // started, and hot() compiled
	r := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=10000", "-record", "-pid", fmt.Sprint(cmd.Process.Pid), "-seconds", "2")
	if !strings.Contains(string(r.stderr), "wrote its perf map (Compiler.perfmap)") {
		t.Errorf("pprof does not say the JVM wrote its perf map:\n%s", r.stderr)
	}
	requireShares(t, r, 1, "App.hot", "App.sortWork")
	requireShares(t, r, 30, "java.util.")
}

// mcjitHost returns the MCJIT host of testdata/mcjit and its bitcode:
// the fresh run ./test.sh made, else one built here.
func mcjitHost(t *testing.T) (bin string, bitcode []string) {
	t.Helper()
	dir := os.Getenv("JITPPROF_FRESH_MCJIT")
	if dir == "" {
		if testenv.InCI() {
			t.Fatal("JITPPROF_FRESH_MCJIT is not set: under CI, ./test.sh builds the MCJIT host")
		}
		testenv.Tool(t, "clang-14", "clang-14")
		testenv.Tool(t, "llvm-config-14", "llvm-14-dev")
		dir = t.TempDir()
		script := filepath.Join(testenv.RepoRoot(t), "testdata", "mcjit", "generate.sh")
		if out, err := exec.Command(script, "--build-only", dir).CombinedOutput(); err != nil {
			t.Fatalf("generate.sh --build-only: %v\n%s", err, out)
		}
	}
	return filepath.Join(dir, "bin", "jit_host"), []string{filepath.Join(dir, "build", "workload1.bc"), filepath.Join(dir, "build", "workload2.bc")}
}

// TestRecordMCJITWithoutListener records the MCJIT host run without its
// dump listener (--no-dump): nothing writes its JIT objects, which pprof
// copies out of it through the GDB JIT interface as it exits; its JIT
// functions come out named with their file and line.
func TestRecordMCJITWithoutListener(t *testing.T) {
	requireRecord(t)
	bin, bitcode := mcjitHost(t)
	out := t.TempDir()
	args := append([]string{"-top", "-lines", "-nodecount=10000", "-record", "--", bin, "--no-dump", "--out", out, "--seconds", "2", "--threads", "2"}, bitcode...)
	r := runPProf(t, t.TempDir(), nil, args...)
	if !regexp.MustCompile(`-record: 2 LLVM JIT objects copied from pid \d+ at its exit`).Match(r.stderr) {
		t.Errorf("pprof does not say it copied the host's 2 JIT objects:\n%s", r.stderr)
	}
	if dumped, _ := filepath.Glob(filepath.Join(out, "jit", "*")); len(dumped) != 0 {
		t.Fatalf("the host dumped %q: not a test of a host without its listener", dumped)
	}
	got := sharesOf(string(r.stdout), "jit_sort_records", "jit_tree_sum", "horner")
	for _, f := range []string{"jit_sort_records", "jit_tree_sum", "horner"} {
		if got[f] < 1 {
			t.Errorf("%s has %.2f%% of the samples:\n%s", f, got[f], r.stdout)
		}
	}
	if !regexp.MustCompile(`jit_sort_records \S*workload\.c:\d+`).Match(r.stdout) {
		t.Errorf("the JIT functions have no file:line:\n%s", r.stdout)
	}
}
