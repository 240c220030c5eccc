package jitsym

import (
	"bufio"
	"debug/elf"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
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
// (SourceLine), and Open followed by 50,000 lookups (Open+50k). Open
// reports the bytes it allocates; Open+50k also reports, from child
// processes that do just that, the peak RSS, the peak live heap during
// Open and the heap the index keeps, next to the file size.
func BenchmarkSynthetic(b *testing.B) {
	path := synthObject(b, 40000)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	addrs := sampleAddrs(b, path, 50000)
	b.Run("Open", func(b *testing.B) {
		b.ReportAllocs()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if _, err := Open(path); err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MiB/op")
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
		c := runChild(b, path, "")
		b.ReportMetric(float64(c.rss)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(c.cpu.Seconds()*1000, "child-CPU-ms")
		b.ReportMetric(float64(c.index)/(1<<20), "index-MiB")
		b.ReportMetric(float64(runChild(b, path, "5").openLive)/(1<<20), "open-peak-live-MiB")
		b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	})
}

// childStats is what TestPeakRSSChild measures.
type childStats struct {
	rss       int64         // peak resident set size (VmHWM)
	cpu       time.Duration // CPU time of the child
	index     int64         // heap kept after Open and the lookups
	openLive  int64         // peak live heap during Open, less what was live before
	openAlloc int64         // bytes allocated by Open
}

// runChild runs this test binary as a child that opens path and looks up
// 50,000 addresses (see TestPeakRSSChild), with $GOGC set to gogc unless
// that is "", and returns what it measures. The CPU time of the child is
// a figure less sensitive to other load on the machine than elapsed time;
// with a small GOGC, the live heap is sampled at more collections, each
// stopping the world.
func runChild(tb testing.TB, path, gogc string) childStats {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), "JITSYM_RSS_CHILD="+path)
	if gogc != "" {
		// Collections that stop the world: a concurrent one counts as
		// live what is allocated while it marks, the more so the busier
		// the machine (2.4 MiB where 1.6 MiB is live, with other tests
		// running).
		cmd.Env = append(cmd.Env, "GOGC="+gogc, "GODEBUG=gcstoptheworld=1")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	c := childStats{cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	fields := map[string]*int64{"VmHWM-bytes": &c.rss, "index-heap-bytes": &c.index,
		"open-peak-live-bytes": &c.openLive, "open-alloc-bytes": &c.openAlloc}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if p := fields[k]; ok && p != nil {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			*p = n
			delete(fields, k)
		}
	}
	if len(fields) > 0 {
		tb.Fatalf("child did not report %v:\n%s", slices.Sorted(maps.Keys(fields)), out)
	}
	return c
}

// TestPeakRSSChild is the child process of runChild; it does nothing
// unless JITSYM_RSS_CHILD names an object.
func TestPeakRSSChild(t *testing.T) {
	path := os.Getenv("JITSYM_RSS_CHILD")
	if path == "" {
		t.Skip("only run as a child of BenchmarkSynthetic or TestDifferentialSynthetic")
	}
	addrs := sampleAddrs(t, path, 50000)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before, allocBefore := ms.HeapAlloc, ms.TotalAlloc
	stop := watchLiveHeap()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	peak := stop()
	runtime.ReadMemStats(&ms)
	fmt.Printf("open-peak-live-bytes=%d\n", int64(peak)-int64(before))
	fmt.Printf("open-alloc-bytes=%d\n", ms.TotalAlloc-allocBefore)
	for _, a := range addrs {
		s.SourceLine(a)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	fmt.Printf("index-heap-bytes=%d\n", int64(ms.HeapAlloc)-int64(before))
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

// watchLiveHeap records the live heap at the end of every garbage
// collection from now on, and returns a function that stops and returns
// the largest. The smaller $GOGC, the more often it looks.
func watchLiveHeap() (stop func() uint64) {
	var peak atomic.Uint64
	var stopped atomic.Bool
	type sentinel struct{ _ *int } // with a pointer: never in a tiny block
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(sentinel), func(struct{}) { // runs once a collection found it dead
			if stopped.Load() {
				return
			}
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			arm()
		}, struct{}{})
	}
	arm()
	return func() uint64 {
		stopped.Store(true)
		return peak.Load()
	}
}

// TestDifferentialSynthetic compares 20,000 sampled addresses of a
// synthetic object of 2,000 functions with llvm-symbolizer, then checks
// what Open costs in memory for it.
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
	t.Run("memory", func(t *testing.T) { checkOpenMemory(t, path) })
}

// checkOpenMemory measures Open of the object at path in a child process
// and checks its peak live heap, the bytes it allocates and the heap its
// index keeps against the file size. The bounds sit between what the
// phased build needs (about 0.5, 1.3 and 0.09 times the file for a
// synthetic object) and what building every table at once did (1.3, 2.1
// and 0.27 times).
func checkOpenMemory(t *testing.T, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := float64(fi.Size())
	c := runChild(t, path, "5")
	t.Logf("%.1f MiB file: peak live heap in Open %.1f MiB, allocated %.1f MiB, index %.2f MiB",
		size/(1<<20), float64(c.openLive)/(1<<20), float64(c.openAlloc)/(1<<20), float64(c.index)/(1<<20))
	for _, m := range []struct {
		name  string
		got   int64
		ratio float64
	}{
		{name: "peak live heap in Open", got: c.openLive, ratio: 0.75},
		{name: "bytes allocated by Open", got: c.openAlloc, ratio: 1.75},
		{name: "heap kept by the index", got: c.index, ratio: 0.15},
	} {
		if limit := m.ratio * size; float64(m.got) > limit {
			t.Errorf("%s: %d bytes, want at most %.2f times the %d-byte file (%.0f)", m.name, m.got, m.ratio, fi.Size(), limit)
		}
	}
}
