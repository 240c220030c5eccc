package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The command's own tests. The end-to-end tests, on real profiles and
// programs, are in internal/e2e.

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

// TestUsageListsPPROF_JIT_DIR checks that -h lists jitpprof's
// environment variables in upstream's "Environment Variables" list, just
// before its last line: if upstream's wording changes, driver/upstream.go
// must follow (driver.TestUpstreamUsage says so first).
func TestUsageListsPPROF_JIT_DIR(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-h")
	cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), runAsPProf+"=1", "HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run() // -h exits 2, as upstream's
	s := out.String()
	env := strings.Index(s, "  Environment Variables:\n")
	jit := strings.Index(s, "   PPROF_JIT_DIR ")
	obj := strings.Index(s, "   PPROF_OBJTOOL ")
	win := strings.Index(s, "   * On Windows")
	if env < 0 || jit < env || obj < jit || win < obj {
		t.Errorf("-h does not list PPROF_JIT_DIR and PPROF_OBJTOOL among the environment variables:\n%s", s)
	}
}
