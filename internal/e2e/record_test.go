package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/testenv"
)

// The tests of pprof -record record real programs: work.c (the perf.data
// tests' hot functions, in threads or processes), offcpu.c (computing
// and sleeping in proportions it measures itself), Node.js with a perf
// map, shells; and compare what pprof reports with perf report and perf
// script on the same recording (-record_output), with upstream pprof
// and go tool pprof reading its -proto, and with what the programs
// measure.

// TestRecordTopMatchesPerfReport records work.c in three threads and
// keeps the recording: every function with 1% or more in perf report
// --no-children of that file has its share in pprof's -top of the
// recording, within 0.5 percentage point; pprof -top of the saved file
// prints the same report; perf report reads the file without a warning.
func TestRecordTopMatchesPerfReport(t *testing.T) {
	requireRecord(t)
	perf := testenv.Tool(t, "perf", "linux-perf")
	dir := t.TempDir()
	work := buildWork(t, dir)
	data := filepath.Join(dir, "work.data")
	r := runPProf(t, dir, nil, "-top", "-nodecount=10000", "-record", "-record_output", data, "--", work, "threads", "60")
	if !regexp.MustCompile(`Recorded work \(pid \d+\) for [\d.]+s: \d+ samples of cpu-clock; work exited with status 0; saved in `).Match(r.stderr) {
		t.Errorf("the summary:\n%s", r.stderr)
	}
	got := topShares(string(r.stdout))
	// perf report of the saved recording, and pprof's report of it with
	// every function: the same shares.
	all, _ := runTop(t, dir, nil, data)
	want, report := perfReportOf(t, perf, data)
	if n := checkShares(t, all, want); n < 2 {
		t.Errorf("perf report lists %d functions with %.1f%% or more:\n%s", n, shareMin, report)
	}
	if got["hot_mix"] < 20 || got["hot_hash"] < 10 {
		t.Errorf("hot_mix %.2f%%, hot_hash %.2f%%:\n%s", got["hot_mix"], got["hot_hash"], r.stdout)
	}
	saved := runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
	// The report, after what the command printed.
	if _, report, _ := strings.Cut(string(r.stdout), "File: "); report == "" || !strings.HasSuffix(string(saved.stdout), report) {
		t.Errorf("-top of the saved recording:\n%s\nof the recording:\n%s", saved.stdout, r.stdout)
	}
	cmd := exec.Command(perf, "report", "-i", data, "--stdio", "-q")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("perf report: %v\n%s", err, stderr.Bytes())
	}
}

// TestRecordDWARF records work.c built without frame pointers (gcc -O2
// -fomit-frame-pointer) with -call_graph dwarf: the user stacks pprof
// unwinds are those perf script unwinds (libunwind or libdw) from the
// same recording, for at least 99% of the samples, and the hot
// functions have their callers.
func TestRecordDWARF(t *testing.T) {
	requireRecord(t)
	perf := testenv.Tool(t, "perf", "linux-perf")
	dir := t.TempDir()
	work := buildC(t, dir, "perf/work.c", "work-nofp", "-O2", "-fomit-frame-pointer")
	data := filepath.Join(dir, "dwarf.data")
	r := runPProf(t, dir, nil, "-peek", "^work$", "-record", "-call_graph", "dwarf", "-record_output", data, "--", work, "threads", "40")
	if !strings.Contains(string(r.stdout), "thread_main") || !strings.Contains(string(r.stdout), "hot_mix") || !strings.Contains(string(r.stdout), "hot_hash") {
		t.Errorf("work has not its caller and callees:\n%s", r.stdout)
	}
	script, err := exec.Command(perf, "script", "-i", data, "-F", "ip,dso", "--no-inline").Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	scriptFile := filepath.Join(dir, "dwarf.script")
	testenv.WriteFile(t, scriptFile, script)
	want, samples := perfScriptStacks(t, scriptFile)
	got, stderr := pprofUserStacks(t, data, nil)
	if strings.Contains(stderr, "user stacks end") {
		t.Errorf("pprof says it could not unwind:\n%s", stderr)
	}
	same := 0
	for k, n := range want {
		same += min(n, got[k])
	}
	if samples < 100 || same*100 < samples*99 {
		t.Errorf("%d of %d samples have perf script's user stack", same, samples)
	}
	deep := 0
	for k, n := range want {
		if strings.Count(k, " ") >= 3 {
			deep += n
		}
	}
	if deep*10 < samples*9 {
		t.Errorf("perf script unwinds %d of %d samples to 4 frames or more", deep, samples)
	}
}

// TestRecordDWARFThroughVDSO records clock.c, which spends its time
// calling clock_gettime, most of it in the vDSO's code, with
// -call_graph dwarf: no file holds the vDSO, so pprof unwinds it with
// its own copy (the same kernel's), and the samples in the vDSO have
// their callers, read_clock and main, as the program is written. Without
// it, their stacks ended there.
func TestRecordDWARFThroughVDSO(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	prog := buildC(t, dir, "record/clock.c", "clock", "-O2", "-fomit-frame-pointer")
	out := filepath.Join(dir, "clock.pb.gz")
	r := runPProf(t, dir, nil, "-proto", "-output", out, "-record", "-call_graph", "dwarf", "--", prog, "1500")
	if strings.Contains(string(r.stderr), "user stacks end") {
		t.Errorf("pprof says it could not unwind:\n%s", r.stderr)
	}
	p := protoFromFile(t, out, r.stderr)
	var total, inVDSO, reachMain int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if m := s.Location[0].Mapping; m == nil || m.File != "[vdso]" {
			continue
		}
		inVDSO += s.Value[0]
		var names []string
		for _, l := range s.Location {
			for _, ln := range l.Line {
				names = append(names, ln.Function.Name)
			}
		}
		if slices.Contains(names, "read_clock") && slices.Contains(names, "main") {
			reachMain += s.Value[0]
		}
	}
	if inVDSO*5 < total {
		t.Fatalf("%d of %d samples in the vDSO: the program did not run as it should", inVDSO, total)
	}
	if reachMain*100 < inVDSO*95 {
		t.Errorf("%d of the %d samples in the vDSO have read_clock and main as callers, want 95%%", reachMain, inVDSO)
	}
}

// TestRecordChildProcesses records a shell that starts two processes,
// one in the background: their samples are in the profile, each with its
// pid and command.
func TestRecordChildProcesses(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	work := buildWork(t, dir)
	p, _ := protoOf(t, dir, nil, "-record", "--", "sh", "-c", work+" single 20 & "+work+" single 20; wait")
	pids := map[int64]bool{}
	hot := 0.0
	total := 0.0
	for _, s := range p.Sample {
		if c := s.Label["comm"]; len(c) > 0 && c[0] == "work" {
			pids[s.NumLabel["pid"][0]] = true
		}
		total += float64(s.Value[1])
		for _, l := range s.Location {
			if len(l.Line) > 0 && l.Line[0].Function.Name == "hot_mix" {
				hot += float64(s.Value[1])
				break
			}
		}
	}
	if len(pids) != 2 || hot < total/5 {
		t.Errorf("samples of %d processes named work (want 2), hot_mix %.0f%% of the samples", len(pids), 100*hot/total)
	}
}

// TestRecordProtoSelfContained records with -proto: upstream pprof and
// go tool pprof, reading the profile with no symbolization (as on another
// machine, without the binaries), name the functions, JIT-free native
// ones and the kernel's.
func TestRecordProtoSelfContained(t *testing.T) {
	requireRecord(t)
	requireRoot(t) // kernel frames
	dir := t.TempDir()
	work := buildWork(t, dir)
	out := filepath.Join(dir, "work.pb.gz")
	// work's processes, and dd, whose time is the kernel's: kernel
	// frames to name.
	runPProf(t, dir, nil, "-proto", "-output", out, "-record", "--", "sh", "-c", work+" procs 20 && dd if=/dev/zero of=/dev/null bs=64k count=5000 2>/dev/null")
	goCmd := testenv.Tool(t, "go", "golang")
	// go tool pprof from the build cache it has, not one in the clean
	// HOME.
	gocache, err := exec.Command(goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{
		exec.Command(testenv.UpstreamPProf(t), "-top", "-nodecount=100", "-symbolize=none", out),
		exec.Command(goCmd, "tool", "pprof", "-top", "-nodecount=100", "-symbolize=none", out),
	} {
		c.Dir = t.TempDir()
		c.Env = append(cleanEnv(t), "PPROF_BINARY_PATH="+t.TempDir(), "GOCACHE="+strings.TrimSpace(string(gocache)))
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.Args[0], err, b)
		}
		top := topShares(string(b))
		if top["hot_mix"] < 20 || top["hot_hash"] < 10 {
			t.Errorf("%s -top of the recording's proto:\n%s", c.Args[0], b)
		}
		if !regexp.MustCompile(`(?m)\s(__x64_sys_|do_syscall_64|entry_SYSCALL|asm_)\w*$`).Match(b) {
			t.Errorf("%s: no kernel function in the top 100:\n%s", c.Args[0], b)
		}
	}
}

// TestRecordReportFlags: the report flags work on a recording.
func TestRecordReportFlags(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	work := buildWork(t, dir)
	for _, tc := range []struct {
		flags []string
		want  string // a regexp of the output
	}{
		{flags: []string{"-traces"}, want: `(?m)^\s+\S+\s+hot_mix\n(\s+\w+\n)*\s+main\n`},
		{flags: []string{"-list", "^hot_hash$"}, want: `ROUTINE =+ hot_hash in \S+work.c`},
		{flags: []string{"-disasm", "hot_mix"}, want: `ROUTINE =+ hot_mix\n[\s\S]*;hot_mix work.c:\d+`},
		{flags: []string{"-folded"}, want: `(?m)^\S*main;\S*hot_mix \d+$`},
		{flags: []string{"-flamegraph"}, want: `<svg[^>]*>[\s\S]*hot_mix`},
		{flags: []string{"-top", "-tagfocus=comm=work", "-sample_index=samples"}, want: `(?m)^\s+\d+\s+[\d.]+%.*hot_mix$`},
	} {
		t.Run(tc.flags[0], func(t *testing.T) {
			r := runPProf(t, dir, nil, append(tc.flags, "-record", "--", work, "single", "15")...)
			if !regexp.MustCompile(tc.want).Match(r.stdout) {
				t.Errorf("pprof %s -record: output does not match %s:\n%.2000s", strings.Join(tc.flags, " "), tc.want, r.stdout)
			}
		})
	}
}

// TestRecordExitStatus: pprof exits with the status of the command it
// recorded, after the report, and a shell's status for a command it
// cannot run.
func TestRecordExitStatus(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "data.txt"), []byte("text"), 0o644)
	for _, tc := range []struct {
		name    string
		command []string
		status  int
		stderr  string
	}{
		{name: "status", command: []string{"sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exit 3"}, status: 3, stderr: "sh exited with status 3"},
		{name: "signal", command: []string{"sh", "-c", "kill -KILL $$"}, status: 137, stderr: "sh killed by signal 9 (killed)"},
		{name: "not found", command: []string{"jitpprof-no-such-command", "arg"}, status: 127, stderr: "pprof: jitpprof-no-such-command: command not found\n"},
		{name: "not executable", command: []string{"./data.txt"}, status: 126, stderr: "pprof: ./data.txt: permission denied\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(pprofCmd(t, dir, nil, append([]string{"-top", "-record", "--"}, tc.command...)...))
			if r.exitCode() != tc.status || !strings.Contains(string(r.stderr), tc.stderr) {
				t.Errorf("exit status %d, stderr:\n%s\nwant %d and %q", r.exitCode(), r.stderr, tc.status, tc.stderr)
			}
			if tc.status < 126 && !strings.Contains(string(r.stdout), "Type: cpu-clock") {
				t.Errorf("no report:\n%s", r.stdout)
			}
		})
	}
	r := run(pprofCmd(t, dir, nil, "-top", "-pid", "1"))
	if r.exitCode() != 2 || !strings.Contains(string(r.stderr), "-pid needs -record") {
		t.Errorf("-pid without -record: status %d, %s", r.exitCode(), r.stderr)
	}
}

// TestRecordNodePerfMap records Node.js started with --perf-basic-prof in
// the command: its JavaScript functions are named from the perf map it
// writes, read at the end as for any recording.
func TestRecordNodePerfMap(t *testing.T) {
	requireRecord(t)
	node := testenv.Tool(t, "node", "nodejs")
	dir := t.TempDir()
	saved := filepath.Join(t.TempDir(), "node.data")
	removeTmpJITFiles(t, recordedPIDs(saved))
	script := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	r := runPProf(t, dir, nil, "-top", "-nodecount=10000", "-record", "-record_output", saved, "--", node, "--perf-basic-prof", script, "1500")
	got := topShares(string(r.stdout))
	fib := 0.0
	for name, v := range got {
		if strings.Contains(name, "fib") {
			fib += v
		}
	}
	if fib < 10 {
		t.Errorf("fib has %.2f%% of the samples:\n%s\n%s", fib, r.stdout, r.stderr)
	}
}

// processState returns the state letter of process pid and its tracer.
func processState(t *testing.T, pid int) (state string, tracer string) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "State:\t"); ok {
			state = v[:1]
		}
		if v, ok := strings.CutPrefix(line, "TracerPid:\t"); ok {
			tracer = v
		}
	}
	return state, tracer
}

// TestRecordAttach attaches to a running work.c with -pid for two
// seconds: its hot functions, and it runs on, neither stopped nor
// traced, also after a pprof killed (SIGKILL) while recording it.
func TestRecordAttach(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	work := buildWork(t, dir)
	target := exec.Command(work, "threads", "100000")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		target.Process.Kill()
		target.Wait()
	}()
	pid := target.Process.Pid
	time.Sleep(100 * time.Millisecond)
	r := runPProf(t, dir, nil, "-top", "-record", "-pid", fmt.Sprint(pid), "-seconds", "2")
	if got := topShares(string(r.stdout)); got["hot_mix"] < 20 {
		t.Errorf("hot_mix %.2f%%:\n%s", got["hot_mix"], r.stdout)
	}
	if !strings.Contains(string(r.stderr), fmt.Sprintf("Recording pid %d for 2s", pid)) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if state, tracer := processState(t, pid); state == "T" || state == "t" || tracer != "0" {
		t.Errorf("after the recording: state %s, tracer %s", state, tracer)
	}
	// Ctrl-C ends the 30 s recording early, and it is reported.
	cmd := pprofCmd(t, dir, nil, "-top", "-record", "-pid", fmt.Sprint(pid))
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil || time.Since(start) > 20*time.Second {
		t.Errorf("pprof after SIGINT: %v, %v", err, time.Since(start))
	}
	if got := topShares(stdout.String()); got["hot_mix"] < 20 {
		t.Errorf("after SIGINT, hot_mix %.2f%%:\n%s", got["hot_mix"], stdout.Bytes())
	}
	// Its temporary recording is left in the test's TMPDIR.
	cmd = pprofCmd(t, dir, []string{"TMPDIR=" + t.TempDir()}, "-top", "-record", "-pid", fmt.Sprint(pid))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	if state, tracer := processState(t, pid); state == "T" || state == "t" || tracer != "0" {
		t.Errorf("after pprof was killed: state %s, tracer %s", state, tracer)
	}
	target.Process.Kill()
	target.Wait()
	r = run(pprofCmd(t, dir, nil, "-top", "-record", "-pid", fmt.Sprint(pid), "-seconds", "1"))
	if want := fmt.Sprintf("pprof: pid %d: no such process\n", pid); r.exitCode() != 2 || !strings.HasSuffix(string(r.stderr), want) {
		t.Errorf("a pid that does not exist: status %d, stderr:\n%s\nwant 2 and %q", r.exitCode(), r.stderr, want)
	}
}

// TestRecordEndedEarly ends recordings early: -seconds, SIGINT (Ctrl-C)
// and SIGTERM to pprof; each still reports, in far less time than the
// recording would have taken. A command launched is ended (SIGTERM) and
// reaped; one whose pprof is killed (SIGKILL) runs on, not stopped.
func TestRecordEndedEarly(t *testing.T) {
	requireRecord(t)
	dir := t.TempDir()
	work := buildWork(t, dir)
	for _, tc := range []struct {
		name   string
		args   []string
		signal syscall.Signal
		stderr string
	}{
		{name: "seconds", args: []string{"-seconds", "1", "--", work, "single", "100000"}, stderr: "work ended by pprof (terminated)"},
		{name: "SIGINT command", args: []string{"--", work, "single", "100000"}, signal: syscall.SIGINT, stderr: "work ended by pprof (terminated)"},
		{name: "SIGTERM command", args: []string{"--", work, "single", "100000"}, signal: syscall.SIGTERM, stderr: "work ended by pprof (terminated)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			cmd := pprofCmd(t, dir, nil, append([]string{"-top", "-record"}, tc.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// pprof alone gets the signal, not a process group.
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.signal != 0 {
				time.Sleep(1500 * time.Millisecond)
				cmd.Process.Signal(tc.signal)
			}
			err := cmd.Wait()
			if d := time.Since(start); err != nil || d > 30*time.Second {
				t.Fatalf("pprof: %v after %v\n%s", err, d, stderr.Bytes())
			}
			if got := topShares(stdout.String()); got["hot_mix"] < 20 || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("hot_mix %.2f%%; stderr:\n%s", got["hot_mix"], stderr.Bytes())
			}
		})
	}
	t.Run("SIGKILL", func(t *testing.T) {
		cmd := pprofCmd(t, dir, []string{"TMPDIR=" + t.TempDir()}, "-top", "-record", "--", "sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var sleeper int
		for i := 0; i < 100 && sleeper == 0; i++ {
			time.Sleep(50 * time.Millisecond)
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
			for _, f := range strings.Fields(string(b)) {
				fmt.Sscan(f, &sleeper)
			}
			if sleeper == 0 { // the tracer is another thread of pprof's
				entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid))
				for _, e := range entries {
					b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", cmd.Process.Pid, e.Name()))
					for _, f := range strings.Fields(string(b)) {
						fmt.Sscan(f, &sleeper)
					}
				}
			}
		}
		if sleeper == 0 {
			cmd.Process.Kill()
			t.Fatal("no child of pprof")
		}
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		defer syscall.Kill(sleeper, syscall.SIGKILL)
		if state, tracer := processState(t, sleeper); state == "T" || state == "t" || tracer != "0" {
			t.Errorf("the command after pprof was killed: state %s, tracer %s", state, tracer)
		}
	})
}
