package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
)

// TestUnmodifiedMCJITProcess profiles a real MCJIT host that registers
// no dump listener of ours: only LLVM's own GDB registration knows its
// JIT objects. While it runs, the objects are snapshotted with the
// jitsnap command and with pprof -jit_pid, and the profiles it wrote
// symbolize, either way, exactly as they do with the objects the dump
// listener writes for the same code (it loads at fixed addresses).
func TestUnmodifiedMCJITProcess(t *testing.T) {
	fresh := os.Getenv("JITPPROF_FRESH_MCJIT")
	if fresh == "" {
		testenv.Missing(t, "a freshly built MCJIT host (JITPPROF_FRESH_MCJIT)", "run ./test.sh, which builds it with testdata/mcjit/generate.sh")
	}
	fr := mcjitRun{name: "fresh", dir: fresh}
	out := t.TempDir()
	host := exec.Command(fr.path("bin/jit_host"), "--out", out, "--no-dump", "--hold", "--seconds", "1",
		fr.path("build/workload1.bc"), fr.path("build/workload2.bc"))
	stdin, err := host.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var hostErr bytes.Buffer
	host.Stderr = &hostErr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // end of input: the host exits
		if err := host.Wait(); err != nil {
			t.Errorf("jit_host: %v\n%s", err, hostErr.Bytes())
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`^READY (\d+)$`).FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var pid string
	select {
	case pid = <-ready:
	case <-time.After(2 * time.Minute):
		t.Fatalf("jit_host did not get ready:\n%s", hostErr.Bytes())
	}
	if _, err := os.Stat(filepath.Join(out, "jit")); err == nil {
		t.Fatal("jit_host --no-dump wrote JIT objects; the test needs a host without our listener")
	}

	// jitsnap -pid PID -o DIR, the command users run.
	jitsnapBin := filepath.Join(t.TempDir(), "jitsnap")
	if b, err := exec.Command("go", "build", "-o", jitsnapBin, "github.com/jitpprof/pprof/cmd/jitsnap").CombinedOutput(); err != nil {
		t.Fatalf("building jitsnap: %v\n%s", err, b)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	if b, err := exec.Command(jitsnapBin, "-pid", pid, "-o", snap).CombinedOutput(); err != nil {
		t.Fatalf("jitsnap -pid %s: %v\n%s", pid, err, b)
	}

	for _, prof := range []string{"cpu.prof", "heap.prof"} {
		profile := filepath.Join(out, prof)
		report := func(jit ...string) result {
			args := append(append(jit, "-traces", "-lines"), profile)
			return runPProf(t, t.TempDir(), fr.env(), args...)
		}
		listener := report("-jit_dir", fr.jitDir())
		for _, c := range []struct {
			name string
			jit  []string
			says string
		}{
			{name: "jitsnap", jit: []string{"-jit_dir", snap}, says: "JIT objects: using 2 from " + snap},
			{name: "-jit_pid", jit: []string{"-jit_pid", pid}, says: fmt.Sprintf("-jit_pid: 2 JIT objects copied from process %s", pid)},
		} {
			got := report(c.jit...)
			if !bytes.Equal(got.stdout, listener.stdout) {
				t.Errorf("%s with the %s snapshot differs from the listener's dump:\n got: %.2000s\nwant: %.2000s", prof, c.name, got.stdout, listener.stdout)
			}
			if !strings.Contains(string(got.stderr), c.says) {
				t.Errorf("%s: stderr %q lacks %q", c.name, got.stderr, c.says)
			}
		}
		if !regexp.MustCompile(`jit_\w+ /proc/self/cwd/testdata/mcjit/workload\.c:\d+`).Match(listener.stdout) {
			t.Errorf("%s: the JIT functions are not symbolized with file:line:\n%.2000s", prof, listener.stdout)
		}
	}
}
