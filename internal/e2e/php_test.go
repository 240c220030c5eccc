package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// TestPerfDataPHP records PHP 8.2 with its JIT on (opcache) under perf
// record: the tracing JIT writing a perf map (opcache.jit_debug=0x10),
// the function JIT a jitdump (0x20). PHP keeps its JIT code in shared
// memory, which the recording names "/dev/zero (deleted)": pprof takes
// it for anonymous memory, as perf report does, and names the code from
// the perf map or the jitdump. PHP names the code of a function "JIT$fib"
// and a trace "TRACE-3$fib$13" (a trace of the tracing JIT that starts
// in fib at line 13); pprof names the function, so that a function's
// traces add up to one row, each function's share as perf report's over
// its traces (of the jitdump, after perf inject --jit) within 0.5
// percentage point (and pprof's of the recording perf inject wrote as of
// the original); -disasm lists the jitdump's code under the function's
// name. PHP's JIT code keeps no frame pointer, so the
// recordings have no stacks (perf report's would be as broken).
func TestPerfDataPHP(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	php := testenv.Tool(t, "php8.2", "php8.2-cli")
	work := filepath.Join(testenv.RepoRoot(t), "testdata", "php", "work.php")
	// PHP's names of its JIT code, as TestNameFrame lists them.
	phpName := regexp.MustCompile(`^(?:JIT\$([^$].*)|TRACE-\d+\$(.+)\$\d+)$`)
	for _, tc := range []struct {
		name, jit, debug string
	}{
		{"tracing-perf-map", "tracing", "0x10"},
		{"function-jitdump", "function", "0x20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removeNewTmpJITFiles(t) // PHP writes both into /tmp
			dir := t.TempDir()
			data := filepath.Join(dir, "perf.data")
			perfRecord(t, perf, "-k", "1", "-o", data, "--", php, "-d", "opcache.enable_cli=1", "-d", "opcache.jit_buffer_size=64M",
				"-d", "opcache.jit="+tc.jit, "-d", "opcache.jit_debug="+tc.debug, work, "1.5")
			reported, global, env := data, []string(nil), []string(nil)
			if tc.debug == "0x20" {
				reported, global, env = perfInject(t, perf, data)
			}
			report, out := perfReportOf(t, perf, reported, global...)
			want := map[string]float64{}
			for fn, w := range report {
				if m := phpName.FindStringSubmatch(fn); m != nil {
					fn = m[1] + m[2]
				}
				want[fn] += w
			}
			if want["hot"] < 20 || want["fib"] < 10 {
				t.Fatalf("perf report does not name PHP's JIT code (is opcache's JIT on?):\n%s", out)
			}

			r := runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
			got := topShares(string(r.stdout))
			if n := checkShares(t, got, want, 1, nil); n < 2 {
				t.Errorf("%d functions compared, want hot and fib at least", n)
			}
			if strings.Contains(string(r.stdout), "TRACE-") || strings.Contains(string(r.stdout), "JIT$fib") {
				t.Errorf("PHP's code names in pprof's functions:\n%s", r.stdout)
			}
			if strings.Contains(string(r.stdout), "zero (deleted)") {
				t.Errorf("the JIT code named after /dev/zero:\n%s", r.stdout)
			}
			if !strings.Contains(string(r.stdout), "File: php8.2") {
				t.Errorf("main binary not php8.2:\n%s", r.stdout)
			}
			if reported != data {
				checkInjected(t, dir, reported, env, got, "hot", "fib", "Mixer::mix")
			}
			if tc.debug == "0x20" {
				// The jitdump has the code, and so have the ELF files
				// perf inject made of it: its disassembly is listed
				// under the function's name, each instruction of it too.
				for _, rec := range []string{data, reported} {
					r := runPProf(t, dir, env, "-disasm=fib", rec)
					if out := string(r.stdout); !strings.Contains(out, "ROUTINE ======================== fib\n") || !regexp.MustCompile(`cmp.*;fib\s`).MatchString(out) {
						t.Errorf("pprof -disasm=fib %s:\n%s", filepath.Base(rec), out)
					}
				}
			}
		})
	}
}

// TestPHPPerfMapGperftools profiles PHP 8.2's tracing JIT with
// gperftools, started and stopped by signal while the script runs, as a
// server is profiled: the profile's memory map then has PHP's JIT code
// in "/dev/zero (deleted)", executable, below php8.2 itself. With the
// perf map copied beside the profile, the JIT code is named after its
// functions (it was all php8.2's, "[php8.2]", when that mapping counted
// as a file), each function's CPU time the reference computed here from
// the raw profile and the map: the leaf addresses the map covers, named
// by the entry covering them (PHP's names cut to the function).
func TestPHPPerfMapGperftools(t *testing.T) {
	php := testenv.Tool(t, "php8.2", "php8.2-cli")
	lib := "/usr/lib/x86_64-linux-gnu/libprofiler.so"
	if _, err := os.Stat(lib); err != nil {
		testenv.Missing(t, lib, "apt-get install libgoogle-perftools-dev")
	}
	removeNewTmpJITFiles(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	cmd := exec.Command(php, "-d", "opcache.enable_cli=1", "-d", "opcache.jit_buffer_size=64M", "-d", "opcache.jit=tracing",
		"-d", "opcache.jit_debug=0x10", filepath.Join(testenv.RepoRoot(t), "testdata", "php", "work.php"), "2.5")
	// PHP takes SIGPROF for its time limit: the profiler's timer is the
	// real-time one.
	cmd.Env = append(os.Environ(), "CPUPROFILE="+prof, "CPUPROFILE_REALTIME=1", "CPUPROFILE_FREQUENCY=1000", "CPUPROFILESIGNAL=12", "LD_PRELOAD="+lib)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // its traces compiled
	cmd.Process.Signal(syscall.SIGUSR2)
	time.Sleep(1300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGUSR2)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("php: %v", err)
	}
	prof += ".0"
	perfMap := fmt.Sprintf("perf-%d.map", cmd.Process.Pid)
	b, err := os.ReadFile(filepath.Join("/tmp", perfMap))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, perfMap), b, 0o644); err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`r-x. .* /dev/zero \(deleted\)`).Match(maps) {
		t.Fatalf("the profile's memory map has no executable /dev/zero (deleted): is PHP's JIT on?")
	}

	phpName := regexp.MustCompile(`^(?:JIT\$([^$].*)|TRACE-\d+\$(.+)\$\d+)$`)
	lines := readPerfMapLines(t, filepath.Join(dir, perfMap))
	want := map[string]int64{}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range raw.Sample {
		if m := phpName.FindStringSubmatch(nameAt(lines, s.Location[0].Address)); m != nil {
			want[m[1]+m[2]] += s.Value[1] / 1e6
		}
	}
	p, _ := protoOf(t, dir, nil, php, prof)
	got := map[string]int64{}
	for _, s := range p.Sample {
		if ln := s.Location[0].Line; len(ln) > 0 {
			got[ln[len(ln)-1].Function.Name] += s.Value[1] / 1e6
		}
	}
	for _, fn := range []string{"fib", "hot"} {
		if got[fn] == 0 || got[fn] != want[fn] {
			t.Errorf("%s: %dms, reference %dms", fn, got[fn], want[fn])
		}
	}
	if got["fib"]+got["hot"] < 500 {
		t.Errorf("too little time in fib and hot: %v", got)
	}
}
