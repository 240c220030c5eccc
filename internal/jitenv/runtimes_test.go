//go:build linux

package jitenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/testenv"
)

// enableDirEnv makes the test binary a helper: it prints what Enable
// did about Node.js for a command in the directory the variable names
// (for TestNodeUnwritableDir, run as another user).
const enableDirEnv = "JITENV_TEST_ENABLE_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(enableDirEnv); dir != "" {
		res := Enable([]string{"node", "app.js"}, nil, dir)
		fmt.Printf("added %q kept %q\n", res.Changes[0].Added, res.Changes[0].Kept)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// skipShort skips a test that runs a runtime in -short mode.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() && !testenv.InCI() {
		t.Skip("runs a JIT runtime; skipped in -short mode")
	}
}

// ran is the output of a command run by run.
type ran struct {
	stdout, stderr string
	pid            int
}

// run runs args in dir with env, for at most two minutes, and fails t
// unless it exits with status 0.
func run(t *testing.T, dir string, env []string, args ...string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := ran{stdout: stdout.String(), stderr: stderr.String()}
	if cmd.Process != nil {
		r.pid = cmd.Process.Pid
	}
	if err != nil {
		t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", args, err, r.stdout, r.stderr)
	}
	return r
}

// removeTmpFiles removes, when t ends, the files the runtime of process
// pid may have written into /tmp.
func removeTmpFiles(t *testing.T, pid int) {
	t.Cleanup(func() {
		for _, f := range []string{"/tmp/perf-%d.map", "/tmp/jit-%d.dump", "/tmp/perfinfo-%d.map"} {
			os.Remove(fmt.Sprintf(f, pid))
		}
	})
}

// readPerfMap returns the names of the perf map of process pid, one
// per line, or fails t.
func readPerfMap(t *testing.T, pid int) string {
	t.Helper()
	path := fmt.Sprintf("/tmp/perf-%d.map", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the runtime wrote no perf map: %v", err)
	}
	var names strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(line, " ", 3); len(f) == 3 {
			names.WriteString(f[2] + "\n")
		}
	}
	return names.String()
}

const nodeWork = `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let x = 0;
const end = Date.now() + 300;
while (Date.now() < end) x += fib(20);
console.log(process.pid, x > 0);
`

// TestNodeRun runs Node.js with the environment Enable returns: it
// writes a jitdump into its current directory that names the script's
// functions with their lines, and Tidy then moves it beside the
// recording and removes V8's log, leaving the directory as it was. The
// user's own choices stand: --no-perf-prof writes nothing, and
// --perf-basic-prof a perf map and no jitdump.
func TestNodeRun(t *testing.T) {
	skipShort(t)
	node := testenv.Tool(t, "node", "nodejs")
	newDir := func(t *testing.T) string {
		dir := t.TempDir()
		testenv.WriteFile(t, filepath.Join(dir, "work.js"), []byte(nodeWork))
		return dir
	}
	pidOf := func(t *testing.T, r ran) int {
		pid, err := strconv.Atoi(strings.Fields(r.stdout + " x")[0])
		if err != nil || !strings.HasSuffix(strings.TrimSpace(r.stdout), "true") {
			t.Fatalf("node printed %q, want its pid and true", r.stdout)
		}
		removeTmpFiles(t, pid)
		return pid
	}

	t.Run("jitdump", func(t *testing.T) {
		dir := newDir(t)
		start := time.Now()
		res := Enable([]string{node, "work.js"}, os.Environ(), dir)
		r := run(t, dir, res.Env, node, "work.js")
		pid := pidOf(t, r)
		dump := filepath.Join(dir, fmt.Sprintf("jit-%d.dump", pid))
		checkNodeJITDump(t, dump, filepath.Join(dir, "work.js"))
		if logs, _ := filepath.Glob(filepath.Join(dir, "isolate-*")); len(logs) > 0 {
			t.Logf("V8 wrote %s too", logs)
		}

		dest := t.TempDir()
		tidied, err := Tidy(dest, []string{dump}, start)
		if err != nil || len(tidied.Left) > 0 {
			t.Fatalf("Tidy: %v, left %v", err, tidied.Left)
		}
		if want := []string{filepath.Join(dest, filepath.Base(dump))}; !slices.Equal(tidied.Moved, want) {
			t.Errorf("Tidy moved %q, want %q", tidied.Moved, want)
		}
		checkNodeJITDump(t, filepath.Join(dest, filepath.Base(dump)), filepath.Join(dir, "work.js"))
		if left, _ := os.ReadDir(dir); len(left) != 1 {
			t.Errorf("after Tidy, the working directory holds %v, want work.js alone", left)
		}
	})

	t.Run("the user's --no-perf-prof", func(t *testing.T) {
		dir := newDir(t)
		env := append(os.Environ(), "NODE_OPTIONS=--no-perf-prof")
		r := run(t, dir, Enable([]string{node, "work.js"}, env, dir).Env, node, "work.js")
		pidOf(t, r)
		if left, _ := os.ReadDir(dir); len(left) != 1 {
			t.Errorf("node wrote %v, want nothing", left)
		}
	})

	t.Run("the user's --perf-basic-prof", func(t *testing.T) {
		dir := newDir(t)
		env := append(os.Environ(), "NODE_OPTIONS=--perf-basic-prof")
		r := run(t, dir, Enable([]string{node, "work.js"}, env, dir).Env, node, "work.js")
		pid := pidOf(t, r)
		if names := readPerfMap(t, pid); !regexp.MustCompile(`(?m)^JS:\*?fib `).MatchString(names) {
			t.Errorf("the perf map does not name fib:\n%.2000s", names)
		}
		if dumps, _ := filepath.Glob(filepath.Join(dir, "jit-*.dump")); len(dumps) > 0 {
			t.Errorf("node wrote %v besides the perf map the user chose", dumps)
		}
	})
}

// checkNodeJITDump checks that the jitdump at path names fib of
// script, and has line tables. (Node 20 writes them for some of its
// baseline code, "^": often for Node's own modules, sometimes for the
// script's functions.)
func checkNodeJITDump(t *testing.T, path, script string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("node wrote no jitdump: %v", err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	d, err := jitdump.Read(f, fi.Size(), path)
	if err != nil {
		t.Fatalf("reading the jitdump: %v", err)
	}
	var fib []string
	withLines, scriptLines := 0, 0
	for i := range d.Code {
		c := d.Code[i]
		if strings.Contains(c.Name, "fib "+script+":1:") {
			fib = append(fib, c.Name)
		}
		if !c.HasLines {
			continue
		}
		withLines++
		ls, err := d.Lines(f, c)
		if err != nil {
			t.Errorf("%s: lines of %s: %v", path, c.Name, err)
		}
		if len(ls) > 0 && ls[0].File == script {
			scriptLines++
		}
	}
	if len(fib) == 0 || withLines == 0 {
		t.Errorf("%s: got %d pieces of code named after fib of %s (%q), %d with lines; want some of each", path, len(fib), script, fib, withLines)
	}
	t.Logf("%s: %d pieces of code, fib's %q; %d with line tables, %d of them of the script", path, len(d.Code), fib, withLines, scriptLines)
}

// TestNodeUnwritableDir: V8's --perf-prof (like --perf-basic-prof)
// implies --log, and where the current directory is not writable, V8
// writes that log to the program's standard output. Enable must not add
// the switch for a command whose directory the user cannot write.
func TestNodeUnwritableDir(t *testing.T) {
	skipShort(t)
	node := testenv.Tool(t, "node", "nodejs")
	dir := t.TempDir()
	script := filepath.Join(dir, "hello.js")
	testenv.WriteFile(t, script, []byte("console.log('hello');\n"))
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// The test's temporary directories are root's, 0700.
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		shared, err := os.MkdirTemp("", "jitenv-ro-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(shared) })
		os.Chmod(shared, 0o755)
		dir = shared
		script = filepath.Join(dir, "hello.js")
		testenv.WriteFile(t, script, []byte("console.log('hello');\n"))
	} else {
		os.Chmod(dir, 0o555)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	start := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}

	// What V8 does.
	out, err := start(append(os.Environ(), "NODE_OPTIONS="+nodeAll), node, script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	t.Logf("node with %s in an unwritable directory printed %d lines on its standard output", nodeAll, strings.Count(string(out), "\n"))
	if string(out) == "hello\n" {
		t.Log("V8 no longer writes its log to standard output")
	}

	// What Enable does, as the user who cannot write there.
	var kept string
	if cred != nil {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(dir, "jitenv.test")
		data, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := start(append(os.Environ(), enableDirEnv+"="+dir), exe).CombinedOutput()
		if err != nil {
			t.Fatalf("running the test binary as nobody: %v\n%s", err, out)
		}
		kept = string(out)
	} else {
		res := Enable([]string{"node", "app.js"}, nil, dir)
		kept = fmt.Sprintf("added %q kept %q\n", res.Changes[0].Added, res.Changes[0].Kept)
	}
	if !strings.HasPrefix(kept, `added "" kept "the working directory is not writable (permission denied)`) {
		t.Errorf("Enable in a directory the user cannot write: %s", kept)
	}
}

// TestJVMRun runs OpenJDK 17 with the environment Enable returns: it
// says it picked up JAVA_TOOL_OPTIONS on its standard error and writes
// /tmp/perf-PID.map at exit, naming the program's methods; the user's
// -XX:-DumpPerfMapAtExit stands.
func TestJVMRun(t *testing.T) {
	skipShort(t)
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	javac := testenv.Tool(t, "javac", "openjdk-17-jdk-headless")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "java", "App.java"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(dir, "App.java"), src)
	run(t, dir, os.Environ(), javac, "App.java")

	t.Run("perf map", func(t *testing.T) {
		res := Enable([]string{java, "App", "300"}, os.Environ(), dir)
		r := run(t, dir, res.Env, java, "-cp", dir, "App", "300")
		removeTmpFiles(t, r.pid)
		if want := "Picked up JAVA_TOOL_OPTIONS: " + jvmAll + "\n"; !strings.HasPrefix(r.stderr, want) {
			t.Errorf("java's standard error: got %q, want it to start with %q", r.stderr, want)
		}
		if names := readPerfMap(t, r.pid); !strings.Contains(names, "int App.hot(int[])") {
			t.Errorf("the perf map does not name App.hot:\n%.2000s", names)
		}
	})

	t.Run("the user's -XX:-DumpPerfMapAtExit", func(t *testing.T) {
		env := append(os.Environ(), "JAVA_TOOL_OPTIONS=-XX:-DumpPerfMapAtExit")
		r := run(t, dir, Enable([]string{java, "App"}, env, dir).Env, java, "-cp", dir, "App", "100")
		removeTmpFiles(t, r.pid)
		if _, err := os.Stat(fmt.Sprintf("/tmp/perf-%d.map", r.pid)); err == nil {
			t.Errorf("the JVM wrote a perf map despite -XX:-DumpPerfMapAtExit")
		}
	})
}

// TestMonoRun runs Mono with the environment Enable returns: it writes
// /tmp/perf-PID.map naming the program's methods.
func TestMonoRun(t *testing.T) {
	skipShort(t)
	mono := testenv.Tool(t, "mono", "mono-runtime")
	mcs := testenv.Tool(t, "mcs", "mono-mcs")
	dir := t.TempDir()
	exe := filepath.Join(dir, "Work.exe")
	run(t, dir, os.Environ(), mcs, "-optimize", "-out:"+exe, filepath.Join(testenv.RepoRoot(t), "testdata", "mono", "Work.cs"))
	r := run(t, dir, Enable([]string{mono, exe}, os.Environ(), dir).Env, mono, exe, "0.2")
	removeTmpFiles(t, r.pid)
	if names := readPerfMap(t, r.pid); !strings.Contains(names, "Work:Hot") {
		t.Errorf("the perf map does not name Work:Hot:\n%.2000s", names)
	}
}

const erlangWork = `-module(w).
-export([main/0]).
fib(N) when N < 2 -> N;
fib(N) -> fib(N-1) + fib(N-2).
main() ->
    io:format("~s ~p~n", [os:getpid(), fib(22) > 0]),
    halt().
`

// TestErlangRun runs erl with the environment Enable returns: OTP 25's
// BEAM writes /tmp/perf-PID.map, naming the module's functions, and
// /tmp/jit-PID.dump.
func TestErlangRun(t *testing.T) {
	skipShort(t)
	erl := testenv.Tool(t, "erl", "erlang-base")
	erlc := testenv.Tool(t, "erlc", "erlang-base")
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "w.erl"), []byte(erlangWork))
	run(t, dir, os.Environ(), erlc, "w.erl")
	res := Enable([]string{erl}, os.Environ(), dir)
	if v, _ := lookup(res.Env, "ERL_AFLAGS"); !strings.HasPrefix(v, "+JPperf true") {
		t.Fatalf("ERL_AFLAGS is %q: %s", v, res.Summary())
	}
	r := run(t, dir, res.Env, erl, "-noshell", "-pa", dir, "-eval", "w:main()")
	pid, err := strconv.Atoi(strings.Fields(r.stdout + " x")[0])
	if err != nil || strings.TrimSpace(r.stdout) != fmt.Sprintf("%d true", pid) {
		t.Fatalf("erl printed %q, want its pid and true", r.stdout)
	}
	removeTmpFiles(t, pid)
	if names := readPerfMap(t, pid); !strings.Contains(names, "w:fib/1") {
		t.Errorf("the perf map does not name w:fib/1:\n%.2000s", names)
	}
	if _, err := os.Stat(fmt.Sprintf("/tmp/jit-%d.dump", pid)); err != nil {
		t.Errorf("no jitdump: %v", err)
	}
}

// TestPythonRun runs CPython with the environment Enable returns: 3.12
// and later write /tmp/perf-PID.map naming the script's functions;
// older ones (Debian 12's 3.11) ignore PYTHONPERFSUPPORT and run as
// before.
func TestPythonRun(t *testing.T) {
	skipShort(t)
	testenv.Tool(t, "python3", "python3")
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "work.py"), []byte("import os, sys\n"+
		"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"+
		"print(os.getpid(), sys.version_info >= (3, 12), fib(18))\n"))
	tried := 0
	for _, name := range []string{"python3", "python3.12", "python3.13", "python3.14"} {
		py, err := exec.LookPath(name)
		if err != nil || exec.Command(py, "-c", "pass").Run() != nil { // pyenv's shims fail for versions not selected
			continue
		}
		tried++
		t.Run(name, func(t *testing.T) {
			r := run(t, dir, Enable([]string{py, "work.py"}, os.Environ(), dir).Env, py, "work.py")
			f := strings.Fields(r.stdout)
			pid, err := strconv.Atoi(f[0])
			if err != nil || len(f) != 3 || f[2] != "2584" {
				t.Fatalf("%s printed %q", py, r.stdout)
			}
			removeTmpFiles(t, pid)
			if f[1] == "False" {
				if _, err := os.Stat(fmt.Sprintf("/tmp/perf-%d.map", pid)); err == nil {
					t.Errorf("%s is older than 3.12 but wrote a perf map", py)
				}
				return
			}
			if names := readPerfMap(t, pid); !strings.Contains(names, "py::fib:"+filepath.Join(dir, "work.py")) {
				t.Errorf("the perf map does not name fib:\n%.2000s", names)
			}
		})
	}
	if tried == 0 {
		t.Fatal("no python3 runs")
	}
}
