package perfdata

import (
	"fmt"
	"maps"
	"slices"
)

// Limits on what the samples of one recording make the profile hold:
// each distinct stack is a sample of the profile, each distinct address
// of a process a location, so that a recording of a few megabytes whose
// samples share nothing would make a profile of gigabytes. Past them,
// the samples are kept, with less detail, said once each.
const (
	// maxFrames bounds the frames of one sample's stack: the leaf's side
	// is kept, as perf report --max-stack keeps it (whose default, the
	// kernel's perf_event_max_stack, is 127).
	maxFrames = 1024
	// maxThreads bounds the threads whose samples are labeled with their
	// pid and tid: the samples of the others (a recording of a build,
	// thousands of short-lived compilers) are labeled with their command
	// only, and merged by it.
	maxThreads = 1 << 14
	// maxPerfMaps bounds the processes whose perf maps are looked for.
	maxPerfMaps = 1 << 12
)

// capFrames returns the first maxFrames of frames (with context
// markers), and notes how many samples had more.
func (c *converter) capFrames(frames []uint64) []uint64 {
	n := 0
	for i, ip := range frames {
		if IsContextMarker(ip) {
			continue
		}
		if n++; n > maxFrames {
			c.deepSamples++
			return frames[:i]
		}
	}
	return frames
}

// labeled reports whether the samples of thread tid of process pid get
// pid and tid labels: those of the first maxThreads threads sampled.
func (c *converter) labeled(pid, tid uint32) bool {
	k := uint64(pid)<<32 | uint64(tid)
	if k == c.lastThread || c.threads[k] {
		c.lastThread = k
		return true
	}
	if len(c.threads) >= maxThreads {
		c.unlabeled++
		return false
	}
	c.threads[k] = true
	return true
}

// noteLimits says, once each, what the limits on samples left out.
func (c *converter) noteLimits() {
	if c.deepSamples > 0 {
		c.note(fmt.Sprintf("samples with stacks of more than %d frames (%d of them): their outermost frames are left out (as perf report --max-stack leaves them)", maxFrames, c.deepSamples))
	}
	if c.unlabeled > 0 {
		c.note(fmt.Sprintf("samples of more than %d threads: those of the threads after the first %d (%d samples) have no pid and tid labels, only their command", maxThreads, maxThreads, c.unlabeled))
	}
}

// perfMaps adds to the JIT files the perf maps (/tmp/perf-PID.map) of the
// processes sampled that ran JIT code, of the first maxPerfMaps of them
// by pid.
func (c *converter) perfMaps() {
	looked := 0
	for _, pid := range slices.Sorted(maps.Keys(c.pids)) {
		if !c.rec.jitProcess(&c.ancestry, pid) {
			continue
		}
		if looked++; looked > maxPerfMaps {
			c.note(fmt.Sprintf("more than %d processes sampled ran JIT code: the perf maps of those after the first %d (by pid) are not looked for", maxPerfMaps, maxPerfMaps))
			break
		}
		if m := c.rec.proc.PerfMap(pid, c.rec.lastComm(pid)); m != "" {
			c.conv.JITFiles = append(c.conv.JITFiles, m)
		}
	}
}
