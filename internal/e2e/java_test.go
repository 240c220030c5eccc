package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestJavaPerfMap runs pprof on a real gperftools profile of an OpenJDK
// 17 program and the perf map the JVM wrote at exit, beside the profile,
// and checks the CPU time of each Java method against a reference
// computed from the raw profile and the map (see referenceFlat), on
// the system names of pprof's symbolized profile (-proto): upstream's
// demangler shortens the display name "int App.hot(int[])" to
// "int App.hot".
func TestJavaPerfMap(t *testing.T) {
	runs := map[string]string{"golden": filepath.Join(testenv.RepoRoot(t), "testdata", "java", "golden")}
	if dir := os.Getenv("JITPPROF_FRESH_JAVA"); dir != "" {
		runs["fresh"] = dir
	} else if testenv.InCI() {
		t.Fatal("JITPPROF_FRESH_JAVA is not set: under CI, ./test.sh must regenerate the Java fixture")
	}
	for name, dir := range runs {
		t.Run(name, func(t *testing.T) {
			maps, _ := filepath.Glob(filepath.Join(dir, "perf-*.map"))
			if len(maps) != 1 {
				t.Fatalf("want one perf map in %s, have %q", dir, maps)
			}
			lines := readPerfMapLines(t, maps[0])
			prof := filepath.Join(dir, "cpu.prof")
			want := referenceFlat(t, prof, func(addr uint64) string { return nameAt(lines, addr) })
			p, _ := protoOf(t, t.TempDir(), nil, prof)
			got := map[string]int64{}
			for _, s := range p.Sample {
				if ln := s.Location[0].Line; len(ln) > 0 {
					got[ln[len(ln)-1].Function.SystemName] += s.Value[1] / 1e6
				}
			}
			for _, m := range []string{"int App.hot(int[])", "long App.sortWork(int)"} {
				if got[m] == 0 || got[m] != want[m] {
					t.Errorf("%s: %dms, reference %dms", m, got[m], want[m])
				}
			}
			// Enough to mean something: on a loaded machine the JVM
			// compiles App's methods late and they get less (the
			// checked-in run: several hundred ms).
			if got["int App.hot(int[])"]+got["long App.sortWork(int)"] < 20 {
				t.Errorf("too little time in App's methods: %v", got)
			}
		})
	}
}

// TestPerfDataJava records the same OpenJDK 17 program with perf record
// -g (-XX:+PreserveFramePointer, so that stacks go through JIT code) and
// the perf map the JVM writes at exit (/tmp/perf-PID.map, where perf
// report reads it too): each Java method's share of the samples, by its
// full name, as perf report's, as checkShares compares them (its several
// compiled versions added up, as pprof names them alike); the samples in
// App's methods reach JavaMain through the interpreter; the main binary
// is the java launcher, though its own code has no samples and the
// shell that exec'd it has some.
func TestPerfDataJava(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	javac := testenv.Tool(t, "javac", "openjdk-17-jdk-headless")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "java", "App.java"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "App.java"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(dir, "App.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "perf.data")
	removeTmpJITFiles(t, recordedPIDs(data)) // the JVM's perf map, written at its exit
	// Started by a shell that execs it, as scripts start servers: the
	// shell's own code has samples, the java launcher's none.
	perfRecord(t, perf, "-g", "-k", "1", "-o", data, "sh", "-c", `exec "$0" "$@"`, java, "-XX:+PreserveFramePointer",
		"-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", "-cp", dir, "App", "1500")
	want, report := perfReportOf(t, perf, data)

	p, r := protoOf(t, dir, perfCacheEnv(), data)
	got := javaShares(p)
	var app, toMain int64
	for _, s := range p.Sample {
		leaf := s.Location[0].Line
		if len(leaf) == 0 {
			continue
		}
		if name := leaf[0].Function.SystemName; strings.Contains(name, " App.") {
			app += s.Value[0]
			if slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
				return slices.ContainsFunc(l.Line, func(ln profile.Line) bool { return ln.Function.Name == "JavaMain" })
			}) {
				toMain += s.Value[0]
			}
		}
	}
	n := checkShares(t, got, want)
	if want["int App.hot(int[])"] < 2 || n < 3 {
		t.Errorf("perf report does not name App's methods:\n%s\n%s", report, r.stderr)
	}
	if app == 0 || toMain*100 < app*95 {
		t.Errorf("%d of %d samples in App's methods reach JavaMain, want 95%%", toMain, app)
	}
	if main := p.Mapping[0].File; filepath.Base(main) != "java" {
		t.Errorf("main binary %s, want the java launcher", main)
	}

	// The samples of the shell, before its exec, are sh's, as in perf
	// report: each thread's command at the time of its samples (a
	// JVM thread is "java", its parent's, until it names itself). Counts
	// of samples, within 1 (a sample and a rename of the same instant
	// may be ordered apart).
	out, err := exec.Command(perf, "report", "-i", data, "-n", "--sort", "comm", "--stdio", "-q", "--no-children", "-g", "none").Output()
	if err != nil {
		t.Fatalf("perf report --sort comm: %v", err)
	}
	wantComm := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*[\d.]+%\s+(\d+)\s+(.+?)\s*$`).FindAllStringSubmatch(string(out), -1) {
		wantComm[m[2]], _ = strconv.Atoi(m[1])
	}
	tags := runPProf(t, dir, nil, "-tags", "-sample_index=samples", data)
	gotComm := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(\d+) \(\s*[\d.]+%\): (.+?)\s*$`).FindAllStringSubmatch(string(tags.stdout), -1) {
		gotComm[m[2]], _ = strconv.Atoi(m[1])
	}
	if wantComm["java"] < 300 || len(wantComm) < 3 {
		t.Fatalf("perf report --sort comm:\n%s", out)
	}
	for c, w := range wantComm {
		if g := gotComm[c]; g < w-1 || g > w+1 {
			t.Errorf("comm %s: %d samples in pprof, %d in perf report", c, g, w)
		}
	}
}

// TestPerfDataJavaLive profiles a running JVM, as a server is: perf
// record -p attaches to the OpenJDK 17 program a second after it
// started (its hot methods compiled, their code in memory perf describes
// from /proc/PID/maps), and jcmd PID Compiler.perfmap has the JVM write
// its perf map while it runs. Each Java method's share, by its full
// name, as perf report's, as checkShares compares them.
func TestPerfDataJavaLive(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	java := testenv.Tool(t, "java", "openjdk-17-jdk-headless")
	javac := testenv.Tool(t, "javac", "openjdk-17-jdk-headless")
	jcmd := testenv.Tool(t, "jcmd", "openjdk-17-jdk-headless")
	dir := t.TempDir()
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(testenv.RepoRoot(t), "testdata", "java", "App.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	app := exec.Command(java, "-XX:+PreserveFramePointer", "-cp", dir, "App", "6000")
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	removeTmpJITFiles(t, func() []uint32 { return []uint32{uint32(app.Process.Pid)} }) // the JVM's perf map
	defer app.Wait()
	defer app.Process.Kill()
	time.Sleep(time.Second) // its warm-up: hot() compiled
	pid := strconv.Itoa(app.Process.Pid)
	data := filepath.Join(dir, "perf.data")
	perfRecord(t, perf, "-g", "-k", "1", "-p", pid, "-o", data, "--", "sleep", "1.5")
	if out, err := exec.Command(jcmd, pid, "Compiler.perfmap").CombinedOutput(); err != nil {
		t.Fatalf("jcmd %s Compiler.perfmap: %v\n%s", pid, err, out)
	}
	want, report := perfReportOf(t, perf, data)
	p, r := protoOf(t, dir, perfCacheEnv(), data)
	n := checkShares(t, javaShares(p), want)
	if want["int App.hot(int[])"] < 2 || n < 3 {
		t.Errorf("perf report does not name App's methods:\n%s\n%s", report, r.stderr)
	}
}

// javaShares returns each function's share of the samples of p, pprof's
// profile of a recording of the JVM, weighed by their last value (the
// period, as perf report weighs them, and pprof's default), named as
// perf report names it: a Java method by its signature, pprof's system
// name (upstream's demangler shortens the display name "int
// App.hot(int[])" to "int App.hot"); a C++ function by pprof's display
// name, demangled without its arguments; code inlined into a function
// counted for it (as pprof -noinlines does); unnamed code as pprof -top
// names it.
func javaShares(p *profile.Profile) map[string]float64 {
	shares := map[string]float64{}
	var total float64
	for _, s := range p.Sample {
		v := float64(s.Value[len(s.Value)-1])
		total += v
		lines := s.Location[0].Line
		if len(lines) == 0 {
			shares["<unknown>"] += v
			continue
		}
		fn := lines[len(lines)-1].Function
		name := fn.SystemName
		if strings.HasPrefix(name, "_Z") {
			name = fn.Name
		}
		shares[withoutTemplateArgs(name)] += v
	}
	for fn, v := range shares {
		shares[fn] = v * 100 / total
	}
	return shares
}
