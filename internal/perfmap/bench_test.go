package perfmap

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkParse1M parses a 1,000,000-line perf map (V8-style names of
// about 60 bytes, a tenth of the lines overlapping earlier ones), read
// from a file as pprof reads it, and reports the heap the parsed map
// keeps per entry.
func BenchmarkParse1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "perf-1.map")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	const n = 1_000_000
	for i := range n {
		addr := 0x7f0000000000 + uint64(i)*0x100
		if i%10 == 9 {
			addr -= 0x180 // reuses an earlier function's memory
		}
		fmt.Fprintf(w, "%x %x JS:*function_number_%d /srv/app/lib/module_%d.js:%d:%d\n", addr, 0xf0, i, i%977, i%3000, i%80)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	b.SetBytes(st.Size())
	b.ResetTimer()
	var kept uint64
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := Parse(f)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		if m.Stats.Entries != n {
			b.Fatalf("%d entries", m.Stats.Entries)
		}
		runtime.KeepAlive(m)
		f.Close()
	}
	b.ReportMetric(float64(kept)/n, "kept-B/entry")
	b.ReportMetric(float64(kept)/float64(st.Size()), "kept/file")
}
