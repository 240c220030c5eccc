package jitsym

import (
	"bufio"
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jitpprof/pprof/internal/elfrel"
	"github.com/jitpprof/pprof/internal/jitsym/synth"
	"github.com/jitpprof/pprof/internal/testenv"
)

// synthObject returns the path of a synthetic object of n functions: the
// file named by $JITSYM_SYNTH_OBJ if set (to skip the minutes g++ takes for
// 40,000 functions), else one synth.Generate writes to a temporary
// directory.
func synthObject(tb testing.TB, n int) string {
	tb.Helper()
	if p := os.Getenv("JITSYM_SYNTH_OBJ"); p != "" {
		return p
	}
	testenv.Tool(tb, "g++", "g++")
	p, err := synth.Generate(tb.TempDir(), n)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// sampleAddrs returns n addresses spread uniformly over the bytes of the
// executable sections of the object at path, with a fixed seed.
func sampleAddrs(tb testing.TB, path string, n int) []uint64 {
	tb.Helper()
	f, err := elfrel.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	type sec struct{ addr, start uint64 } // start: offset of its first byte among all code bytes
	var secs []sec
	var total uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			secs = append(secs, sec{s.Addr, total})
			total += s.Size
		}
	}
	if total == 0 {
		tb.Fatalf("%s has no code", path)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		off := rng.Uint64N(total)
		k := sort.Search(len(secs), func(k int) bool { return secs[k].start > off }) - 1
		addrs[i] = secs[k].addr + off - secs[k].start
	}
	return addrs
}

// BenchmarkSynthetic measures a synthetic JIT dump of 40,000 C++
// functions in ~47,000 sections (g++ -g -O1 -ffunction-sections, DWARF 5,
// sections scattered over 5 GiB): building the index (Open), one lookup
// (SourceLine), and Open followed by 50,000 lookups (Open+50k). The last
// also reports the peak RSS of a process that does just that, next to the
// file size.
func BenchmarkSynthetic(b *testing.B) {
	path := synthObject(b, 40000)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	addrs := sampleAddrs(b, path, 50000)
	b.Run("Open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Open(path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	})
	b.Run("SourceLine", func(b *testing.B) {
		s, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.SourceLine(addrs[i%len(addrs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Open+50k", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			for _, a := range addrs {
				s.SourceLine(a)
			}
		}
		hwm, cpu := peakRSS(b, path)
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(cpu.Seconds()*1000, "child-CPU-ms")
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	})
}

// peakRSS runs this test binary as a child that opens path, looks up
// 50,000 addresses and reports its peak resident set size (VmHWM); it also
// returns the CPU time of the child, a figure less sensitive to other
// load on the machine than elapsed time.
func peakRSS(tb testing.TB, path string) (int64, time.Duration) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), "JITSYM_RSS_CHILD="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	for _, line := range strings.Split(string(out), "\n") {
		if _, v, ok := strings.Cut(line, "VmHWM-bytes="); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n, cpu
		}
	}
	tb.Fatalf("child did not report VmHWM:\n%s", out)
	return 0, 0
}

// TestPeakRSSChild is the child process of peakRSS; it does nothing unless
// JITSYM_RSS_CHILD names an object.
func TestPeakRSSChild(t *testing.T) {
	path := os.Getenv("JITSYM_RSS_CHILD")
	if path == "" {
		t.Skip("only run as a child of BenchmarkSynthetic")
	}
	addrs := sampleAddrs(t, path, 50000)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		s.SourceLine(a)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("index-heap-bytes=%d\n", ms.HeapAlloc)
	runtime.KeepAlive(s)
	status, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("VmHWM-bytes=%d\n", kb<<10)
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}

// TestDifferentialSynthetic compares 20,000 sampled addresses of a
// synthetic object of 2,000 functions with llvm-symbolizer.
func TestDifferentialSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles 2,000 functions with g++")
	}
	path := synthObject(t, 2000)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := compareWithLLVM(t, s, path, sampleAddrs(t, path, 20000))
	t.Logf("%d addresses, %d frames, %d qualified names, %d mismatches", st.addrs, st.frames, st.qualified, st.mismatches)
}
