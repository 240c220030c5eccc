package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/perfdata"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataMatchesPerfReport reads real perf.data recordings
// (testdata/perf/generate.sh: a native program in one thread, in three
// threads (also compressed, perf record -z; by a thread per CPU, perf
// record --threads, a directory; streamed, perf record -o -) and in
// three processes,
// Node.js with --perf-prof, and a JIT that moves and reuses its code,
// jitreuse.c) and checks every function's share of the samples in pprof -top against
// perf report --no-children on the same file (for Node, after perf
// inject --jit, which pprof does not need), as checkShares compares
// them: every function at 0.2% or more, within 0.1 percentage point.
// V8's names are compared by function, its tiers added up, as pprof
// names them.
func TestPerfDataMatchesPerfReport(t *testing.T) {
	dir := freshPerfDir(t)
	for _, name := range []string{"single", "threads", "procs", "zstd", "perthread", "pipe", "dwarf", "node", "jitreuse/jitreuse"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			data := filepath.Join(dir, name+".data")
			if _, err := os.Stat(data); err != nil {
				t.Fatal(err)
			}
			want := perfReportShares(t, filepath.Join(dir, name+".report"))
			// perf's build-ID cache, which perf report read: the vDSO's copy.
			got, r := runTop(t, t.TempDir(), []string{"PERF_BUILDID_DIR=" + filepath.Join(dir, "buildid")}, data)
			if n := checkShares(t, got, want); n < 2 {
				t.Errorf("%d functions compared: %v", n, want)
			}
			if name == "dwarf" && strings.Contains(string(r.stderr), "--call-graph dwarf") {
				t.Errorf("a note about --call-graph dwarf, which is unwound:\n%s", r.stderr)
			}
			if name == "node" && (got["fib"] < 10 || got["sieve"] < 2) {
				t.Errorf("JS functions not named: fib %.2f%%, sieve %.2f%%", got["fib"], got["sieve"])
			}
			// The code replaced and moved away is named by the samples'
			// times: without the replay jit_first's samples would count
			// for jit_second, and jit_moved's before its move would be
			// unnamed.
			if name == "jitreuse/jitreuse" && (got["jit_first"] < 10 || got["jit_moved"] < 10 || got["[anon]"] > 1) {
				t.Errorf("moved and reused JIT code not replayed: jit_first %.2f%%, jit_moved %.2f%%, [anon] %.2f%%", got["jit_first"], got["jit_moved"], got["[anon]"])
			}
		})
	}
	// Without -k 1 the times cannot be matched: pprof says so and names
	// each address after the last code there.
	r := runPProf(t, t.TempDir(), nil, "-top", filepath.Join(dir, "jitreuse", "nok.data"))
	if !strings.Contains(string(r.stderr), "record with perf record -k 1") {
		t.Errorf("no note about perf record -k 1 for a recording without it:\n%s", r.stderr)
	}
	if got := topShares(string(r.stdout)); got["jit_first"] != 0 || got["jit_second"] < 10 {
		t.Errorf("without -k 1: jit_first %.2f%%, jit_second %.2f%%; want 0 and the last code's share", got["jit_first"], got["jit_second"])
	}
	checkOtherRunLeftOut(t, r.stderr)
}

// checkOtherRunLeftOut checks what pprof said of nok.data, beside the
// jitdump of the other recording's process (jitreuse.data's): that one
// is left out, nok.data's own used.
func checkOtherRunLeftOut(t *testing.T, stderr []byte) {
	t.Helper()
	if !regexp.MustCompile(`nok.data: JIT files in \S+ of processes it did not record are not used: jit-\d+\.dump \(`).Match(stderr) ||
		!strings.Contains(string(stderr), "JIT objects: using 1 from") {
		t.Errorf("the other run's jitdump not left out, or more than nok.data's own used:\n%s", stderr)
	}
}

// TestPerfDataGolden checks the checked-in recordings of
// testdata/perf/golden the same way. Their kernel frames name the kernel
// of the machine that recorded them, their vDSO frames its vDSO (perf
// report named them from its build-ID cache, not checked in): where
// pprof cannot name them (another kernel; no copy of that vDSO), they
// are compared as unnamed code (goldenReportShares).
func TestPerfDataGolden(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "golden")
	for _, name := range []string{"single", "threads", "zstd"} {
		t.Run(name, func(t *testing.T) {
			got, _ := runTop(t, t.TempDir(), []string{"PPROF_BINARY_PATH=" + dir}, filepath.Join(dir, name+".data"))
			want := goldenReportShares(t, filepath.Join(dir, name+".report"), got)
			if n := checkShares(t, got, want); n < 2 {
				t.Errorf("%d functions compared: %v", n, want)
			}
		})
	}
}

// goldenReportShares reads a checked-in perf report as perfReportShares
// does, its kernel functions counted as unnamed code if got, pprof's
// shares of the recording, has the kernel unnamed, and its vDSO's
// (__vdso_*) if got has the vDSO unnamed.
func goldenReportShares(t *testing.T, path string, got map[string]float64) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parsePerfReportRows(b, unnamedElsewhere(got))
}

// unnamedElsewhere returns, for got, pprof's shares of a checked-in
// recording, the function that says which of perf report's rows
// (kernel or not, name) are code pprof cannot name on this machine: the
// kernel's if pprof lists it as kernelRow, the vDSO's if as [[vdso]].
func unnamedElsewhere(got map[string]float64) func(kernel bool, name string) bool {
	_, kernel := got[kernelRow]
	_, vdso := got["[[vdso]]"]
	return func(k bool, name string) bool {
		return kernel && k || vdso && strings.HasPrefix(name, "__vdso_")
	}
}

// TestNativeBesideJITFiles: a recording of native code, in a directory
// where another run left a jitdump, reads as it does alone; the jitdump,
// for which it has no sample, is not read or reported. So for the same
// profile in pprof's format; given with -jit_dir, the directory is read.
// Native code means every address in a file's mapping: a frame pointer
// chain that runs into garbage at a process's start (0x0, an address
// past the dynamic loader's text) could be JIT code in anonymous memory
// as far as pprof knows, and then it reads the JIT files around the
// recording.
func TestNativeBesideJITFiles(t *testing.T) {
	golden := filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "golden")
	dumps, _ := filepath.Glob(filepath.Join(golden, "jitreuse", "jit-*.dump"))
	if len(dumps) == 0 {
		t.Fatal("no jitdump in testdata/perf/golden/jitreuse")
	}
	const recording = "threads.data"
	env := []string{"PPROF_BINARY_PATH=" + golden}
	p, _ := protoOf(t, t.TempDir(), env, filepath.Join(golden, recording))
	for _, l := range p.Location {
		if l.Mapping == nil {
			t.Fatalf("testdata/perf/golden/%s has an address in no mapping (%#x): not the recording of native code this test needs", recording, l.Address)
		}
	}
	alone, beside := t.TempDir(), t.TempDir()
	for _, f := range []struct{ src, dir string }{
		{filepath.Join(golden, recording), alone},
		{filepath.Join(golden, recording), beside},
		{dumps[0], beside},
	} {
		data, err := os.ReadFile(f.src)
		if err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, filepath.Join(f.dir, filepath.Base(f.src)), data)
	}
	runPProf(t, beside, env, "-proto", "-output", "native.pb.gz", filepath.Join(alone, recording))
	want := runPProf(t, alone, env, "-top", recording)
	for _, name := range []string{recording, "native.pb.gz"} {
		got := runPProf(t, beside, env, "-top", name)
		if strings.Contains(string(got.stderr), "JIT") {
			t.Errorf("%s: the other run's jitdump was read:\n%s", name, got.stderr)
		}
		if !bytes.Equal(got.stdout, want.stdout) || !strings.Contains(string(got.stdout), "hot_mix") {
			t.Errorf("%s beside a jitdump:\n%s\nalone:\n%s", name, got.stdout, want.stdout)
		}
		if r := runPProf(t, beside, env, "-top", "-jit_dir=.", name); !strings.Contains(string(r.stderr), "JIT objects: using 1 from") {
			t.Errorf("%s -jit_dir=.: the directory given was not read:\n%s", name, r.stderr)
		}
	}
}

// TestPerfDataReplayGolden reads the checked-in recordings of
// testdata/perf/jitreuse.c (testdata/perf/golden/jitreuse, with their
// jitdumps): with -k 1, code reused and moved during the run is named by
// the samples' times as perf report names it after perf inject --jit,
// every function's share as checkShares compares them; without -k 1,
// one note names the fix and each address gets the last code there.
func TestPerfDataReplayGolden(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "golden", "jitreuse")
	// The program, jitreuse-bin, beside its recordings.
	bin := []string{"PPROF_BINARY_PATH=" + dir}
	got, _ := runTop(t, t.TempDir(), bin, filepath.Join(dir, "jitreuse.data"))
	want := goldenReportShares(t, filepath.Join(dir, "jitreuse.report"), got)
	checkShares(t, got, want)
	for _, fn := range []string{"jit_first", "jit_second", "jit_moved"} {
		if want[fn] < 10 {
			t.Errorf("%s: %.2f%% in perf report, want 10%% or more", fn, want[fn])
		}
	}
	r := runPProf(t, t.TempDir(), bin, "-top", filepath.Join(dir, "nok.data"))
	if n := strings.Count(string(r.stderr), "record with perf record -k 1"); n != 1 {
		t.Errorf("%d notes about perf record -k 1 for a recording without it, want 1:\n%s", n, r.stderr)
	}
	if got := topShares(string(r.stdout)); got["jit_first"] != 0 || got["jit_second"] < 10 {
		t.Errorf("without -k 1: jit_first %.2f%%, jit_second %.2f%%; want 0 and the last code's share", got["jit_first"], got["jit_second"])
	}
	checkOtherRunLeftOut(t, r.stderr)

	// The recording alone: its jitdump is neither where it was recorded
	// nor beside it. One note names the file the recording names.
	alone := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "jitreuse.data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alone, "jitreuse.data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r = runPProf(t, alone, nil, "-top", "jitreuse.data")
	gone := regexp.MustCompile(`(?m)^jitreuse.data: the recording's JIT file /\S+/jit-\d+\.dump is gone, and not beside the recording`)
	if n := len(gone.FindAll(r.stderr, -1)); n != 1 || strings.Contains(string(r.stderr), "pprof-perf-jit") {
		t.Errorf("%d notes naming the missing jitdump, want 1 (and no temporary directory):\n%s", n, r.stderr)
	}
	if got := topShares(string(r.stdout)); got["jit_first"] != 0 {
		t.Errorf("jit_first named without its jitdump: %.2f%%", got["jit_first"])
	}
}

// TestPerfDataDwarfUnwinding reads recordings made with perf record
// --call-graph dwarf of a program built without frame pointers (gcc -O2
// -fomit-frame-pointer): three threads calling into libc, and a loop
// reading the clock (its time in the vDSO, which perf's build-ID cache
// holds), and the first compressed (perf record -z). Their user stacks
// only call frame information describes. Each sample's user stack must
// be the one perf script unwinds (with libunwind or libdw) from the same
// file: the same frames, in the same files, at the same addresses, for
// at least 99% of the samples; the vDSO's
// functions are named. Without the cache they are named and unwound the
// same with pprof's own copy of the vDSO, the recording's (it was made
// on this machine).
func TestPerfDataDwarfUnwinding(t *testing.T) {
	dir := freshPerfDir(t)
	cache := []string{"PERF_BUILDID_DIR=" + filepath.Join(dir, "buildid")}
	for _, name := range []string{"dwarf", "dwarf-clock", "dwarf-zstd"} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(dir, name+".data")
			want, samples := perfScriptStacks(t, filepath.Join(dir, name+".script"))
			if samples < 500 {
				t.Fatalf("perf script unwound %d samples", samples)
			}
			got, stderr := pprofUserStacks(t, data, cache)
			if strings.Contains(stderr, "--call-graph dwarf") || strings.Contains(stderr, "user stacks end") {
				t.Errorf("pprof says it could not unwind:\n%s", stderr)
			}
			same := 0
			for k, n := range want {
				same += min(n, got[k])
			}
			if same*100 < samples*99 {
				shown := 0
				for k, n := range want {
					if got[k] < n && shown < 5 {
						t.Errorf("perf script unwinds %d samples to\n\t%s\npprof %d", n, k, got[k])
						shown++
					}
				}
				t.Errorf("%d of %d samples have perf script's user stack", same, samples)
			}
			t.Logf("%d of %d samples have perf script's user stack", same, samples)

			if name != "dwarf-clock" {
				// The hot functions are called from work, which
				// thread_main calls.
				r := runPProf(t, t.TempDir(), cache, "-peek", "^work$", data)
				if !strings.Contains(string(r.stdout), "thread_main") || !strings.Contains(string(r.stdout), "hot_mix") {
					t.Errorf("work has not its caller and callees:\n%s", r.stdout)
				}
				return
			}
			// Through the vDSO to main.
			vdso := 0
			for k, n := range got {
				if strings.HasPrefix(k, "[vdso]:") && strings.Contains(k, "work-nofp:") {
					vdso += n
				}
			}
			if vdso*2 < samples {
				t.Errorf("%d of %d samples go from the vDSO to the program", vdso, samples)
			}
			// Its functions are named from perf's copy, as perf names them.
			r := runPProf(t, t.TempDir(), cache, "-top", data)
			if top := topShares(string(r.stdout)); top["__vdso_clock_gettime"] < 50 {
				t.Errorf("__vdso_clock_gettime has %.2f%% of the samples:\n%s", top["__vdso_clock_gettime"], r.stdout)
			}
			// Without perf's cache, the vDSO is this process's own:
			// the recording was made on this machine (the same build
			// ID), so the names and stacks are the same.
			r = runPProf(t, t.TempDir(), nil, "-top", data)
			if top := topShares(string(r.stdout)); top["__vdso_clock_gettime"] < 50 {
				t.Errorf("without perf's cache, __vdso_clock_gettime has %.2f%% of the samples:\n%s", top["__vdso_clock_gettime"], r.stdout)
			}
			own, stderr := pprofUserStacks(t, data, nil)
			if strings.Contains(stderr, "user stacks end") {
				t.Errorf("without perf's cache, pprof could not unwind:\n%s", stderr)
			}
			same = 0
			for k, n := range want {
				same += min(n, own[k])
			}
			if same*100 < samples*99 {
				t.Errorf("without perf's cache, %d of %d samples have perf script's user stack", same, samples)
			}
		})
	}
}

// TestPerfDataRebuiltBinary reads a recording of a program rebuilt since
// (another build ID at the recorded path): with perf's build-ID cache,
// pprof reads perf's copy of the build recorded, says so, and gives the
// function shares perf report gave before the rebuild and the stacks
// perf script unwound; without it, the program's frames are not named.
// The cache is found wherever perf finds it: $PERF_BUILDID_DIR, or
// buildid.dir in ~/.perfconfig or the file $PERF_CONFIG names.
func TestPerfDataRebuiltBinary(t *testing.T) {
	dir := freshPerfDir(t)
	data := filepath.Join(dir, "rebuilt.data")
	cache := []string{"PERF_BUILDID_DIR=" + filepath.Join(dir, "buildid")}
	const note = "rebuilt is another build than the one recorded: reading perf's copy of it"
	got, r := runTop(t, t.TempDir(), cache, data)
	if !strings.Contains(string(r.stderr), note) {
		t.Errorf("no note about the copy read:\n%s", r.stderr)
	}
	home := t.TempDir()
	config := filepath.Join(home, ".perfconfig")
	if err := os.WriteFile(config, []byte(perfConfig(filepath.Join(dir, "buildid"))), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{{"HOME=" + home}, {"PERF_CONFIG=" + config}} {
		_, r2 := runTop(t, t.TempDir(), env, data)
		if !strings.Contains(string(r2.stderr), note) {
			t.Errorf("%s: no note about the copy read:\n%s", env, r2.stderr)
		}
		if !bytes.Equal(r2.stdout, r.stdout) {
			t.Errorf("%s: -top\n%s\nwith PERF_BUILDID_DIR:\n%s", env, r2.stdout, r.stdout)
		}
	}
	bad := filepath.Join(t.TempDir(), "perfconfig")
	if err := os.WriteFile(bad, []byte("[buildid]\ndir = \"/nowhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runPProf(t, t.TempDir(), []string{"PERF_CONFIG=" + bad}, "-top", data); !strings.Contains(string(r.stderr), "perf's configuration: "+bad+": bad config file line 2") {
		t.Errorf("no message about the file perf cannot read:\n%s", r.stderr)
	}
	want := perfReportShares(t, filepath.Join(dir, "rebuilt.report"))
	checkShares(t, got, want)
	if want["hot_mix"] < 10 {
		t.Errorf("perf report gives hot_mix %.2f%%", want["hot_mix"])
	}
	stacks, samples := perfScriptStacks(t, filepath.Join(dir, "rebuilt.script"))
	ours, _ := pprofUserStacks(t, data, cache)
	same := 0
	for k, n := range stacks {
		same += min(n, ours[k])
	}
	if same*100 < samples*99 {
		t.Errorf("%d of %d samples have perf script's user stack", same, samples)
	}
	// The disassembly is the recorded build's too.
	r = runPProf(t, t.TempDir(), cache, "-disasm", "hot_mix", data)
	if !strings.Contains(string(r.stdout), "ROUTINE ======================== hot_mix") || !strings.Contains(string(r.stdout), "work.c:") {
		t.Errorf("-disasm hot_mix:\n%s", r.stdout)
	}

	r = runPProf(t, t.TempDir(), nil, "-top", data)
	if strings.Contains(string(r.stdout), "hot_mix") {
		t.Errorf("the program named without the build recorded:\n%s", r.stdout)
	}
}

// TestPerfDataDwarfNode reads recordings of Node.js made with perf record
// --call-graph dwarf: V8's JIT code has no unwinding tables, so perf
// script's stacks end in it; pprof unwinds its frames by their frame
// pointers, back into node's C++ code and its tables: fib's samples have
// the JS functions that called it and node::Start under them. With
// --perf-prof-unwinding-info, V8 writes an .eh_frame for some of its code
// (fib's among it) into the jitdump, which pprof unwinds that code with:
// its epilogues keep a popped register's rule, which must not cut the
// stacks (at 96% of fib's samples reaching main before that was handled,
// all of them by frame pointers).
func TestPerfDataDwarfNode(t *testing.T) {
	dir := freshPerfDir(t)
	for _, tc := range []struct {
		name string
		min  float64 // of fib's share that its callers must have
	}{{"nodedwarf", 0.9}, {"nodeunwind", 0.98}} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(dir, tc.name, "node.data")
			if _, err := os.Stat(data); err != nil {
				if testenv.InCI() {
					t.Fatal(err)
				}
				t.Skip("no Node.js recording: node is not installed")
			}
			cache := []string{"PERF_BUILDID_DIR=" + filepath.Join(dir, "buildid")}
			r := runPProf(t, t.TempDir(), cache, "-top", "-cum", "-focus=^fib$", "-nodecount=100", data)
			cum := map[string]float64{}
			re := regexp.MustCompile(`(?m)^\s*\S+\s+[\d.]+%\s+\S+%\s+\S+\s+([\d.]+)%\s+(.+?)\s*$`)
			for _, m := range re.FindAllStringSubmatch(string(r.stdout), -1) {
				cum[m[2]], _ = strconv.ParseFloat(m[1], 64)
			}
			fib := cum["fib"]
			if fib < 10 {
				t.Fatalf("fib has %.2f%% of the samples:\n%s", fib, r.stdout)
			}
			for _, caller := range []string{"main", "Builtins_JSEntry", "node::Start", "_start"} {
				if cum[caller] < fib*tc.min {
					t.Errorf("%s is under %.2f%% of fib's %.2f%%:\n%s", caller, cum[caller], fib, r.stdout)
				}
			}
		})
	}
}

// perfScriptStacks reads perf script -F ip,dso --no-inline output (a
// paragraph per sample, a frame per line: "ADDR (DSO)", user addresses
// relative to their file's mapping) and returns how many samples have
// each user stack, as "file:addr ..." innermost first, and the number of
// samples with one.
func perfScriptStacks(t *testing.T, path string) (map[string]int, int) {
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stacks, samples := map[string]int{}, 0
	for _, para := range strings.Split(string(script), "\n\n") {
		var frames []string
		for _, line := range strings.Split(strings.TrimSpace(para), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			addr, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil || addr >= 1<<63 {
				continue // a kernel frame
			}
			frames = append(frames, filepath.Base(strings.Trim(f[1], "()"))+":"+f[0])
		}
		if len(frames) > 0 {
			stacks[strings.Join(frames, " ")]++
			samples++
		}
	}
	return stacks, samples
}

// pprofUserStacks converts a recording with pprof -proto and returns the
// user stacks of its samples as perfScriptStacks does, and what pprof
// printed on stderr.
func pprofUserStacks(t *testing.T, data string, env []string) (map[string]int, string) {
	p, r := protoOf(t, t.TempDir(), env, data)
	stacks := map[string]int{}
	for _, s := range p.Sample {
		var frames []string
		for _, l := range s.Location {
			if l.Address >= 1<<63 || l.Mapping == nil {
				continue
			}
			frames = append(frames, fmt.Sprintf("%s:%x", filepath.Base(l.Mapping.File), l.Address-l.Mapping.Start+l.Mapping.Offset))
		}
		if len(frames) > 0 {
			stacks[strings.Join(frames, " ")] += int(s.Value[0])
		}
	}
	return stacks, string(r.stderr)
}

// TestPerfDataKernelSymbols names the kernel frames of real recordings
// from three symbol tables and checks they agree: this kernel's
// /proc/kallsyms; a copy of it with every address moved 2 MiB, as after a
// reboot with KASLR placing the kernel elsewhere (the recording's kernel
// MMAP record says where _text was, and the table is relocated by it);
// and perf's copy of the recorded kernel's table in its build-ID cache,
// with no /proc/kallsyms at all (a recording from another machine).
func TestPerfDataKernelSymbols(t *testing.T) {
	dir := freshPerfDir(t)
	real, err := os.ReadFile("/proc/kallsyms")
	if err != nil || bytes.HasPrefix(real, []byte("0000000000000000")) {
		testenv.Missing(t, "/proc/kallsyms with addresses", "run as root")
	}
	var moved bytes.Buffer
	for _, line := range strings.Split(string(real), "\n") {
		f := strings.SplitN(line, " ", 2)
		a, err := strconv.ParseUint(f[0], 16, 64)
		if len(f) != 2 || err != nil {
			continue
		}
		fmt.Fprintf(&moved, "%016x %s\n", a+2<<20, f[1])
	}
	movedPath := filepath.Join(t.TempDir(), "kallsyms")
	if err := os.WriteFile(movedPath, moved.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	kernelNames := func(t *testing.T, data string, opts perfdata.Options) (map[uint64]string, []string) {
		t.Helper()
		fd, err := os.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		st, _ := fd.Stat()
		pf, err := perfdata.Open(fd, st.Size(), data)
		if err != nil {
			t.Fatal(err)
		}
		if opts.KernelRelease == "" {
			opts.KernelRelease = pf.OSRelease
		}
		p, conv, err := pf.Profile(opts)
		if err != nil {
			t.Fatal(err)
		}
		names := map[uint64]string{}
		for _, l := range p.Location {
			if l.Address >= 1<<63 && len(l.Line) > 0 {
				names[l.Address] = l.Line[0].Function.Name
			}
		}
		return names, conv.Notes
	}
	// kernel-fp.data (-g) and kernel.data (--call-graph dwarf, perf's
	// cache in buildid/): dd's syscalls, time in the kernel (a user-bound
	// program, as procs.data's, can have no kernel sample, or two: the
	// test asked for three and failed when the machine was busy).
	for _, name := range []string{"kernel-fp", "kernel"} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(dir, name+".data")
			want, _ := kernelNames(t, data, perfdata.Options{Kallsyms: "/proc/kallsyms"})
			if len(want) < 3 {
				t.Fatalf("%d kernel frames named", len(want))
			}
			tables := map[string]perfdata.Options{"moved 2 MiB": {Kallsyms: movedPath}}
			if name == "kernel" {
				tables["perf's copy"] = perfdata.Options{BuildIDDir: filepath.Join(dir, "buildid"), KernelRelease: "another"}
			}
			for what, opts := range tables {
				got, notes := kernelNames(t, data, opts)
				if !maps.Equal(got, want) {
					t.Errorf("%s: %d kernel frames named (notes %q), %d with /proc/kallsyms", what, len(got), notes, len(want))
					for a, n := range want {
						if got[a] != n {
							t.Errorf("%s: %#x is %q, /proc/kallsyms says %q", what, a, got[a], n)
							break
						}
					}
				}
			}
			// Another kernel, no copy: not named, and said.
			got, notes := kernelNames(t, data, perfdata.Options{Kallsyms: "/proc/kallsyms", KernelRelease: "another"})
			if len(got) != 0 || len(notes) == 0 || !strings.Contains(notes[len(notes)-1], "perf's build-ID cache has no copy") {
				t.Errorf("another kernel without perf's copy: %d named, notes %q", len(got), notes)
			}
		})
	}
}

// TestPerfDataKilledRecording reads a recording whose perf record was
// killed (testdata/perf/generate.sh): perf report cannot read it (no data
// size in the header, no feature sections), pprof reads it to its last
// whole record, says so, and names the program's functions and event.
func TestPerfDataKilledRecording(t *testing.T) {
	dir := freshPerfDir(t)
	r := runPProf(t, t.TempDir(), nil, "-top", filepath.Join(dir, "killed.data"))
	if !strings.Contains(string(r.stderr), "killed.data: the recording was not finished") {
		t.Errorf("no note about the unfinished recording:\n%s", r.stderr)
	}
	top := topShares(string(r.stdout))
	if top["hot_mix"] < 20 || top["hot_hash"] < 10 || !strings.Contains(string(r.stdout), "Type: cpu-clock") {
		t.Errorf("hot_mix %.2f%%, hot_hash %.2f%%:\n%s", top["hot_mix"], top["hot_hash"], r.stdout)
	}
}

// TestPerfDataGroup reads recordings of a group of two events whose
// leader samples and reads both (perf record -e
// '{cpu-clock,task-clock}:S'): the checked-in one
// (testdata/perf/golden/group.data) and ./test.sh's fresh one. Each
// event's shares, in pprof -top -sample_index=EVENT, must be those of its
// column of perf report, as checkShares compares them (the checked-in
// one's kernel functions as one row, as TestPerfDataGolden does): the
// members' counts come from the group reads, not from samples of their
// own.
func TestPerfDataGroup(t *testing.T) {
	golden := filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "golden")
	dirs := map[string]string{"golden": golden}
	if dir := os.Getenv("JITPPROF_FRESH_PERF"); dir != "" {
		dirs["fresh"] = dir
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			report, err := os.ReadFile(filepath.Join(dir, "group.report"))
			if err != nil {
				t.Fatal(err)
			}
			// "    59.83%  59.83%  29915000000  29918000000  [.] hot_mix"
			// (the periods as perfReportArgs has them printed, if they
			// are): a column per event, each read as a report of its own.
			re := regexp.MustCompile(`(?m)^\s*([\d.]+)%\s+([\d.]+)%\s+(?:(\d+)\s+(\d+)\s+)?(\[.\]\s+.+)$`)
			columns := [2][]byte{}
			for _, m := range re.FindAllStringSubmatch(string(report), -1) {
				for k := range 2 {
					columns[k] = fmt.Appendf(columns[k], "%s%% %s %s\n", m[1+k], m[3+k], m[5])
				}
			}
			for k, event := range []string{"cpu-clock", "task-clock"} {
				t.Run(event, func(t *testing.T) {
					got, _ := runTop(t, t.TempDir(), []string{"PPROF_BINARY_PATH=" + dir}, "-sample_index="+event, filepath.Join(dir, "group.data"))
					unnamed := unnamedElsewhere(got)
					if name != "golden" {
						unnamed = nil
					}
					want := parsePerfReportRows(columns[k], unnamed)
					if n := checkShares(t, got, want); n < 2 {
						t.Errorf("%d functions compared: %v", n, want)
					}
				})
			}
		})
	}
}

// TestPerfDataSystemWide records the whole machine (perf record -a) while
// Node.js runs work.js and writes its perf map: perf adds its dummy event
// to carry side records (mappings, comms), which pprof leaves out of the
// sample types (it was the last, pprof's default: the report showed no
// samples at all); node's functions' shares of its own samples are perf
// report's, as checkShares compares them. The machine's other processes
// share the recording, and their programs may be gone (a test binary)
// by the time perf report or pprof reads them, or be built in ways perf
// does not read: node's samples alone are compared, by perf report
// --sort pid,sym (perf report --pid with --sort sym filters a function's
// row by the first process that had a sample in it, all processes'
// samples in or out) and pprof -tagfocus=pid=PID.
func TestPerfDataSystemWide(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	node := testenv.Tool(t, "node", "nodejs")
	work := filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js")
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	// node's perf map: of the processes of the machine the recording
	// has, the one the test started.
	removeTmpJITFiles(t, func() []uint32 {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		pid, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
		if err != nil {
			return nil
		}
		return []uint32{uint32(pid)}
	})
	// From dir, where V8 writes its log; node's PID (the shell's, which
	// execs it) into the file pid.
	perfRecord(t, perf, "-a", "-g", "-o", data, "--", "sh", "-c", `echo $$ >"$0/pid" && cd "$0" && exec "$@"`, dir, node, "--perf-basic-prof", work, "1500")
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	opts := []string{"--no-children", "--sort", "pid,sym", "-F", "overhead,period,pid,sym", "--pid", pid, "--stdio", "-q", "-g", "none"}
	want, report := perfReportWith(t, perf, data, nil, opts)
	got, r := runTop(t, dir, perfCacheEnv(), "-tagfocus=pid="+pid, "-relative_percentages", data)
	if want["fib"] < 2 {
		t.Errorf("perf report gives fib %.2f%%:\n%s", want["fib"], report)
	}
	checkShares(t, got, want)
	if !regexp.MustCompile(`(?m)^Type: cpu-clock`).Match(r.stdout) {
		t.Errorf("the report is not of cpu-clock:\n%s", r.stdout)
	}
	p, _ := protoOf(t, dir, nil, data)
	for _, st := range p.SampleType {
		if strings.Contains(st.Type, "dummy") {
			t.Errorf("sample types %v: perf's dummy event among them", p.SampleType)
			break
		}
	}
}

// TestPerfDataEvents records testdata/perf/events.c with events other
// than CPU time, perf's tracepoints and a software event, one and two at
// a time (perf record -e): each event is a sample type of its own name,
// each one's total is the event count perf report gives, and the stacks
// reach main.
func TestPerfDataEvents(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	bin := filepath.Join(dir, "events")
	if out, err := exec.Command(gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", bin,
		filepath.Join(testenv.RepoRoot(t), "testdata", "perf", "events.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		events string
		want   []string // the events, as pprof's sample types
		min    []int64  // the least count of each: the program's own
	}{
		{"sched:sched_switch", []string{"sched:sched_switch"}, []int64{400}},
		{"page-faults,syscalls:sys_enter_write", []string{"page-faults", "syscalls:sys_enter_write"}, []int64{20 << 10, 2000}},
	} {
		t.Run(tc.events, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "perf.data")
			// Every event counted (-c 1): sampled by frequency, as perf
			// does by default for software events, the first samples
			// carry large periods, and those of the program's start
			// (before main) could outweigh main's now and then.
			perfRecordEvents(t, perf, tc.events, "-c", "1", "-g", "-o", data, "--", "sh", "-c", `exec "$0" >/dev/null`, bin)
			out, err := exec.Command(perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "sym", "-g", "none").Output()
			if err != nil {
				t.Fatalf("perf report: %v", err)
			}
			counts := map[string]int64{}
			var event string
			for _, l := range strings.Split(string(out), "\n") {
				if m := regexp.MustCompile(`^# Samples: .* of event '(.+)'$`).FindStringSubmatch(l); m != nil {
					event = m[1]
				} else if m := regexp.MustCompile(`^# Event count \(approx\.\): (\d+)$`).FindStringSubmatch(l); m != nil {
					counts[event], _ = strconv.ParseInt(m[1], 10, 64)
				}
			}
			p, _ := protoOf(t, dir, nil, data)
			for k, ev := range tc.want {
				i := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == ev })
				if i < 0 {
					t.Fatalf("no sample type %s: %v", ev, p.SampleType)
				}
				var total, withMain int64
				for _, s := range p.Sample {
					total += s.Value[i]
					if slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
						return slices.ContainsFunc(l.Line, func(ln profile.Line) bool { return ln.Function.Name == "main" })
					}) {
						withMain += s.Value[i]
					}
				}
				if total != counts[ev] || total < tc.min[k] {
					t.Errorf("%s: %d in pprof, %d in perf report, want at least %d", ev, total, counts[ev], tc.min[k])
				}
				if withMain*100 < total*90 {
					t.Errorf("%s: %d of %d reach main", ev, withMain, total)
				}
				r := runPProf(t, dir, nil, "-top", "-sample_index="+ev, data)
				if !strings.Contains(string(r.stdout), "Type: "+ev+"\n") {
					t.Errorf("-sample_index=%s:\n%s", ev, r.stdout)
				}
			}
		})
	}
}

// TestPerfDataFixedPeriod records with perf record -c (a fixed period:
// the samples carry none, perf reads it from the event): each sample
// stands for 100 µs of cpu-clock (before: 1 ns, a 0.3 s run showed
// "Total samples = 3.14us").
func TestPerfDataFixedPeriod(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	work := filepath.Join(freshPerfDir(t), "work")
	dir := t.TempDir()
	data := filepath.Join(dir, "perf.data")
	perfRecord(t, perf, "-c", "100000", "-o", data, work)
	p, _ := protoOf(t, dir, nil, data)
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
		if s.Value[1] != s.Value[0]*100000 {
			t.Fatalf("a sample of %d counts %d ns of cpu-clock, want %d", s.Value[0], s.Value[1], s.Value[0]*100000)
		}
	}
	if n < 1000 {
		t.Errorf("%d samples, want a run's (100 µs each)", n)
	}
}
