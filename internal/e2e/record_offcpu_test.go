package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// offCPUTimes are what offcpu.c measures itself, in nanoseconds.
type offCPUTimes struct {
	computeWall, sleepWall, computeCPU int64
}

// parseOffCPUTimes reads offcpu.c's last line of output.
func parseOffCPUTimes(t *testing.T, out []byte) offCPUTimes {
	t.Helper()
	f := strings.Fields(string(out))
	if len(f) < 3 {
		t.Fatalf("offcpu printed %q", out)
	}
	var v [3]int64
	for i, s := range f[len(f)-3:] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("offcpu printed %q", out)
		}
		v[i] = n
	}
	return offCPUTimes{v[0], v[1], v[2]}
}

// near fails the test unless got is within 15% and 30 ms of want.
func near(t *testing.T, what string, got, want int64) {
	t.Helper()
	d := got - want
	if d < 0 {
		d = -d
	}
	if d > want*15/100+30_000_000 {
		t.Errorf("%s: %.1f ms in the profile, %.1f ms measured by the program", what, float64(got)/1e6, float64(want)/1e6)
	}
}

// protoFromFile parses the profile pprof wrote to path.
func protoFromFile(t *testing.T, path string, stderr []byte) *profile.Profile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pprof wrote no profile: %v\n%s", err, stderr)
	}
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRecordOffCPU records offcpu.c, which computes for 30 ms and sleeps
// for 60 ms ten times and measures both itself, with -offcpu, as root in
// a mount namespace of its own where tracefs is mounted (so that pprof
// records the sched:sched_switch tracepoint whatever the machine's
// mounts): the CPU time of compute_phase, its wall time (computing, and
// waiting for a CPU when preempted) and sleep_phase's wall and off-CPU
// time are what the program measured; the stacks where it blocked are
// sched_switch's, which pprof says. (TestRecordUnprivileged checks the
// totals of a recording without the tracepoint.)
func TestRecordOffCPU(t *testing.T) {
	requireRecord(t)
	requireRoot(t)
	unshare := testenv.Tool(t, "unshare", "util-linux")
	dir := t.TempDir()
	prog := buildC(t, dir, "record/offcpu.c", "offcpu", "-O1", "-fno-omit-frame-pointer")
	out := filepath.Join(dir, "offcpu.pb.gz")
	tracefs := filepath.Join(dir, "tracefs")
	os.Mkdir(tracefs, 0o755)
	// With DWARF stacks: with frame pointers, the caller of the C
	// library's nanosleep, which keeps none, is lost.
	cmd := pprofCmd(t, dir, nil, "-proto", "-output", out, "-record", "-offcpu", "-call_graph", "dwarf", "--", prog, "10")
	cmd.Args = append([]string{unshare, "--mount", "--propagation", "private", "sh", "-c", `mount -t tracefs nodev "$0" && exec "$@"`, tracefs}, cmd.Args...)
	cmd.Path = unshare
	r := run(cmd)
	if r.err != nil {
		t.Fatalf("pprof: %v\n%s", r.err, r.stderr)
	}
	m := parseOffCPUTimes(t, r.stdout)
	p := protoFromFile(t, out, r.stderr)
	if !strings.Contains(string(r.stderr), "where the thread left the CPU (sched:sched_switch)\n") {
		t.Errorf("pprof does not say the stacks are sched_switch's:\n%s", r.stderr)
	}
	near(t, "cpu-clock of compute_phase", valueOf(t, p, "cpu-clock", "compute_phase"), m.computeCPU)
	near(t, "wall of compute_phase", valueOf(t, p, "wall", "compute_phase"), m.computeWall)
	near(t, "wall of sleep_phase", valueOf(t, p, "wall", "sleep_phase"), m.sleepWall)
	near(t, "offcpu of sleep_phase", valueOf(t, p, "offcpu", "sleep_phase"), m.sleepWall)
	if p.DefaultSampleType != "cpu-clock" {
		t.Errorf("default sample type %q", p.DefaultSampleType)
	}
}

// unprivileged returns a command running this repository's pprof as the
// user nobody (setpriv), from a copy of the test binary nobody can run,
// in dir, which it can read: nobody may record its own processes' user
// space where kernel.perf_event_paranoid is 2 or less.
func unprivileged(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	requireRoot(t)
	setpriv := testenv.Tool(t, "setpriv", "util-linux")
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "pprof") // pprofBin's directory is the tests' own (0700)
	if _, err := os.Stat(bin); err != nil {
		src, err := os.Open(pprofBin)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		dst.Close()
	}
	home := filepath.Join(dir, "home")
	os.Mkdir(home, 0o755)
	os.Chown(home, 65534, 65534)
	cmd := pprofCmd(t, dir, []string{"HOME=" + home}, args...)
	cmd.Args = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)
	cmd.Path = setpriv
	return cmd
}

// TestRecordUnprivileged records as the user nobody: where
// kernel.perf_event_paranoid allows it (2 or less), a profile of user
// space, which pprof says leaves kernel frames out; else one message
// that names the setting and CAP_PERFMON. Attaching to root's process is
// refused with a message that says why. -offcpu without access to
// tracefs gives off-CPU intervals the stacks of the threads' last
// samples, says so, and its totals are what offcpu.c measured.
func TestRecordUnprivileged(t *testing.T) {
	requireRecord(t)
	requireRoot(t)
	dir := t.TempDir()
	work := buildWork(t, dir)
	r := run(unprivileged(t, dir, "-top", "-record", "--", work, "threads", "30"))
	b, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if paranoid := strings.TrimSpace(string(b)); paranoid > "2" {
		if r.exitCode() != 2 || !strings.Contains(string(r.stderr), "kernel.perf_event_paranoid is "+paranoid) || !strings.Contains(string(r.stderr), "CAP_PERFMON") {
			t.Errorf("status %d, stderr:\n%s", r.exitCode(), r.stderr)
		}
		return
	}
	if r.err != nil {
		t.Fatalf("pprof as nobody: %v\n%s", r.err, r.stderr)
	}
	if got := topShares(string(r.stdout)); got["hot_mix"] < 20 || strings.Contains(string(r.stdout), "entry_SYSCALL") {
		t.Errorf("as nobody, hot_mix %.2f%% (and kernel frames?):\n%s", got["hot_mix"], r.stdout)
	}
	if !strings.Contains(string(r.stderr), "kernel frames are left out: kernel.perf_event_paranoid is") || !strings.Contains(string(r.stderr), "user space only: kernel frames left out") {
		t.Errorf("pprof does not say kernel frames are left out:\n%s", r.stderr)
	}

	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sleeper.Process.Kill()
		sleeper.Wait()
	}()
	r = run(unprivileged(t, dir, "-top", "-record", "-pid", fmt.Sprint(sleeper.Process.Pid), "-seconds", "1"))
	if r.exitCode() != 2 || !strings.Contains(string(r.stderr), "belongs to another user") || !strings.Contains(string(r.stderr), "CAP_PERFMON") {
		t.Errorf("attaching to root's process as nobody: status %d, stderr:\n%s", r.exitCode(), r.stderr)
	}

	prog := buildC(t, dir, "record/offcpu.c", "offcpu", "-O1", "-fno-omit-frame-pointer")
	out := filepath.Join(dir, "offcpu.pb.gz")
	cmd := unprivileged(t, dir, "-proto", "-output", out, "-record", "-offcpu", "--", prog, "10")
	os.Chown(dir, 65534, 65534) // for -output
	r = run(cmd)
	if r.err != nil {
		t.Fatalf("pprof as nobody: %v\n%s", r.err, r.stderr)
	}
	m := parseOffCPUTimes(t, r.stdout)
	p := protoFromFile(t, out, r.stderr)
	if !strings.Contains(string(r.stderr), "that of the thread's last on-CPU sample") || !strings.Contains(string(r.stderr), "-offcpu: no stacks of where threads block") {
		t.Errorf("pprof does not say where the off-CPU stacks come from and why:\n%s", r.stderr)
	}
	near(t, "offcpu", valueOf(t, p, "offcpu", ""), m.sleepWall+m.computeWall-m.computeCPU)
	near(t, "wall", valueOf(t, p, "wall", ""), m.sleepWall+m.computeWall)
	// User space only: the computing's time in the kernel (its clock
	// reads) is not sampled.
	if got := valueOf(t, p, "cpu-clock", ""); got > m.computeCPU+30_000_000 || got < m.computeCPU/2 {
		t.Errorf("cpu-clock: %.1f ms in the profile, %.1f ms measured", float64(got)/1e6, float64(m.computeCPU)/1e6)
	}
}

// TestPerfSwitchEvents reads recordings perf record makes of offcpu.c
// with context switches (--switch-events), with and without the
// sched:sched_switch tracepoint's samples (in a mount namespace with
// tracefs, as TestRecordOffCPU): their off-CPU time reads as pprof
// -record's does, what the program measured.
func TestPerfSwitchEvents(t *testing.T) {
	requireRecord(t)
	requireRoot(t)
	perf := testenv.Tool(t, "perf", "linux-perf")
	unshare := testenv.Tool(t, "unshare", "util-linux")
	dir := t.TempDir()
	prog := buildC(t, dir, "record/offcpu.c", "offcpu", "-O1", "-fno-omit-frame-pointer")
	tracefs := filepath.Join(dir, "tracefs")
	os.Mkdir(tracefs, 0o755)
	for _, tc := range []struct {
		name   string
		events []string
	}{
		{name: "switch-events", events: []string{"-e", "cpu-clock"}},
		{name: "sched_switch", events: []string{"-e", "cpu-clock", "-e", "sched:sched_switch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(dir, tc.name+".data")
			args := append([]string{unshare, "--mount", "--propagation", "private", "sh", "-c", `mount -t tracefs nodev "$0" && exec "$@"`, tracefs,
				perf, "record", "-N", "-q", "-o", data, "--switch-events", "--call-graph", "dwarf", "-k", "1"}, tc.events...)
			out, err := exec.Command(args[0], append(args[1:], "--", prog, "10")...).Output()
			if err != nil {
				t.Fatalf("perf record: %v", err)
			}
			m := parseOffCPUTimes(t, out)
			p, r := protoOf(t, dir, nil, data)
			near(t, "offcpu", valueOf(t, p, "offcpu", ""), m.sleepWall+m.computeWall-m.computeCPU)
			near(t, "wall", valueOf(t, p, "wall", ""), m.sleepWall+m.computeWall)
			near(t, "cpu-clock of compute_phase", valueOf(t, p, "cpu-clock", "compute_phase"), m.computeCPU)
			if tc.name == "sched_switch" {
				near(t, "offcpu of sleep_phase", valueOf(t, p, "offcpu", "sleep_phase"), m.sleepWall)
				// Every stack is sched_switch's, but where perf lost
				// records (a loaded machine): those intervals have the
				// stack of the thread's last sample, and pprof says how
				// many.
				says := strings.Contains(string(r.stderr), "(sched:sched_switch)\n") ||
					strings.Contains(string(r.stderr), "were lost") && strings.Contains(string(r.stderr), "(sched:sched_switch), for ")
				if !says {
					t.Errorf("pprof does not say the stacks are sched_switch's:\n%s", r.stderr)
				}
			}
		})
	}
}
