package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	if testing.Short() {
		fmt.Println("e2e: end-to-end tests skipped under -short")
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
