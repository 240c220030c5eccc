//go:build linux

package record

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/testenv"
	"golang.org/x/sys/unix"
)

// busyLoop is a shell command that computes for a while (about a
// second of CPU time, with dash).
const busyLoop = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"

// requireRecording skips the test (fails it under CI) unless this user
// may sample its own processes.
func requireRecording(t *testing.T) {
	t.Helper()
	a := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	a.Size = uint32(unixAttrSize)
	fd, err := unix.PerfEventOpen(&a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		testenv.Missing(t, "the permission to use perf events ("+err.Error()+")", "run as root, or sudo sysctl kernel.perf_event_paranoid=2")
	}
	unix.Close(fd)
}

// unixAttrSize is the size of perf_event_attr as x/sys/unix has it.
var unixAttrSize = len(encodeAttr(&unix.PerfEventAttr{}))

// recorded is a recording made by a test, read back.
type recorded struct {
	res  *Result
	file *perfdata.File
	path string
	logs []string
}

// recordT records o into a file of the test's and opens it with package
// perfdata; Record's error is returned, the file opened only without
// one.
func recordT(t *testing.T, o Options) (*recorded, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "perf.data")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rec := &recorded{path: path}
	var mu sync.Mutex
	o.Output = f
	o.Log = func(s string) {
		mu.Lock()
		rec.logs = append(rec.logs, s)
		mu.Unlock()
	}
	rec.res, err = Record(o)
	if err != nil {
		return rec, err
	}
	st, _ := f.Stat()
	if rec.file, err = perfdata.Open(f, st.Size(), path); err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	return rec, nil
}

// summary is what a recording's records say.
type summary struct {
	samples  map[uint32]int // by pid
	comms    map[uint32][]string
	files    map[uint32][]string // executable mappings, by pid; -1 the kernel's
	types    map[uint32]int      // records by type
	minTime  uint64
	maxTime  uint64
	withRegs int // samples with user registers and stack
}

func summarize(t *testing.T, f *perfdata.File) summary {
	t.Helper()
	s := summary{samples: map[uint32]int{}, comms: map[uint32][]string{}, files: map[uint32][]string{}, types: map[uint32]int{}}
	err := f.Records(func(r *perfdata.Record) bool {
		s.types[r.Type]++
		switch r.Type {
		case perfdata.RecordSample:
			s.samples[r.PID]++
			if s.minTime == 0 || r.Time < s.minTime {
				s.minTime = r.Time
			}
			s.maxTime = max(s.maxTime, r.Time)
			if len(r.RegsUser) > 0 && len(r.StackUser) > 0 {
				s.withRegs++
			}
		case perfdata.RecordComm:
			s.comms[r.PID] = append(s.comms[r.PID], r.Comm)
		case perfdata.RecordMMAP, perfdata.RecordMMAP2:
			if r.Prot&unix.PROT_EXEC != 0 || r.Type == perfdata.RecordMMAP {
				s.files[r.PID] = append(s.files[r.PID], r.Filename)
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordCommand records a shell that computes, then starts ls: its
// samples, its command and mappings from before the recording (the
// shell's, synthesized at its exec stop), those of the process it
// starts, all timed on CLOCK_MONOTONIC within the test's own readings of
// that clock; perf report reads the file and counts the same samples.
func TestRecordCommand(t *testing.T) {
	requireRecording(t)
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	before := uint64(ts.Nano())
	rec, err := recordT(t, Options{Command: []string{"sh", "-c", busyLoop + "; ls / >/dev/null"}, CmdLine: []string{"pprof", "-record"}})
	if err != nil {
		t.Fatal(err)
	}
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	after := uint64(ts.Nano())
	pid := uint32(rec.res.PIDs[0])
	s := summarize(t, rec.file)
	if s.samples[pid] < 50 || rec.res.Samples != int64(s.types[perfdata.RecordSample]) {
		t.Errorf("%d samples of the shell, %d in all; Result says %d", s.samples[pid], s.types[perfdata.RecordSample], rec.res.Samples)
	}
	if s.minTime < before || s.maxTime > after {
		t.Errorf("sample times [%d, %d] outside the CLOCK_MONOTONIC readings around the recording [%d, %d]", s.minTime, s.maxTime, before, after)
	}
	if !slices.Contains(s.comms[pid], "sh") || !slices.ContainsFunc(s.files[pid], func(f string) bool {
		return strings.HasSuffix(f, "/dash") || strings.HasSuffix(f, "/sh") || strings.HasSuffix(f, "/bash")
	}) {
		t.Errorf("the shell's command and program: %q, %q", s.comms[pid], s.files[pid])
	}
	ls := false
	for p, cs := range s.comms {
		if p != pid && slices.Contains(cs, "ls") && slices.ContainsFunc(s.files[p], func(f string) bool { return strings.HasSuffix(f, "/ls") }) {
			ls = true
		}
	}
	if !ls {
		t.Errorf("the ls the shell started is not recorded: commands %v", s.comms)
	}
	if a := rec.file.Attrs[0]; !a.UseClockID || a.ClockID != unix.CLOCK_MONOTONIC || a.Name != "cpu-clock" {
		t.Errorf("event %+v: want cpu-clock on CLOCK_MONOTONIC", a)
	}
	if rec.res.Exit == nil || rec.res.Exit.Code != 0 || rec.res.Exit.Ended {
		t.Errorf("exit: got %v, want status 0", rec.res.Exit)
	}
	if rec.file.BuildIDs["/usr/bin/ls"] == nil && rec.file.BuildIDs["/bin/ls"] == nil {
		t.Errorf("no build ID for ls: %v", rec.file.BuildIDs)
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		return
	}
	out, err := exec.Command(perf, "script", "-i", rec.path, "-F", "pid").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	if n := strings.Count(string(out), "\n"); n != int(rec.res.Samples) {
		t.Errorf("perf script lists %d samples, the recording %d", n, rec.res.Samples)
	}
}

// TestRecordExitStatus checks how a command's end is reported, and the
// shell's statuses for commands that cannot run.
func TestRecordExitStatus(t *testing.T) {
	requireRecording(t)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "data.txt")
	os.WriteFile(notExec, []byte("not a program"), 0o644)
	for _, tc := range []struct {
		name    string
		command []string
		code    int
		signal  syscall.Signal
		err     int // the CommandError's status, or 0 for none
	}{
		{name: "success", command: []string{"true"}},
		{name: "status", command: []string{"sh", "-c", "exit 3"}, code: 3},
		{name: "killed", command: []string{"sh", "-c", "kill -TERM $$"}, code: 143, signal: syscall.SIGTERM},
		{name: "not found", command: []string{"jitpprof-no-such-command"}, err: 127},
		{name: "no such path", command: []string{filepath.Join(dir, "missing")}, err: 127},
		{name: "not executable", command: []string{notExec}, err: 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := recordT(t, Options{Command: tc.command})
			var ce *CommandError
			if tc.err != 0 {
				if !errors.As(err, &ce) || ce.Status != tc.err {
					t.Fatalf("got %v, want a command error with status %d", err, tc.err)
				}
				if tc.err == 127 && err.Error() != tc.command[0]+": command not found" {
					t.Errorf("message %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e := rec.res.Exit; e == nil || e.Code != tc.code || e.Signal != tc.signal || e.Ended {
				t.Errorf("got %+v, want status %d, signal %v", e, tc.code, tc.signal)
			}
		})
	}
}

// TestRecordEndsCommand ends a recording by its duration, and by a
// signal: the command is sent SIGTERM, or, one that ignores it, SIGKILL
// on a second signal; the recording is complete either way.
func TestRecordEndsCommand(t *testing.T) {
	requireRecording(t)
	t.Run("duration", func(t *testing.T) {
		start := time.Now()
		rec, err := recordT(t, Options{Command: []string{"sleep", "30"}, Duration: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if e := rec.res.Exit; e == nil || !e.Ended || e.Signal != syscall.SIGTERM {
			t.Errorf("exit %+v, want ended by SIGTERM", e)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		summarize(t, rec.file)
	})
	t.Run("signals", func(t *testing.T) {
		// Signals to the test's own process, caught by Record only,
		// once the command ignores SIGTERM.
		ready := filepath.Join(t.TempDir(), "ready")
		go func() {
			for i := 0; i < 1000; i++ {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			time.Sleep(500 * time.Millisecond)
			syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		}()
		rec, err := recordT(t, Options{Command: []string{"sh", "-c", "trap '' TERM; touch " + ready + "; exec sleep 30"}, Signals: []os.Signal{syscall.SIGUSR1}})
		if err != nil {
			t.Fatal(err)
		}
		if e := rec.res.Exit; e == nil || !e.Ended || e.Signal != syscall.SIGKILL {
			t.Errorf("exit %+v, want ended by SIGKILL after SIGTERM was ignored", e)
		}
		summarize(t, rec.file)
	})
}

// TestHoldAtExit keeps a command traced: a signal it sends itself
// reaches it (its trap sets the exit status), and at its exit it is
// stopped, its memory still readable, when the hold is called.
func TestHoldAtExit(t *testing.T) {
	requireRecording(t)
	var state, maps string
	// The shell execs another: the hold follows the exec (a SIGTRAP would
	// end it).
	rec, err := recordT(t, Options{Command: []string{"sh", "-c", "exec sh -c \"trap 'exit 7' USR1; kill -USR1 \\$\\$; sleep 1\""},
		HoldAtExit: func(pid int) error {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			for _, line := range strings.Split(string(b), "\n") {
				if s, ok := strings.CutPrefix(line, "State:"); ok {
					state = strings.TrimSpace(s)
				}
			}
			m, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
			maps = string(m)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if e := rec.res.Exit; e == nil || e.Code != 7 {
		t.Errorf("exit %+v, want status 7 from the trap of the signal passed on", e)
	}
	if !strings.HasPrefix(state, "t") || !strings.Contains(maps, "r-xp") {
		t.Errorf("at the hold: state %q, maps %d bytes; want a tracing stop and the mappings", state, len(maps))
	}
}

// TestRecordAttach attaches to a running process for a second: its
// samples, its command and mappings synthesized from /proc; it runs on,
// neither stopped nor traced. A process that ends during the recording
// ends it; one that does not exist is an error.
func TestRecordAttach(t *testing.T) {
	requireRecording(t)
	// Computing until killed: a loop of a fixed count ended within the
	// second on an idle machine.
	cmd := exec.Command("sh", "-c", "i=0; while :; do i=$((i+1)); done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	rec, err := recordT(t, Options{PIDs: []int{pid}, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(t, rec.file)
	if s.samples[uint32(pid)] < 50 || !slices.Contains(s.comms[uint32(pid)], "sh") || len(s.files[uint32(pid)]) < 3 {
		t.Errorf("%d samples, commands %q, files %q", s.samples[uint32(pid)], s.comms[uint32(pid)], s.files[uint32(pid)])
	}
	if rec.res.Exit != nil {
		t.Errorf("an exit status for a process attached to: %v", rec.res.Exit)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "State:\tR") || !strings.Contains(string(b), "TracerPid:\t0") {
		t.Errorf("the process after the recording:\n%s", b)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := recordT(t, Options{PIDs: []int{pid}, Duration: time.Second}); !errors.Is(err, ErrNoProcess) {
		t.Errorf("attaching to pid %d, which has exited: got %v, want ErrNoProcess", pid, err)
	}

	short := exec.Command("sh", "-c", "sleep 0.5; "+busyLoop)
	if err := short.Start(); err != nil {
		t.Fatal(err)
	}
	go short.Wait()
	start := time.Now()
	rec, err = recordT(t, Options{PIDs: []int{short.Process.Pid}, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 30*time.Second || !slices.ContainsFunc(rec.logs, func(s string) bool { return strings.Contains(s, "exited") }) {
		t.Errorf("a process that exited after a second: the recording took %v, said %q", d, rec.logs)
	}
}

// TestRecordDWARF copies the user registers and stack with every user
// sample.
func TestRecordDWARF(t *testing.T) {
	requireRecording(t)
	rec, err := recordT(t, Options{Command: []string{"sh", "-c", busyLoop}, CallGraph: DWARF, StackBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(t, rec.file)
	n := s.types[perfdata.RecordSample]
	if n < 50 || s.withRegs < n*9/10 {
		t.Errorf("%d of %d samples have user registers and stack", s.withRegs, n)
	}
	if a := rec.file.Attrs[0]; a.RegsUser != sampleRegsUser["amd64"] && a.RegsUser != sampleRegsUser["arm64"] {
		t.Errorf("registers %#x", a.RegsUser)
	}
}

// TestRecordOffCPU records context switches of a command that sleeps.
func TestRecordOffCPU(t *testing.T) {
	requireRecording(t)
	rec, err := recordT(t, Options{Command: []string{"sh", "-c", "sleep 0.2; " + busyLoop + "; sleep 0.2"}, OffCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(t, rec.file)
	if n := s.types[14]; n < 4 { // PERF_RECORD_SWITCH
		t.Errorf("%d context-switch records", n)
	}
	if rec.res.BlockStacks != (len(rec.file.Attrs) == 2) {
		t.Errorf("BlockStacks %v with %d events", rec.res.BlockStacks, len(rec.file.Attrs))
	}
}
