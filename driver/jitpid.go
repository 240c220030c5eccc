package driver

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/jitsnap"
)

// A liveSnapshot is -jit_pid's copy of the JIT files of a live process,
// taken once per run into a temporary directory removed when the run
// ends: the JIT file its runtime wrote for perf (a jitdump, else a perf
// map: V8, the JVM, .NET, ...), then its LLVM JIT objects through the
// GDB JIT interface; either is enough.
type liveSnapshot struct {
	pid *int // -jit_pid; 0 for none
	ui  UI

	once   sync.Once
	snap   string // the directory, "" if none was taken
	remove func() // removes it
}

// dir takes the snapshot, once, and returns its directory, or "" without
// -jit_pid or if the snapshot failed (which it reports).
func (s *liveSnapshot) dir() string {
	if s == nil || s.pid == nil || *s.pid == 0 {
		return ""
	}
	s.once.Do(s.take)
	return s.snap
}

func (s *liveSnapshot) take() {
	pid := *s.pid
	dir, err := os.MkdirTemp("", fmt.Sprintf("pprof-jit-%d-", pid))
	if err != nil {
		s.ui.PrintErr("-jit_pid: ", err)
		return
	}
	from, perfErr := jitsnap.CopyPerfFiles(pid, dir)
	if from != "" {
		what := "perf map"
		if strings.HasSuffix(from, ".dump") {
			what = "jitdump"
		}
		defer s.ui.Print(fmt.Sprintf("-jit_pid: %s of process %d copied from %s", what, pid, from))
	}
	res, err := jitsnap.Snapshot(pid, dir)
	switch {
	case err != nil && from == "":
		os.RemoveAll(dir)
		s.ui.PrintErr("-jit_pid: ", err)
		s.ui.PrintErr("-jit_pid: ", perfErr)
		return
	case err == nil:
		for _, skipped := range res.Skipped {
			s.ui.PrintErr("-jit_pid: ", skipped)
		}
		s.ui.Print(fmt.Sprintf("-jit_pid: %d JIT objects copied from process %d", len(res.Written)+len(res.Unchanged), pid))
	}
	s.snap = dir
	s.remove = func() { os.RemoveAll(dir) }
}

// close removes the snapshot's directory.
func (s *liveSnapshot) close() {
	if s == nil {
		return
	}
	s.once.Do(func() {}) // none taken from now on
	if s.remove != nil {
		s.remove()
	}
}
