package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runAsPProf tells the test binary to be the pprof command: the tests run
// the real command, the way Go's cmd/pprof tests do, without building it.
const runAsPProf = "JITPPROF_TEST_RUN_AS_PPROF"

func TestMain(m *testing.M) {
	if os.Getenv(runAsPProf) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(runTests(m))
}

// runTests runs the tests with perf's build-ID cache in a temporary
// directory, removed when they end. perf record keeps a copy of every
// file it samples in that cache, ~/.debug unless its configuration says
// otherwise (perf ignores $PERF_BUILDID_DIR, which it only sets for the
// scripts it runs): the tests' recordings of Node, the JVM and their
// own binaries left gigabytes there. $PERF_CONFIG names the only
// configuration file perf then reads, so a user's ~/.perfconfig does not
// change what the tests' perf report prints either. Tests that need
// pprof to read a cache still give it one ($PERF_BUILDID_DIR, which
// pprofCmd clears).
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "jitpprof-test-perf-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "perf's build-ID cache for the tests:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "perfconfig")
	if err := os.WriteFile(config, []byte(perfConfig(filepath.Join(dir, "buildid"))), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "perf's build-ID cache for the tests:", err)
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
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(t), runAsPProf+"=1")
	cmd.Env = append(cmd.Env, env...)
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

// TestUsageListsPPROF_JIT_DIR checks that -h lists jitpprof's
// environment variables in upstream's "Environment Variables" list, just
// before its last line: if upstream's wording changes, driver/upstream.go
// must follow (driver.TestUpstreamUsage says so first).
func TestUsageListsPPROF_JIT_DIR(t *testing.T) {
	r := run(pprofCmd(t, t.TempDir(), nil, "-h"))
	out := string(r.stdout) + string(r.stderr)
	env := strings.Index(out, "  Environment Variables:\n")
	jit := strings.Index(out, "   PPROF_JIT_DIR ")
	obj := strings.Index(out, "   PPROF_OBJTOOL ")
	win := strings.Index(out, "   * On Windows")
	if env < 0 || jit < env || obj < jit || win < obj {
		t.Errorf("-h does not list PPROF_JIT_DIR and PPROF_OBJTOOL among the environment variables:\n%s", out)
	}
}
