package e2e

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/cfi"
	"github.com/jitpprof/pprof/internal/jitdump"
	"github.com/jitpprof/pprof/internal/testenv"
	jprofile "github.com/jitpprof/pprof/profile"
)

// nodeRuns returns the checked-in Node.js fixtures, and the fresh ones
// ./test.sh generates when JITPPROF_FRESH_NODE names them (required
// under CI).
func nodeRuns(t *testing.T) map[string]string {
	t.Helper()
	runs := map[string]string{"golden": filepath.Join(testenv.RepoRoot(t), "testdata", "node", "golden")}
	if dir := os.Getenv("JITPPROF_FRESH_NODE"); dir != "" {
		runs["fresh"] = dir
	} else if testenv.InCI() {
		t.Fatal("JITPPROF_FRESH_NODE is not set: under CI, ./test.sh must regenerate the Node.js fixtures")
	}
	return runs
}

// TestNodePerfMap runs pprof on a real gperftools profile of Node.js
// with --perf-basic-prof, the perf map beside the profile (found with no
// flag), and checks the JavaScript functions' flat values against a
// reference computed here from the raw profile and the map, the simple
// way: the leaf address of each sample not in a file mapping, looked up
// in the map's lines (the last line covering it wins), V8's name cut at
// the tier mark and the script.
func TestNodePerfMap(t *testing.T) {
	for name, dir := range nodeRuns(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(dir, "basic")
			maps, _ := filepath.Glob(filepath.Join(dir, "perf-*.map"))
			if len(maps) != 1 {
				t.Fatalf("want one perf map in %s, have %q", dir, maps)
			}
			lines := readPerfMapLines(t, maps[0])
			want := referenceFlat(t, filepath.Join(dir, "cpu.prof"), func(addr uint64) string {
				return v8Function(nameAt(lines, addr))
			})
			out := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=200", "-unit=ms", filepath.Join(dir, "cpu.prof"))
			checkFlat(t, string(out.stdout), want, []string{"fib", "sieve", "main"})
			if !strings.Contains(string(out.stderr), "JIT objects: using 1 from "+dir) {
				t.Errorf("stderr does not say the perf map was used:\n%s", out.stderr)
			}
		})
	}
}

// TestNodeJITDump runs pprof on a real profile of Node.js with
// --perf-prof, the jitdump beside it, and checks the functions' flat
// values against a reference computed from the jitdump's CODE_LOAD
// records read here, and their lines against work.js itself: each
// function's samples must be at lines of its own body.
func TestNodeJITDump(t *testing.T) {
	for name, dir := range nodeRuns(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(dir, "prof")
			dumps, _ := filepath.Glob(filepath.Join(dir, "jit-*.dump"))
			if len(dumps) != 1 {
				t.Fatalf("want one jitdump in %s, have %q", dir, dumps)
			}
			loads := readCodeLoads(t, dumps[0])
			want := referenceFlat(t, filepath.Join(dir, "cpu.prof"), func(addr uint64) string {
				return v8Function(nameAt(loads, addr))
			})
			prof := filepath.Join(dir, "cpu.prof")
			out := runPProf(t, t.TempDir(), nil, "-top", "-nodecount=200", "-unit=ms", prof)
			checkFlat(t, string(out.stdout), want, []string{"fib", "sieve", "main"})

			// -disasm from the code bytes of the jitdump: sieve's listing
			// has its flat, the same in every run.
			var first string
			for i := range 3 {
				d := string(runPProf(t, t.TempDir(), nil, "-disasm", "sieve", "-unit=ms", prof).stdout)
				if i == 0 {
					first = d
				} else if d != first {
					t.Fatalf("-disasm sieve differs between runs:\n%s\n%s", d, first)
				}
			}
			// One routine per piece of code: V8 may have compiled sieve in
			// several tiers, which -top adds up.
			routines := regexp.MustCompile(`ROUTINE =+ sieve\n\s+(\d+)ms`).FindAllStringSubmatch(first, -1)
			// pprof right-aligns the addresses: V8 may place code low
			// enough for a short one.
			if routines == nil || !regexp.MustCompile(`(?m)^\s+\S+\s+\S+\s+[0-9a-f]+: (mov|push|cmp|test)`).MatchString(first) {
				t.Fatalf("-disasm sieve lists no routine with instructions:\n%s", first)
			}
			var flat int64
			for _, r := range routines {
				v, _ := strconv.ParseInt(r[1], 10, 64)
				flat += v
			}
			if flat != want["sieve"] {
				t.Errorf("-disasm sieve: flat %dms in %d routines, reference %dms", flat, len(routines), want["sieve"])
			}

			// Lines: every fib, sieve and main row of -top -lines is at a
			// line of that function's body in work.js.
			src, err := os.ReadFile(filepath.Join(dir, "work.js"))
			if err != nil {
				t.Fatal(err)
			}
			body := functionLines(string(src))
			lines := runPProf(t, t.TempDir(), nil, "-top", "-lines", "-nodecount=200", prof)
			// The script's path is where generate.sh ran it. TurboFan
			// inlines fib, sieve and strwork into main, whose line
			// entries then name the inlined functions' lines (a jitdump
			// has no inline frames): main's rows may be at any function's
			// lines, fib's and sieve's only at their own.
			rows := regexp.MustCompile(`(?m) (fib|sieve|main) (\S+):(\d+)$`).FindAllStringSubmatch(string(lines.stdout), -1)
			if len(rows) == 0 {
				t.Fatalf("-top -lines has no row for fib, sieve or main with a file:line:\n%s", lines.stdout)
			}
			inBody := func(fn string, line int) bool {
				for name, b := range body {
					if (fn == "main" || fn == name) && line >= b[0] && line <= b[1] {
						return true
					}
				}
				return false
			}
			for _, r := range rows {
				line, _ := strconv.Atoi(r[3])
				if filepath.Base(r[2]) != "work.js" || !filepath.IsAbs(r[2]) || !inBody(r[1], line) {
					t.Errorf("%s at %s:%d, want work.js:%d-%d", r[1], r[2], line, body[r[1]][0], body[r[1]][1])
				}
			}
		})
	}
}

type codeRange struct {
	start, size uint64
	name        string
}

// readCodeLoads returns the CODE_LOAD records of a little-endian jitdump
// written by V8, in file order, with CODE_MOVE applied.
func readCodeLoads(t *testing.T, path string) []codeRange {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(data) < 40 || le.Uint32(data) != 0x4A695444 {
		t.Fatalf("%s: not a little-endian jitdump", path)
	}
	var out []codeRange
	byIndex := map[uint64]int{}
	for off := int(le.Uint32(data[8:])); off+16 <= len(data); {
		id, size := le.Uint32(data[off:]), int(le.Uint32(data[off+4:]))
		rec := data[off+16 : off+size]
		switch id {
		case 0: // CODE_LOAD
			name := rec[40:]
			name = name[:slices.Index(name, 0)]
			byIndex[le.Uint64(rec[32:])] = len(out)
			out = append(out, codeRange{le.Uint64(rec[16:]), le.Uint64(rec[24:]), string(name)})
		case 1: // CODE_MOVE
			if i, ok := byIndex[le.Uint64(rec[40:])]; ok {
				out[i].start = le.Uint64(rec[24:])
			}
		case 3:
			return out
		}
		off += size
	}
	return out
}

// v8Function is the function of a V8 code name: "JS:*fib /x.js:1:13"
// is "fib"; other names are themselves.
func v8Function(name string) string {
	rest, ok := strings.CutPrefix(name, "JS:")
	if !ok {
		return name
	}
	rest = strings.TrimLeft(rest, "*~^+")
	fn, _, _ := strings.Cut(rest, " ")
	return fn
}

// checkFlat checks the flat values -top -unit=ms prints for fns (main
// only where the reference gives it samples).
func checkFlat(t *testing.T, top string, want map[string]int64, fns []string) {
	t.Helper()
	for _, fn := range fns {
		if fn == "main" && want[fn] == 0 {
			// main runs the loop that calls the others: on a loaded
			// machine it makes fewer rounds, V8 may leave it
			// interpreted (in its builtins' code, no perf map or
			// jitdump entry), and the reference gives it nothing.
			continue
		}
		m := regexp.MustCompile(`(?m)^\s*(\d+)ms\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+` + fn + `$`).FindStringSubmatch(top)
		if m == nil {
			t.Errorf("-top has no row for %s:\n%s", fn, top)
			continue
		}
		got, _ := strconv.ParseInt(m[1], 10, 64)
		if got != want[fn] || got == 0 {
			t.Errorf("%s: flat %dms, reference %dms", fn, got, want[fn])
		}
	}
}

// functionLines returns the first and last line of each top-level
// function of a JavaScript source, by its braces.
func functionLines(src string) map[string][2]int {
	out := map[string][2]int{}
	lines := strings.Split(src, "\n")
	re := regexp.MustCompile(`^function (\w+)\(`)
	for i := 0; i < len(lines); i++ {
		m := re.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		depth, j := 0, i
		for ; j < len(lines); j++ {
			depth += strings.Count(lines[j], "{") - strings.Count(lines[j], "}")
			if depth == 0 {
				break
			}
		}
		out[m[1]] = [2]int{i + 1, j + 1}
	}
	return out
}

// TestNodeJITPid profiles a live Node.js process and runs pprof with
// -jit_pid on it while it still runs: the process's perf map, read
// through /proc/PID/root/tmp (with --perf-basic-prof), or its jitdump,
// read in its current directory (with --perf-prof), names the JavaScript
// functions, with no file copied by hand.
func TestNodeJITPid(t *testing.T) {
	node := testenv.Tool(t, "node", "nodejs")
	lib := "/usr/lib/x86_64-linux-gnu/libprofiler.so"
	if _, err := os.Stat(lib); err != nil {
		testenv.Missing(t, lib, "apt-get install libgoogle-perftools-dev")
	}
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, want string
	}{
		{"--perf-basic-prof", "-jit_pid: perf map of process %[1]d copied from /proc/%[1]d/root/tmp/perf-%[1]d.map"},
		{"--perf-prof", "-jit_pid: jitdump of process %[1]d copied from /proc/%[1]d/cwd/jit-%[1]d.dump"},
	} {
		t.Run(tc.flag, func(t *testing.T) { nodeJITPid(t, node, lib, string(src), tc.flag, tc.want) })
	}
}

// nodeJITPid runs work.js under node with flag and pprof -jit_pid on it.
func nodeJITPid(t *testing.T, node, lib, src, flag, want string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "work.js"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "cpu.prof")
	cmd := exec.Command(node, flag, "work.js", "1000", "30000")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CPUPROFILE="+prof, "CPUPROFILESIGNAL=12", "LD_PRELOAD="+lib)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid))
	}()
	// The profile is complete once the profiler has stopped: the file
	// stops growing and node lingers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := os.Stat(prof + ".0")
		if err == nil && st.Size() > 0 && time.Since(st.ModTime()) > 500*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node wrote no profile in 20 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := runPProf(t, t.TempDir(), nil, "-top", "-jit_pid", strconv.Itoa(pid), prof+".0")
	// fib, most of the samples, must be named. V8 may move or replace
	// code after the profile is written (node lingers 30 s), and a
	// gperftools profile has no sample times to replay the jitdump by:
	// sieve's few samples can fall on code that is no longer its (one CI
	// run in many), so it is only reported.
	if !regexp.MustCompile(`(?m) fib$`).Match(r.stdout) {
		t.Errorf("-jit_pid %d: no fib in\n%s\n%s", pid, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m) sieve$`).Match(r.stdout) {
		t.Logf("-jit_pid %d: sieve not named (code moved after the profile?):\n%s", pid, r.stdout)
	}
	if want := fmt.Sprintf(want, pid); !strings.Contains(string(r.stderr), want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if strings.Contains(string(r.stderr), "overlap") {
		t.Errorf("overlap warnings:\n%s", r.stderr)
	}
}

// TestNodeUnwindingInfo runs work.js under node --perf-prof
// --perf-prof-unwinding-info: the .eh_frame V8 writes for some code
// (CODE_UNWINDING_INFO; for most it writes an empty one) is found for
// that code, and read as pprof's unwinder reads it (cfi.ForCode, as the
// driver does), its first entry moved to the code's address covers the code's first
// byte, where a step finds the caller's return address (the CIE's rule
// at entry: on the stack, at the stack pointer). (The entry does not
// cover the metadata V8 counts in the code's size.)
func TestNodeUnwindingInfo(t *testing.T) {
	node := testenv.Tool(t, "node", "nodejs")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "testdata", "node", "work.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "work.js"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--perf-prof", "--perf-prof-unwinding-info", "work.js", "300")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	set, errs := jprofile.Load([]string{dir}) // errs: Node 20's garbage line entries, dropped
	if set.Len() != 1 {
		t.Fatalf("%d objects, %v", set.Len(), errs)
	}
	dumps, _ := filepath.Glob(filepath.Join(dir, "jit-*.dump"))
	f, err := os.Open(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	d, err := jitdump.Read(f, st.Size(), dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	with := 0
	for i := range d.Code {
		c := d.Code[i]
		if !c.HasEHFrame() {
			continue
		}
		with++
		o, _ := set.Lookup(c.Addr)
		eh, err := o.CallFrameInfo(c.Addr)
		// V8's .eh_frame_hdr gives the .eh_frame relative to itself: the
		// table's first entry is the code's.
		if err != nil || eh == nil || eh.Code != c.Addr || eh.EHFrameAddr != 0 || eh.Relocated {
			t.Fatalf("%s at %#x: %+v, %v", c.Name, c.Addr, eh, err)
		}
		tab, bias, err := cfi.ForCode(c.Name, cfi.ArchOf(eh.Machine), eh.ByteOrder, eh.EHFrame, eh.EHFrameAddr, eh.Code)
		if err != nil || tab == nil {
			t.Fatalf("%s: no table, %v", c.Name, err)
		}
		var regs cfi.Regs
		regs.Set(7, 0x7000) // rsp
		mem := func(a uint64) (uint64, bool) { return 0x1234, a == 0x7000 }
		if _, ret, _, _, err := tab.Step(c.Addr-bias, &regs, mem); err != nil || ret != 0x1234 {
			t.Errorf("%s: at its entry %#x, return address %#x, %v", c.Name, c.Addr, ret, err)
		}
	}
	t.Logf("%d of %d pieces of code with an .eh_frame", with, len(d.Code))
	if with == 0 {
		t.Error("V8 wrote no .eh_frame")
	}
}
