//go:build linux

package jitsnap

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
	"github.com/jitpprof/pprof/profile"
)

// traceHelperEnv makes the test binary a helper (see TestMain): it runs
// the command in the variable ("sleep 30") under a Tracer, prints
// "traced PID" and waits for it, so that a test can kill the tracer.
const traceHelperEnv = "JITSNAP_TEST_TRACE"

// traceHelper is the helper process's work.
func traceHelper(command string) {
	args := strings.Fields(command)
	tr, err := StartTraced(exec.Command(args[0], args[1:]...), os.DevNull)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("traced %d\n", tr.Pid())
	tr.Wait()
	os.Exit(0)
}

// TestTraceMCJIT runs the MCJIT host to its end under a Tracer, without
// its dump listener (--no-dump): the snapshot taken at its exit holds its
// two JIT objects, with the workload's functions, each symbolized by
// llvm-symbolizer at its symbol's address as that function in
// workload.c; run with the dump listener, the snapshot is byte for byte
// what the listener wrote.
func TestTraceMCJIT(t *testing.T) {
	if testing.Short() && !testenv.InCI() {
		t.Skip("builds and runs an MCJIT host; skipped in -short mode")
	}
	b := buildHost(t)
	run := func(t *testing.T, out string, dump bool) (string, *Exit) {
		args := []string{"--out", out, "--seconds", "0.3", "--threads", "2"}
		if !dump {
			args = append(args, "--no-dump")
		}
		cmd := exec.Command(b.bin, append(args, b.bc...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dir := filepath.Join(t.TempDir(), "snap")
		tr, err := StartTraced(cmd, dir)
		if err != nil {
			t.Fatal(err)
		}
		tr.Resume()
		ex, err := tr.Wait()
		if err != nil || ex.State == nil || ex.State.ExitCode() != 0 {
			t.Fatalf("the host: %v, %v\n%s", err, ex.State, stderr.String())
		}
		if ex.SnapshotErr != nil || ex.Snapshot == nil {
			t.Fatalf("no snapshot at exit: %v", ex.SnapshotErr)
		}
		t.Logf("held %v at exit, %d ptrace stops, %d objects", ex.Held, ex.Stops, len(ex.Snapshot.Written))
		return dir, ex
	}

	t.Run("no dump listener", func(t *testing.T) {
		dir, ex := run(t, t.TempDir(), false)
		if len(ex.Snapshot.Written) != 2 || len(ex.Snapshot.Skipped) != 0 {
			t.Fatalf("got %d objects written, %v skipped; want the host's 2", len(ex.Snapshot.Written), ex.Snapshot.Skipped)
		}
		set, errs := profile.Load([]string{dir})
		if len(errs) != 0 || set.Len() != 2 {
			t.Errorf("profile.Load: %d objects, %v", set.Len(), errs)
		}
		var funcs []string
		for _, o := range ex.Snapshot.Written {
			funcs = append(funcs, checkSymbolized(t, filepath.Join(dir, o.Name+ElfExt))...)
		}
		sort.Strings(funcs)
		for _, want := range []string{"jit_cpu_round", "jit_heap_round"} {
			if !slices.Contains(funcs, want) {
				t.Errorf("the objects define %q, not %s", funcs, want)
			}
		}
	})

	t.Run("same as the dump listener", func(t *testing.T) {
		out := t.TempDir()
		dir, _ := run(t, out, true)
		compareDirs(t, filepath.Join(out, "jit"), dir)
	})
}

// checkSymbolized asks llvm-symbolizer about the address of every
// function symbol of the object at path (its section's load address plus
// its value) and checks that it names that function, in workload.c. It
// returns the functions.
func checkSymbolized(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var addrs []uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) || s.Size == 0 {
			continue
		}
		names = append(names, s.Name)
		addrs = append(addrs, f.Sections[s.Section].Addr+s.Value)
	}
	if len(addrs) == 0 {
		t.Fatalf("%s defines no function", path)
	}
	frames := testenv.LLVMSymbolize(t, path, addrs)
	for i, fr := range frames {
		if len(fr) == 0 {
			t.Errorf("%s: llvm-symbolizer knows nothing at %#x (%s)", path, addrs[i], names[i])
			continue
		}
		outer := fr[len(fr)-1]
		if outer.Func != names[i] || filepath.Base(outer.File) != "workload.c" || outer.Line == 0 {
			t.Errorf("%s: %#x is %s, llvm-symbolizer says %s %s:%d", path, addrs[i], names[i], outer.Func, outer.File, outer.Line)
		}
	}
	return names
}

// TestTraceSignals: the traced command gets its signals (a trap runs),
// its exit status, and a job-control stop of its own does not leave it
// stopped; a program without a JIT is reported as such at its exit.
func TestTraceSignals(t *testing.T) {
	sh := testenv.Tool(t, "sh", "dash")
	for _, tc := range []struct {
		name, script, want string
		code               int
	}{
		{name: "trap", script: `trap 'echo got USR1' USR1; kill -USR1 $$; echo done`, want: "got USR1\ndone\n"},
		{name: "exit status", script: "echo bye; exit 3", want: "bye\n", code: 3},
		{name: "stops itself", script: "kill -STOP $$; echo after", want: "after\n"},
		{name: "ignored signal", script: `trap '' USR2; kill -USR2 $$; echo fine`, want: "fine\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(sh, "-c", tc.script)
			var out bytes.Buffer
			cmd.Stdout = &out
			tr, err := StartTraced(cmd, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ex, err := waitTimeout(t, tr, 20*time.Second)
			if got := ex.State.ExitCode(); got != tc.code || (tc.code == 0) != (err == nil) {
				t.Errorf("exit code %d (%v), want %d", got, err, tc.code)
			}
			if out.String() != tc.want {
				t.Errorf("printed %q, want %q", out.String(), tc.want)
			}
			if !errors.Is(ex.SnapshotErr, ErrNoInterface) {
				t.Errorf("snapshot of sh: %v, want ErrNoInterface", ex.SnapshotErr)
			}
			t.Logf("%d stops", ex.Stops)
		})
	}
}

// waitTimeout waits for the tracer, failing t after d.
func waitTimeout(t *testing.T, tr *Tracer, d time.Duration) (*Exit, error) {
	t.Helper()
	type res struct {
		ex  *Exit
		err error
	}
	c := make(chan res, 1)
	go func() {
		ex, err := tr.Wait()
		c <- res{ex, err}
	}()
	select {
	case r := <-c:
		return r.ex, r.err
	case <-time.After(d):
		syscall.Kill(tr.Pid(), syscall.SIGKILL)
		t.Fatalf("the traced command did not end in %v", d)
	}
	return nil, nil
}

// TestTraceKilled: a command killed from outside, by SIGTERM or SIGKILL,
// stops at its exit all the same, where it is snapshotted (sleep has no
// JIT interface: the snapshot says so, having read its mapped files),
// and ends with that signal.
func TestTraceKilled(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			tr, err := StartTraced(exec.Command("sleep", "30"), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			tr.Resume()
			time.Sleep(50 * time.Millisecond)
			syscall.Kill(tr.Pid(), sig)
			ex, err := waitTimeout(t, tr, 10*time.Second)
			ws, _ := ex.State.Sys().(syscall.WaitStatus)
			if err == nil || !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("got %v (%v), want death by %v", ex.State, err, sig)
			}
			if !errors.Is(ex.SnapshotErr, ErrNoInterface) || !strings.Contains(ex.SnapshotErr.Error(), "/usr/bin/sleep") {
				t.Errorf("snapshot at the exit: got %v, want ErrNoInterface for sleep", ex.SnapshotErr)
			}
		})
	}
}

// TestTraceKilledBeforeResume: a command given up on at its first
// instruction (killed, then waited for) ends without having run.
func TestTraceKilledBeforeResume(t *testing.T) {
	sh := testenv.Tool(t, "sh", "dash")
	cmd := exec.Command(sh, "-c", "echo ran")
	var out bytes.Buffer
	cmd.Stdout = &out
	tr, err := StartTraced(cmd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	ex, err := waitTimeout(t, tr, 10*time.Second)
	if ws, _ := ex.State.Sys().(syscall.WaitStatus); err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("got %v (%v), want death by SIGKILL", ex.State, err)
	}
	if out.Len() != 0 {
		t.Errorf("the command ran: it printed %q", out.String())
	}
}

// TestTraceStartFails: a command that cannot be started is an error,
// as from cmd.Start.
func TestTraceStartFails(t *testing.T) {
	_, err := StartTraced(exec.Command(filepath.Join(t.TempDir(), "missing")), t.TempDir())
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want a not-exist error", err)
	}
}

// TestTracerKilled: when the tracing process dies (SIGKILL), the traced
// command is neither left stopped nor traced: it runs on.
func TestTracerKilled(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(self)
	helper.Env = append(os.Environ(), traceHelperEnv+"=sleep 30")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	var line [64]byte
	n, _ := out.Read(line[:])
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(line[:n]), "traced ")))
	if err != nil {
		t.Fatalf("the helper printed %q", line[:n])
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if tracer := statusField(t, pid, "TracerPid"); tracer != strconv.Itoa(helper.Process.Pid) {
		t.Fatalf("sleep's tracer is %s, want the helper %d", tracer, helper.Process.Pid)
	}
	helper.Process.Kill()
	helper.Wait()
	time.Sleep(100 * time.Millisecond)
	if tracer, state := statusField(t, pid, "TracerPid"), statusField(t, pid, "State"); tracer != "0" || !strings.HasPrefix(state, "S") {
		t.Errorf("after its tracer died, sleep has tracer %s and state %q; want 0 and sleeping", tracer, state)
	}
}

// statusField returns a field of /proc/PID/status.
func statusField(t *testing.T, pid int, name string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return ""
}
