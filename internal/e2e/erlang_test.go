package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/testenv"
)

// erlangWork is an Erlang module that spends two seconds in a recursive
// function and in list sorts.
const erlangWork = `-module(w).
-export([main/1]).
fib(N) when N < 2 -> N;
fib(N) -> fib(N-1) + fib(N-2).
loop(End, Acc) ->
    case erlang:monotonic_time(millisecond) < End of
        true -> loop(End, Acc + fib(20) + length(lists:sort([X rem 977 || X <- lists:seq(1, 3000)])));
        false -> Acc
    end.
main(_) ->
    End = erlang:monotonic_time(millisecond) + 2000,
    io:format("~p~n", [loop(End, 0) > 0]),
    halt().
`

// TestPerfDataErlang records an Erlang program under OTP 25's BEAM JIT
// with +JPperf true, which keeps frame pointers and writes both a perf
// map and a jitdump of the same code into /tmp, with perf record -g: each
// function's share as perf report's within 0.5 percentage point (perf
// report names them from the perf map, with a "$" before them), with no
// message about the two files describing the same code, and fib's
// samples reach w:main/1 through the JIT frames.
func TestPerfDataErlang(t *testing.T) {
	perf := testenv.Tool(t, "perf", "linux-perf")
	erl := testenv.Tool(t, "erl", "erlang-base")
	erlc := testenv.Tool(t, "erlc", "erlang-base")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.erl"), []byte(erlangWork), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(erlc, "w.erl")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("erlc: %v\n%s", err, out)
	}
	removeNewTmpJITFiles(t) // the BEAM's
	data := filepath.Join(dir, "perf.data")
	perfRecord(t, perf, "-g", "-k", "1", "-o", data, erl, "-noshell", "-pa", dir, "+JPperf", "true", "-eval", "w:main([])")
	shares, report := perfReportOf(t, perf, data)
	want := map[string]float64{}
	for fn, w := range shares {
		want[strings.TrimPrefix(fn, "$")] += w
	}

	r := runPProf(t, dir, nil, "-top", "-nodecount=10000", data)
	// beam.smp's own code is stripped: perf report lists its addresses,
	// pprof [beam.smp].
	n := checkShares(t, topShares(string(r.stdout)), want, 2, func(fn string) bool { return strings.HasPrefix(fn, "0x") })
	if want["w:fib/1"] < 10 || n < 3 {
		t.Errorf("perf report does not name the Erlang functions:\n%s", report)
	}
	if strings.Contains(string(r.stderr), "overlaps") {
		t.Errorf("the perf map and the jitdump of the same code reported as overlapping:\n%s", r.stderr)
	}

	p, _ := protoOf(t, dir, nil, data)
	var fib, toMain int64
	for _, s := range p.Sample {
		if ln := s.Location[0].Line; len(ln) == 0 || ln[0].Function.Name != "w:fib/1" {
			continue
		}
		fib += s.Value[0]
		if slices.ContainsFunc(s.Location, func(l *profile.Location) bool {
			return len(l.Line) > 0 && l.Line[0].Function.Name == "w:main/1"
		}) {
			toMain += s.Value[0]
		}
	}
	if fib == 0 || toMain*100 < fib*95 {
		t.Errorf("%d of %d samples in w:fib/1 reach w:main/1, want 95%%", toMain, fib)
	}
}
