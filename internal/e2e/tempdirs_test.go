package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/perftest"
)

// TestJITPidSnapshotRemovedOnSignal: pprof -http serves until it is
// killed; with -jit_pid it holds a snapshot of the process's JIT files in
// a temporary directory, which SIGINT and SIGTERM must not leave behind.
// pprof removes it, then dies of the signal (its parent sees it so).
func TestJITPidSnapshotRemovedOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			tmp, live := filepath.Join(dir, "tmp"), filepath.Join(dir, "live")
			for _, d := range []string{tmp, live} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// A live process whose runtime wrote a jitdump into its
			// current directory, as V8 does.
			if err := os.WriteFile(filepath.Join(live, "template"), perftest.JITDump(1, 1), 0o644); err != nil {
				t.Fatal(err)
			}
			proc := exec.Command("sh", "-c", `cp template jit-$$.dump && echo ready && exec sleep 120`)
			proc.Dir = live
			out, _ := proc.StdoutPipe()
			if err := proc.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proc.Process.Kill(); proc.Wait() })
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the live process: %q", line)
			}
			data := filepath.Join(dir, "perf.data")
			if err := os.WriteFile(data, perftest.Good(), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := pprofCmd(t, dir, []string{"TMPDIR=" + tmp}, "-http=127.0.0.1:", "-no_browser", "-jit_pid", strconv.Itoa(proc.Process.Pid), data)
			stderr, _ := cmd.StderrPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			serving := make(chan bool, 1)
			var said strings.Builder
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					said.WriteString(sc.Text() + "\n")
					if strings.HasPrefix(sc.Text(), "Serving web UI on ") {
						serving <- true
					}
				}
				io.Copy(io.Discard, stderr)
			}()
			select {
			case <-serving:
			case <-time.After(60 * time.Second):
				t.Fatalf("pprof -http did not serve")
			}
			snaps, _ := filepath.Glob(filepath.Join(tmp, "pprof-jit-*"))
			if len(snaps) != 1 {
				t.Fatalf("snapshots %q, want one while serving", snaps)
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("pprof did not end on %v", sig)
			}
			if ee, ok := err.(*exec.ExitError); !ok || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != sig {
				t.Errorf("pprof ended with %v, want killed by %v", err, sig)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
}
