package perfdata

import (
	"fmt"
	"strings"
	"testing"
)

// TestConverterLimits: a stack deeper than maxFrames keeps its leaf's
// side; the threads after the first maxThreads lose their pid and tid
// labels and merge by command; each limit is said once, with counts. A
// process forked from a chain of thousands of processes has its
// ancestor's code.
func TestConverterLimits(t *testing.T) {
	side := []sideRecord{comm(10, 10, 1, "prog", true), mmap2(10, 2, 0x400000, 0x100000, "/bin/prog")}
	for i := range 5000 { // 5,000 forks, each from the one before
		side = append(side, fork(uint32(11+i), uint32(10+i), uint64(3+i)))
	}
	rec := synthetic([]Attr{cpuClock(true)}, side...)
	deep := make([]uint64, 2000)
	for i := range deep {
		deep[i] = 0x400000 + uint64(i)*16
	}
	samples := []*Record{
		sample(rec, 10, 10, 10, 100, append([]uint64{markerUser}, deep...)...),
		sample(rec, 5010, 5010, 10, 100, markerUser, 0x400200),
	}
	for i := range maxThreads - 2 + 100 {
		samples = append(samples, sample(rec, 10, uint32(100000+i), 10, 100, markerUser, 0x400100))
	}
	p, conv := convert(t, rec, Options{}, samples...)

	if s := p.Sample[0]; len(s.Location) != maxFrames || s.Location[0].Address != 0x400000 {
		t.Errorf("deep stack: %d frames from %#x, want %d from the leaf", len(s.Location), s.Location[0].Address, maxFrames)
	}
	unlabeled := 0
	for _, s := range p.Sample {
		if s.NumLabel["tid"] == nil {
			unlabeled++
			if s.Value[0] != 100 || s.Label["comm"][0] != "prog" {
				t.Errorf("the unlabeled samples: %v %v, want one of 100 samples of prog", s.Value, s.Label)
			}
		}
	}
	if unlabeled != 1 {
		t.Errorf("%d samples without labels, want the 100 past the limit merged into one", unlabeled)
	}
	last := p.Sample[1]
	if m := last.Location[0].Mapping; m == nil || m.File != "/bin/prog" || last.NumLabel["pid"] == nil {
		t.Errorf("the 5,000th forked process: mapping %v, labels %v", m, last.NumLabel)
	}
	want := []string{
		"x.data: samples with stacks of more than 1024 frames (1 of them): their outermost frames are left out (as perf report --max-stack leaves them)",
		fmt.Sprintf("x.data: samples of more than %d threads: those of the threads after the first %d (100 samples) have no pid and tid labels, only their command", maxThreads, maxThreads),
	}
	if strings.Join(conv.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes\n%s\nwant\n%s", strings.Join(conv.Notes, "\n"), strings.Join(want, "\n"))
	}
}
