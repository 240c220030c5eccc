package driver

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTempDirsOnSignal: a process holding temporary directories that is
// interrupted or terminated removes them, then ends with the signal (its
// parent sees it killed by it); one that ends normally removes them too.
// The process is this test binary, run as TestTempDirsHelper.
func TestTempDirsOnSignal(t *testing.T) {
	if os.Getenv("TEMPDIRS_HELPER") != "" {
		t.Skip("helper")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, 0} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "snap")
			cmd := exec.Command(os.Args[0], "-test.run=^TestTempDirsHelper$")
			cmd.Env = append(os.Environ(), "TEMPDIRS_HELPER="+dir)
			if sig == 0 {
				cmd.Env = append(cmd.Env, "TEMPDIRS_HELPER_END=1")
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if !strings.HasPrefix(line, "ready") {
				cmd.Process.Kill()
				t.Fatalf("helper: %q", line)
			}
			if sig != 0 {
				cmd.Process.Signal(sig)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the helper did not end")
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the directory is still there: %v", err)
			}
			if sig == 0 {
				if err != nil {
					t.Errorf("normal end: %v", err)
				}
				return
			}
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("wait: %v, want the signal", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("ended by %v, want killed by %v", ws, sig)
			}
		})
	}
}

// TestTempDirsHelper holds the directory $TEMPDIRS_HELPER, says so, and
// waits for a signal, or with $TEMPDIRS_HELPER_END ends normally.
func TestTempDirsHelper(t *testing.T) {
	dir := os.Getenv("TEMPDIRS_HELPER")
	if dir == "" {
		t.Skip("run by TestTempDirsOnSignal")
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o600)
	var td tempDirs
	td.add(dir)
	os.Stdout.WriteString("ready\n")
	if os.Getenv("TEMPDIRS_HELPER_END") != "" {
		td.close()
		return
	}
	time.Sleep(15 * time.Second)
	t.Fatal("no signal came")
}
