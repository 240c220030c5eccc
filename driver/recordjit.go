package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/hotspot"
	"github.com/jitpprof/pprof/internal/jitenv"
	"github.com/jitpprof/pprof/internal/jitsnap"
	"github.com/jitpprof/pprof/internal/regfile"
)

// A recording names the JIT code of its processes with nothing for the
// user to set: a launched command's runtimes get their perf switches
// through the environment (package jitenv), an LLVM JIT's objects are
// copied out of it through the GDB JIT interface as it exits, or, for
// processes attached to, as the recording ends (package jitsnap), and a
// running JVM is asked for its perf map then (package hotspot). What the
// runtimes write, and the objects copied, go into the recording's JIT
// directory, FILE.jit beside the perf.data FILE, which pprof reads with
// the recording now and when it is read again.

// recordJIT are the steps that have the runtimes of a recording name
// their JIT code; each nil when not wanted (-record_jit=false).
type recordJIT struct {
	// env adds to a launched command's environment the switches that
	// make its runtimes write perf maps or jitdumps.
	env func(env []string) []string
	// holdAtExit copies the JIT objects of a launched LLVM JIT while
	// it is held at its exit.
	holdAtExit func(pid int) error
	// beforeStop has the processes attached to write or give up their
	// JIT code's names before the recording stops.
	beforeStop func(pids []int)
}

// jitDirOf is the JIT directory of the recording at path.
func jitDirOf(path string) string { return path + ".jit" }

// recordJITSteps returns the JIT steps of a recording of command (nil
// when attaching) run in dir, whose JIT directory is jitDir: the one
// place where they are connected. What they did is said on the UI, a
// line each.
func (r *run) recordJITSteps(command []string, dir, jitDir string) recordJIT {
	if !*r.recordFlags.jit {
		return recordJIT{}
	}
	var mu sync.Mutex // the steps of several processes run at once
	say := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		r.ui.PrintErr(msg)
	}
	snapshot := func(pid int, when string) {
		res, err := jitsnap.Snapshot(pid, jitDir)
		switch {
		case errors.Is(err, jitsnap.ErrNoInterface), errors.Is(err, jitsnap.ErrNoObjects), errors.Is(err, jitsnap.ErrNoProcess):
			// Not an LLVM JIT, or one that compiled nothing: nothing to say.
		case err != nil:
			say(fmt.Sprintf("-record: the LLVM JIT objects of pid %d were not copied %s: %v", pid, when, err))
		default:
			for _, skipped := range res.Skipped {
				say(fmt.Sprintf("-record: pid %d: %v", pid, skipped))
			}
			say(fmt.Sprintf("-record: %d LLVM JIT objects copied from pid %d %s (GDB JIT interface)", len(res.Written)+len(res.Unchanged), pid, when))
		}
	}
	steps := recordJIT{
		holdAtExit: func(pid int) error {
			snapshot(pid, "at its exit")
			return nil
		},
		beforeStop: func(pids []int) {
			for _, pid := range pids {
				r.askJVM(pid, jitDir, say)
				snapshot(pid, "as the recording ended")
			}
		},
	}
	if command != nil {
		steps.env = func(env []string) []string {
			res := jitenv.Enable(command, env, dir)
			say(res.Summary() + " (-record_jit=false leaves the environment alone)")
			return res.Env
		}
	}
	return steps
}

// askJVM has the JVM of process pid, if it is one, write its perf map
// (HotSpot's Compiler.perfmap, as jcmd sends it) and copies the map into
// jitDir, where the recording's reader finds it after the JVM has gone.
func (r *run) askJVM(pid int, jitDir string, say func(string)) {
	path, err := hotspot.PerfMap(pid)
	switch {
	case errors.Is(err, hotspot.ErrNotJVM), errors.Is(err, hotspot.ErrNoProcess):
		return
	case err != nil:
		say(fmt.Sprintf("-record: the JVM of pid %d wrote no perf map: %v (start it with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit to have it write one at its exit)", pid, err))
		return
	}
	err = os.MkdirAll(jitDir, 0o755)
	if err == nil {
		err = regfile.Copy(path, filepath.Join(jitDir, fmt.Sprintf("perf-%d.map", pid)), 0o644)
	}
	if err != nil {
		say(fmt.Sprintf("-record: the JVM of pid %d wrote its perf map, which could not be copied: %v", pid, err))
		return
	}
	say(fmt.Sprintf("-record: the JVM of pid %d wrote its perf map (Compiler.perfmap)", pid))
}

// tidyRecording moves into the JIT directory of the recording at path
// the JIT files that the runtimes of the command it launched wrote since
// it started, because pprof switched them on: the jitdumps it names
// (Node.js writes them into its current directory), and the perf maps of
// its processes, perfMaps (the JVM's, in /tmp); those of processes it
// attached to are copied. The recording and its JIT directory are then
// all pprof needs to read it again, and the user's directories are left
// as they were.
func (r *run) tidyRecording(path string, jitdumps []string, perfMaps []string) {
	jitDir := jitDirOf(path)
	if !*r.recordFlags.jit {
		return
	}
	if err := os.MkdirAll(jitDir, 0o755); err != nil {
		r.ui.PrintErr("-record: ", err)
		return
	}
	defer os.Remove(jitDir) // if empty
	t, err := jitenv.Tidy(jitDir, jitdumps, r.recordStart)
	if err != nil {
		r.ui.PrintErr("-record: tidying the JIT runtimes' files: ", err)
	}
	for _, left := range t.Left {
		r.ui.PrintErr("-record: ", left)
	}
	launched := *r.recordFlags.pids == ""
	for _, m := range perfMaps {
		to := filepath.Join(jitDir, filepath.Base(m))
		if !strings.HasPrefix(filepath.Base(m), "perf-") {
			continue
		}
		if _, err := os.Stat(to); err == nil {
			continue
		}
		if err := regfile.Copy(m, to, 0o644); err != nil {
			continue
		}
		if st, err := os.Stat(m); launched && err == nil && !st.ModTime().Before(r.recordStart) {
			os.Remove(m) // written because pprof asked for it
		}
	}
}
