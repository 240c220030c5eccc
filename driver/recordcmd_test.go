package driver

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/jitpprof/pprof/internal/record"
)

// TestRecordFlagsRefused checks that command lines -record cannot honour
// end the run with an error naming the problem, before anything is
// recorded or written, and that no usage message is printed for a
// command line that needs no source.
func TestRecordFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		status  int // an ExitError's, or 0
	}{
		{name: "pid without -record", args: []string{"-pid", "1"}, wantErr: "-pid needs -record"},
		{name: "offcpu without -record", args: []string{"-offcpu", "x.prof"}, wantErr: "-offcpu needs -record"},
		{name: "output without -record", args: []string{"-record_output", "r.data", "x.prof"}, wantErr: "-record_output needs -record"},
		{name: "no command", args: []string{"-record"}, wantErr: "-record: no command to record"},
		{name: "command and pid", args: []string{"-record", "-pid", "1", "--", "true"}, wantErr: "-record: a command (true) and -pid"},
		{name: "bad pid", args: []string{"-record", "-pid", "1,x"}, wantErr: `-pid 1,x: "x" is not a process id`},
		{name: "bad call graph", args: []string{"-record", "-call_graph", "lbr", "--", "true"}, wantErr: `-call_graph "lbr": fp or dwarf[,BYTES]`},
		{name: "bad stack size", args: []string{"-record", "-call_graph", "dwarf,70000", "--", "true"}, wantErr: "the stack size is 8 to 65528 bytes"},
		{name: "bad event", args: []string{"-record", "-event", "instructions", "--", "true"}, wantErr: `event "instructions": cpu-clock or cycles`},
		{name: "bad frequency", args: []string{"-record", "-frequency", "-5", "--", "true"}, wantErr: "frequency -5: at least 1 sample per second"},
		{name: "not found", args: []string{"-record", "--", "jitpprof-no-such-command"}, wantErr: "jitpprof-no-such-command: command not found", status: 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ui := &testUI{}
			w := &memWriter{files: map[string]*bytes.Buffer{}}
			err := PProf(&Options{
				Flagset: NewFlagSet("pprof", append([]string{"-top"}, tc.args...), flag.ContinueOnError),
				UI:      ui,
				Writer:  w,
				Getenv:  func(string) string { return "" },
			})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
			var exit *ExitError
			if errors.As(err, &exit) != (tc.status != 0) || (exit != nil && exit.Status != tc.status) {
				t.Errorf("got %#v, want exit status %d", err, tc.status)
			}
			if msgs := ui.mentioning("usage:"); len(msgs) > 0 {
				t.Errorf("the usage message was printed: %.200q", msgs)
			}
			if len(w.files) > 0 {
				t.Errorf("output written despite the error: %v", w.files)
			}
		})
	}
}

func TestParseCallGraph(t *testing.T) {
	for _, tc := range []struct {
		s     string
		mode  record.CallGraph
		bytes int
		ok    bool
	}{
		{s: "fp", mode: record.FramePointers, ok: true},
		{s: "dwarf", mode: record.DWARF, ok: true},
		{s: "dwarf,16384", mode: record.DWARF, bytes: 16384, ok: true},
		{s: "dwarf,8", mode: record.DWARF, bytes: 8, ok: true},
		{s: "dwarf,4"},
		{s: "dwarf,65536"},
		{s: "dwarf,"},
		{s: "fp,8192"},
		{s: "lbr"},
		{s: ""},
	} {
		mode, n, err := parseCallGraph(tc.s)
		if (err == nil) != tc.ok || (tc.ok && (mode != tc.mode || n != tc.bytes)) {
			t.Errorf("%q: got %v, %d, %v; want %v, %d, ok %v", tc.s, mode, n, err, tc.mode, tc.bytes, tc.ok)
		}
	}
}

func TestParsePIDs(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want []int
	}{
		{s: "1", want: []int{1}},
		{s: "12,34, 56", want: []int{12, 34, 56}},
		{s: "0"},
		{s: "-3"},
		{s: "1,,2"},
		{s: "abc"},
	} {
		got, err := parsePIDs(tc.s)
		if (err == nil) != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
}
