package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/jitpprof/pprof/internal/symbolizer"
	jprofile "github.com/jitpprof/pprof/profile"
)

// slowObject answers every address with one frame, slowly.
type slowObject struct{ delay time.Duration }

func (o slowObject) FrameSource() (jprofile.FrameSource, error) { return o, nil }

func (o slowObject) Frames(addr uint64) []jprofile.Frame {
	time.Sleep(o.delay)
	return []jprofile.Frame{{Func: "jitted", File: "jit.c", Line: 1}}
}

// TestSymbolizeProgress checks the progress line: printed while
// symbolizing outlasts the delay and standard error is a terminal, never
// otherwise.
func TestSymbolizeProgress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tty      bool
		delay    time.Duration // per address
		progress bool
	}{
		{name: "slow, terminal", tty: true, delay: 30 * time.Millisecond, progress: true},
		{name: "slow, not a terminal", tty: false, delay: 30 * time.Millisecond},
		{name: "fast, terminal", tty: true, delay: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ui := &testUI{}
			j := &jitStage{ui: ui, stderrTTY: tc.tty, progressAt: 100 * time.Millisecond, warned: map[string]bool{}}
			p := &profile.Profile{}
			var jms []symbolizer.Mapping
			for i, path := range []string{"/jit/a.elf", "/jit/b.elf"} {
				m := &profile.Mapping{ID: uint64(i + 1), Limit: ^uint64(0), File: path}
				jm := symbolizer.Mapping{Path: path, Object: slowObject{tc.delay}, Mapping: m}
				for k := range 5 {
					l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 * (k + 1)), Mapping: m}
					p.Location = append(p.Location, l)
					jm.Locations = append(jm.Locations, l)
				}
				p.Mapping = append(p.Mapping, m)
				jms = append(jms, jm)
			}
			j.symbolizeMappings(p, jms)
			lines := ui.mentioning("Symbolizing JIT objects:")
			if got := len(lines) > 0; got != tc.progress {
				t.Errorf("progress lines %q; want some: %v", lines, tc.progress)
			}
			for _, l := range lines {
				if !strings.Contains(l, "/2 objects") || !strings.Contains(l, "addresses") {
					t.Errorf("progress line %q does not count objects done of 2 and addresses", l)
				}
			}
			for _, l := range p.Location {
				if len(l.Line) != 1 || l.Line[0].Function.Name != "jitted" {
					t.Fatalf("location %#x not symbolized: %v", l.Address, l.Line)
				}
			}
		})
	}
}
