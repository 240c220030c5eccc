package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jitpprof/pprof/internal/perftest"
	"github.com/jitpprof/pprof/internal/testenv"
)

// A hostilePerf is one hostile perf.data recording, perf map or jitdump,
// or directory of them, made by internal/perftest: beside a good part
// (perftest.Good: samples in the code perftest.GoodMap names), something
// that once cost gigabytes, hours, the whole profile or the terminal.
type hostilePerf struct {
	name string
	// write writes the inputs into dir: perf.data (a file, or a
	// directory of perf record --threads), and the JIT directory jit.
	write func(t *testing.T, dir string)
	args  []string // before the recording; default -top
	// wantErr must be on stderr, each; "DIR" stands for the directory.
	wantErr []string
	// wantFail: pprof fails with wantErr; else its report has GoodFunc.
	wantFail bool
	// unnamed: the good code is not named (its perf map is refused).
	unnamed bool
	// wantOut must be on stdout, each.
	wantOut []string
	maxRSS  int64 // 0: max(256 MiB, 4 times the input)
}

// TestHostilePerf runs pprof on the hostile recordings, perf maps and
// jitdumps of perftest, at sizes that take a few seconds: each run must
// end within 30 s with a peak RSS of at most max(256 MiB, 4x the bytes
// its input holds), say what it left out (naming the file, and the limit
// and flag where there is one) and keep the rest of the profile; no
// control character may reach its output or messages. bench/hostileperf.sh
// runs the same inputs at the sizes they were reported with.
func TestHostilePerf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pprof on tens of megabytes of input (-short)")
	}
	if _, err := os.Stat(timeTool); err != nil {
		testenv.Missing(t, timeTool, "apt-get install time")
	}
	good := perftest.Good()
	write := func(t *testing.T, path string, b []byte) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recording := func(b []byte) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { write(t, filepath.Join(dir, "perf.data"), b) }
	}
	// withMap writes the good perf map too.
	withMap := func(f func(t *testing.T, dir string)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			f(t, dir)
			write(t, filepath.Join(dir, "jit", "perf-42.map"), perftest.GoodMap())
		}
	}
	le := binary.LittleEndian
	dataOff, dataN := int(le.Uint64(good[40:])), int(le.Uint64(good[48:]))
	cut := dataOff + dataN - 20 // inside the last sample
	mmapFlood := perftest.CompressedBomb(perftest.MMAP2(43, 5, 0x10000000, 0x1000, 0, "/lib/x.so"), 3_000_000)
	evil := "evil\x1b]0;pwned\x07"
	evilLib := "/lib/\x1b[2Jevil.so"
	evilRec := func() []byte {
		r := &perftest.Recording{EventName: "cpu\x1b[31m-clock"}
		r.Add(perftest.Comm(42, 42, 1, "\x1b]2;title\x07", true), perftest.MMAP2(42, 2, perftest.GoodAddr, 0x1000, 0, "//anon"),
			perftest.MMAP2(42, 2, 0x10000000, 0x1000, 0, evilLib))
		for i := range 8 {
			r.Add(perftest.Sample(42, 42, uint64(10+i), 1000000, perftest.GoodAddr+0x10, 0x10000100))
		}
		return r.Bytes()
	}()
	escaped := []string{`evil\x1b]0;pwned\a`}
	cases := []hostilePerf{
		{name: "recording cut inside its data section", write: withMap(recording(good[:cut])),
			wantErr: []string{fmt.Sprintf("DIR/perf.data is truncated at byte %d of %d (the recording was cut short); the samples up to there are shown", cut, dataOff+dataN)}},
		{name: "recording shorter than its header", write: withMap(recording(good[:100])), wantFail: true,
			wantErr: []string{"DIR/perf.data: too short to be a perf.data file (100 bytes; the header alone is 104)\n"}},
		{name: "compressed flood of one MMAP record", write: withMap(recording(mmapFlood)),
			wantErr: []string{"DIR/perf.data: in the records compressed (perf record -z), at byte ",
				fmt.Sprintf("decompresses to more than %d bytes, 4096 times the file's size", 64<<20+4096*int64(len(mmapFlood)-(len(good)-dataOff-dataN)))}},
		{name: "compressed flood past -max_perf_mb", write: withMap(recording(mmapFlood)), args: []string{"-top", "-max_perf_mb=16"},
			wantErr: []string{"DIR/perf.data: in the records compressed (perf record -z), at byte ",
				"the run's perf.data records decompressed (perf record -z) would pass 16 MiB, the limit -max_perf_mb sets (raise it to read more)"}},
		{name: "compressed flood of one COMM record", write: withMap(recording(perftest.CompressedBomb(perftest.Comm(43, 43, 5, "x", false), 4_000_000)))},
		{name: "attributes sharing their event ids", write: withMap(recording(perftest.AliasedIDs(4096, 100_000))), wantFail: true,
			wantErr: []string{"DIR/perf.data: event id section [", "overlaps the section ["}},
		{name: "600000 COMM records", write: withMap(recording(perftest.SideFlood("comm", 600_000))),
			wantErr: []string{"DIR/perf.data: more than 524288 side records (mappings, commands, forks) without a round (FINISHED_ROUND) to order them by: some may be taken out of time order"}},
		{name: "600000 processes forked in a chain", write: withMap(recording(perftest.SideFlood("fork", 600_000)))},
		{name: "100000 mappings of one process", write: withMap(recording(perftest.SideFlood("mmap", 100_000))),
			wantErr: []string{"DIR/perf.data: process or thread 43 has more than 65536 executable mappings: the later ones are left out"}},
		{name: "samples of 8180 distinct frames each", write: withMap(recording(perftest.DeepStacks(96, 8180))),
			wantErr: []string{"DIR/perf.data: samples with stacks of more than 1024 frames (96 of them): their outermost frames are left out (as perf report --max-stack leaves them)"}},
		{name: "100000 processes sampled", write: withMap(recording(perftest.ProcessTree(100_000))), args: []string{"-top", "-nodefraction=0"},
			wantErr: []string{"DIR/perf.data: samples of more than 16384 threads: those of the threads after the first 16384 (83616 samples) have no pid and tid labels, only their command"}},
		{name: "perf map of 2000000 entries", write: func(t *testing.T, dir string) {
			recording(good)(t, dir)
			write(t, filepath.Join(dir, "jit", "perf-42.map"), perftest.PerfMap(2_000_000, 8))
		}},
		{name: "jitdump of 500000 loads", write: withMap(func(t *testing.T, dir string) {
			recording(good)(t, dir)
			write(t, filepath.Join(dir, "jit", "jit-43.dump"), perftest.JITDump(43, 500_000))
		})},
		{name: "sparse perf map of 2 TiB", write: func(t *testing.T, dir string) {
			recording(good)(t, dir)
			write(t, filepath.Join(dir, "jit", "jit-42.dump"), perftest.JITDump(42, 0)) // names the good code
			sparse := filepath.Join(dir, "jit", "perf-42.map")
			write(t, sparse, perftest.GoodMap())
			if err := os.Truncate(sparse, 2<<40); err != nil {
				t.Skip(err)
			}
		}, wantErr: []string{"DIR/jit/perf-42.map: ", fmt.Sprintf(" of its %d bytes are holes of a sparse file: not read", 2<<40)}},
		{name: "perf map growing while read", write: withMap(func(t *testing.T, dir string) {
			recording(good)(t, dir)
			growing := filepath.Join(dir, "jit", "perf-43.map")
			write(t, growing, perftest.PerfMap(1000, 16))
			f, err := os.OpenFile(growing, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				line := bytes.Repeat([]byte("20000000 10 grows\n"), 4096)
				tick := time.NewTicker(time.Millisecond) // 70 MB/s at most
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						f.Write(line)
					}
				}
			}()
			t.Cleanup(func() { close(stop); <-done; f.Close() })
		})},
		{name: "perf map of another user", write: withMap(recording(good)), unnamed: true,
			wantErr: []string{"DIR/jit/perf-42.map: owned by user 4242, not by you (user 0) or root: not used, as perf does not use it (-jit_any_owner uses it)"}},
		{name: "perf map of another user -jit_any_owner", write: withMap(recording(good)), args: []string{"-top", "-jit_any_owner"}},
		{name: "control characters in names -top", write: func(t *testing.T, dir string) {
			recording(evilRec)(t, dir)
			write(t, filepath.Join(dir, "jit", "perf-42.map"), fmt.Appendf(nil, "%x 1000 %s\n", perftest.GoodAddr, evil))
		}, unnamed: true, wantOut: append(escaped, `cpu\x1b[31m-clock`),
			wantErr: []string{`Local symbolization failed for \x1b[2Jevil.so: stat /lib/\x1b[2Jevil.so: no such file or directory`}},
		{name: "control characters in names -traces", args: []string{"-traces"}, unnamed: true,
			wantOut: append(escaped, `[\x1b[2Jevil.so]`, `\x1b]2;title\a`)},
		{name: "control characters in names -peek", args: []string{"-peek", "."}, unnamed: true, wantOut: escaped},
		{name: "control characters in names -list", args: []string{"-list", "evil"}, unnamed: true},
		{name: "control characters in a jitdump's path", write: func(t *testing.T, dir string) {
			dump := filepath.Join(dir, "j\x1b[2Jd", "jit-42.dump")
			write(t, dump, perftest.JITDump(42, 0))
			r := &perftest.Recording{}
			r.Add(perftest.Comm(42, 42, 1, "good", true), perftest.MMAP2(42, 2, perftest.GoodAddr, 0x1000, 0, "//anon"),
				perftest.MMAP2(42, 2, 0x20000000, 0x1000, 0, dump))
			for i := range 8 {
				r.Add(perftest.Sample(42, 42, uint64(10+i), 1000000, perftest.GoodAddr+0x10))
			}
			write(t, filepath.Join(dir, "perf.data"), r.Bytes())
		}, args: []string{"-traces"}, wantErr: []string{`names ("DIR/j\x1b[2Jd/jit-42.dump")`}},
		{name: "perf record --threads: 4000 links to one file", write: withMap(func(t *testing.T, dir string) {
			threads := filepath.Join(dir, "perf.data")
			write(t, filepath.Join(threads, "data"), good)
			one := filepath.Join(threads, "data.0")
			write(t, one, good[dataOff:dataOff+dataN])
			for i := 1; i < 4000; i++ {
				if err := os.Link(one, filepath.Join(threads, fmt.Sprintf("data.%d", i))); err != nil {
					t.Skip(err)
				}
			}
		}), wantErr: []string{"DIR/perf.data: 3999 per-thread files are another's links, read once: data.1 (data.0), data.2 (data.0), data.3 (data.0) and 3996 more"}},
		{name: "perf record --threads: 9000 files", write: withMap(func(t *testing.T, dir string) {
			threads := filepath.Join(dir, "perf.data")
			write(t, filepath.Join(threads, "data"), good)
			for i := range 9000 {
				write(t, filepath.Join(threads, fmt.Sprintf("data.%d", i)), nil)
			}
		}), wantErr: []string{"DIR/perf.data: 9000 per-thread files (data.N), more than the 8192 perf record --threads writes at most (one a CPU): the first 8192 are read"}},
	}
	var previous func(t *testing.T, dir string)
	worstTime, worstRSS := time.Duration(0), int64(0)
	for _, tc := range cases {
		if tc.write == nil {
			tc.write = previous // the same input, another report
		}
		previous = tc.write
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "jit"), 0o755)
			tc.write(t, dir)
			if strings.Contains(tc.name, "of another user") {
				if os.Geteuid() != 0 {
					t.Skip("chown needs root")
				}
				if err := os.Chown(filepath.Join(dir, "jit", "perf-42.map"), 4242, 4242); err != nil {
					t.Skip(err)
				}
			}
			input := inputSize(dir)
			args := tc.args
			if args == nil {
				args = []string{"-top"}
			}
			args = append(append([]string{}, args...), "-jit_dir", filepath.Join(dir, "jit"), filepath.Join(dir, "perf.data"))
			r, rss, elapsed := measuredRun(t, dir, nil, 30*time.Second, args...)
			worstTime, worstRSS = max(worstTime, elapsed), max(worstRSS, rss)
			limit := max(256<<20, 4*input)
			if tc.maxRSS != 0 {
				limit = tc.maxRSS
			}
			if rss > limit {
				t.Errorf("peak RSS %d MiB, over %d MiB (%d MiB of input)", rss>>20, limit>>20, input>>20)
			}
			stderr := string(r.stderr)
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "out of memory") {
				t.Fatalf("crashed:\n%.3000s", stderr)
			}
			for _, want := range tc.wantErr {
				if want = strings.ReplaceAll(want, "DIR", dir); !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%.3000s", want, stderr)
				}
				if i := strings.Index(stderr, want); i >= 0 {
					line := stderr[strings.LastIndex(stderr[:i], "\n")+1:]
					line = line[:strings.IndexByte(line+"\n", '\n')]
					if name := filepath.Join(dir, "perf.data"); strings.Count(line, name) > 1 {
						t.Errorf("the message names %s more than once: %q", name, line)
					}
				}
			}
			if tc.wantFail {
				if r.err == nil {
					t.Errorf("pprof did not fail:\n%.2000s", r.stdout)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("pprof failed: %v\n%.3000s", r.err, stderr)
			}
			if named := bytes.Contains(r.stdout, []byte(perftest.GoodFunc)); named == tc.unnamed {
				t.Errorf("%s named: %v, want %v (the rest of the profile kept):\n%.3000s\n%.2000s", perftest.GoodFunc, named, !tc.unnamed, r.stdout, stderr)
			}
			for _, want := range tc.wantOut {
				if !bytes.Contains(r.stdout, []byte(want)) {
					t.Errorf("stdout does not show %q:\n%.3000s", want, r.stdout)
				}
			}
			for what, out := range map[string][]byte{"stdout": r.stdout, "stderr": r.stderr} {
				if c, ok := controlChar(out); ok {
					t.Errorf("a control character (%q) reached %s:\n%q", c, what, out)
				}
			}
		})
	}
	t.Logf("%d cases; worst time %v, worst peak RSS %d MiB", len(cases), worstTime.Round(time.Millisecond), worstRSS>>20)
}

// controlChar returns the first thing in b a terminal may take for a
// command: a C0 control but newline and tab, DEL, a C1 control (U+0080
// to U+009F) or a byte of invalid UTF-8 (a lone 0x9b is CSI to some).
func controlChar(b []byte) (string, bool) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1,
			r < 0x20 && r != '\n' && r != '\t', r == 0x7f, 0x80 <= r && r <= 0x9f:
			return string(b[:n]), true
		}
		b = b[n:]
	}
	return "", false
}

// inputSize returns the bytes the files under dir hold (a sparse file's
// holes not counted; a file of many names once).
func inputSize(dir string) int64 {
	var n int64
	seen := map[uint64]bool{}
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
			n += min(fi.Size(), st.Blocks*512)
			return nil
		}
		n += fi.Size()
		return nil
	})
	return n
}
