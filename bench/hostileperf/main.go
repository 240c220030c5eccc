// Command hostileperf writes the hostile perf.data recordings, perf maps
// and jitdumps of bench/hostileperf.sh at the sizes of their reports
// (internal/perftest generates them; TestHostilePerf runs smaller ones):
// each into a directory of its own under the output directory, with a
// jit directory beside it holding the perf map that names the good
// part's code.
//
// Usage: hostileperf [-scale F] OUTDIR [NAME...]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jitpprof/pprof/internal/perftest"
)

func main() {
	scale := flag.Float64("scale", 1, "multiply every count by this")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: hostileperf [-scale F] OUTDIR [NAME...]")
		os.Exit(2)
	}
	out := flag.Arg(0)
	n := func(k int) int { return max(1, int(float64(k)**scale)) }
	type input struct {
		name, file string
		data       func() []byte
	}
	inputs := []input{
		{"zbomb-mmap", "perf.data", func() []byte {
			return perftest.CompressedBomb(perftest.MMAP2(43, 5, 0x10000000, 0x1000, 0, "/lib/x.so"), n(3_000_000))
		}},
		{"zbomb-comm", "perf.data", func() []byte {
			return perftest.CompressedBomb(perftest.Comm(43, 43, 5, "x", false), n(5_000_000))
		}},
		{"zbomb-sample", "perf.data", func() []byte {
			return perftest.CompressedBomb(perftest.Sample(43, 43, 5, 1, 0x10000010, 0x10000020), n(3_000_000))
		}},
		{"aliased-ids", "perf.data", func() []byte { return perftest.AliasedIDs(4096, n(1_080_000)) }},
		{"comm-flood", "perf.data", func() []byte { return perftest.SideFlood("comm", n(2_000_000)) }},
		{"fork-flood", "perf.data", func() []byte { return perftest.SideFlood("fork", n(1_600_000)) }},
		{"mmap-flood", "perf.data", func() []byte { return perftest.SideFlood("mmap", n(800_000)) }},
		{"deep-stacks", "perf.data", func() []byte { return perftest.DeepStacks(n(768), 8180) }},
		{"process-tree", "perf.data", func() []byte { return perftest.ProcessTree(n(600_000)) }},
		{"perfmap-12M", "jit/perf-42.map", func() []byte { return perftest.PerfMap(n(12_000_000), 16) }},
		{"perfmap-gaps", "jit/perf-42.map", func() []byte { return perftest.PerfMap(n(12_000_000), 8) }},
		{"jitdump-2.5M", "jit/jit-42.dump", func() []byte { return perftest.JITDump(42, n(2_500_000)) }},
	}
	only := map[string]bool{}
	for _, name := range flag.Args()[1:] {
		only[name] = true
	}
	for _, in := range inputs {
		if len(only) > 0 && !only[in.name] {
			continue
		}
		dir := filepath.Join(out, in.name)
		if err := os.MkdirAll(filepath.Join(dir, "jit"), 0o755); err != nil {
			fatal(err)
		}
		data := in.data()
		if err := os.WriteFile(filepath.Join(dir, in.file), data, 0o644); err != nil {
			fatal(err)
		}
		if in.file != "perf.data" {
			if err := os.WriteFile(filepath.Join(dir, "perf.data"), perftest.Good(), 0o644); err != nil {
				fatal(err)
			}
		}
		if in.file != "jit/perf-42.map" {
			if err := os.WriteFile(filepath.Join(dir, "jit", "perf-42.map"), perftest.GoodMap(), 0o644); err != nil {
				fatal(err)
			}
		}
		fmt.Printf("%-14s %12d bytes\n", in.name, len(data))
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "hostileperf:", err)
	os.Exit(1)
}
