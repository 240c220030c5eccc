package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataContainerJIT records, from outside, a Node.js process
// running in its own PID and mount namespaces (a container, made with
// unshare: PID 1 there, its /tmp its own), as perf record -p does on a
// server, with its JIT writing a perf map (--perf-basic-prof) or a
// jitdump (--perf-prof) into that /tmp under its PID there
// (/tmp/perf-1.map). While the process runs, pprof finds the file under
// /proc/PID/root, as perf report (and perf inject --jit, for the jitdump)
// does: the JS functions' shares match perf report's within 0.5
// percentage point. Once the process has ended, its JIT code is left
// unsymbolized with the note saying so.
func TestPerfDataContainerJIT(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	node := testenv.Tool(t, "node", "nodejs")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root (unshare makes namespaces)", "run the tests as root, as ./test.sh under CI does")
	}
	work := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	for _, tc := range []struct {
		name, flag, file string
		fns              []string // compared with perf report (fib's share at least 2%)
		gone             string   // the note once the process ended
	}{
		// main's share depends on when V8 optimizes it (0.2% to 19%).
		{"perf map", "--perf-basic-prof", "perf-1.map", []string{"fib", "sieve", "main", "strwork"}, "anonymous executable memory"},
		// perf inject names no more than fib: V8 writes main's
		// on-stack-replaced code to the perf map only.
		{"jitdump", "--perf-prof", "jit-1.dump", []string{"fib"}, "the recording's JIT file /tmp/jit-1.dump is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 6 s of work, then 20 s more alive; killed when done. The
			// script comes on standard input: the checkout may be under
			// /tmp, which the container's own hides.
			script := fmt.Sprintf("mount -t tmpfs tmpfs /tmp && cd /tmp && exec %s %s - 6000 20000", node, tc.flag)
			cmd := exec.Command(unshare, "--pid", "--fork", "--mount", "--mount-proc", "--", "sh", "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			in, err := os.Open(work)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			pid := containerNode(t, cmd, tc.file, &out)

			dir := t.TempDir()
			data := filepath.Join(dir, "perf.data")
			perfRecord(t, perf, "-k", "1", "-g", "-p", strconv.Itoa(pid), "-o", data, "--", "sleep", "1.5")
			reported, global, env := data, []string(nil), []string(nil)
			if tc.file == "jit-1.dump" {
				reported, global, env = perfInject(t, perf, data)
			}
			want, report := perfReportOf(t, perf, reported, global...)
			if want["fib"] < 2 {
				t.Fatalf("perf report does not name fib (%.2f%%):\n%s", want["fib"], report)
			}
			r := runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
			checkSharesOf(t, topShares(string(r.stdout)), want, tc.fns...)
			if reported != data {
				checkInjected(t, dir, reported, env, topShares(string(r.stdout)), tc.fns...)
			}
			if strings.Contains(string(r.stderr), "anonymous executable memory") {
				t.Errorf("JIT code left unsymbolized:\n%s", r.stderr)
			}

			// The process ended: its files are out of reach.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			r = runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
			if got := topShares(string(r.stdout)); got["fib"] != 0 || !strings.Contains(string(r.stderr), tc.gone) {
				t.Errorf("after the process ended: fib %.2f%%, want 0 and a note (%q):\n%s", got["fib"], tc.gone, r.stderr)
			}
		})
	}
}

// containerNode returns the PID, outside, of the node process unshare
// (cmd) runs, once its JIT has written file into its /tmp with fib in
// it; out is what the processes printed.
func containerNode(t *testing.T, cmd *exec.Cmd, file string, out *bytes.Buffer) int {
	t.Helper()
	pid := cmd.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			child, _ := strconv.Atoi(f)
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
			jit, _ := os.ReadFile(fmt.Sprintf("/proc/%d/root/tmp/%s", child, file))
			if strings.TrimSpace(string(comm)) == "node" && strings.Contains(string(jit), "fib") {
				return child
			}
		}
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	cmd.Wait()
	t.Fatalf("no node process with fib in its /tmp/%s after 20 s; it printed:\n%s", file, out)
	return 0
}
