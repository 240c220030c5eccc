package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	os.Exit(m.Run())
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
// jitpprof read (and llvm-symbolizer's DEBUGINFOD_ ones), and with HOME
// and PPROF_TMPDIR in a temporary directory.
func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PPROF_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "PERF_BUILDID_DIR=") || strings.HasPrefix(kv, "DEBUGINFOD_") {
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
