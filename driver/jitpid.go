package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jitpprof/pprof/internal/jitsnap"
	"github.com/jitpprof/pprof/internal/safename"
	jprofile "github.com/jitpprof/pprof/profile"
)

// A liveSnapshot is -jit_pid's copy of the JIT files of a live process,
// taken once per run into a temporary directory removed when the run
// ends, by SIGINT or SIGTERM too (see tempDirs): the JIT file its
// runtime wrote for perf (a jitdump, else a perf map: V8, the JVM, .NET,
// ...), then its LLVM JIT objects through the GDB JIT interface; either
// is enough.
type liveSnapshot struct {
	pid      *int  // -jit_pid; 0 for none
	anyOwner *bool // -jit_any_owner
	ui       UI

	once sync.Once
	snap string   // the directory, "" if none was taken
	temp tempDirs // removes it, on a signal too
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
	s.temp.add(dir)
	from, perfErr := jitsnap.CopyPerfFiles(pid, dir)
	if from != "" && !*s.anyOwner {
		// The copy is pprof's own: the original's owner is checked, as
		// the cache checks the files it reads.
		if st, err := os.Stat(from); err == nil {
			if err := jprofile.OwnerError(st); err != nil {
				os.Remove(filepath.Join(dir, copiedName(from, pid)))
				s.ui.PrintErr(fmt.Sprintf("-jit_pid: %s: %v", safename.String(from), err))
				from, perfErr = "", nil // said
			}
		}
	}
	if from != "" {
		what := "perf map"
		if strings.HasSuffix(from, ".dump") {
			what = "jitdump"
		}
		defer s.ui.Print(fmt.Sprintf("-jit_pid: %s of process %d copied from %s", what, pid, safename.String(from)))
	}
	res, err := jitsnap.Snapshot(pid, dir)
	switch {
	case err != nil && from == "":
		s.temp.close()
		s.ui.PrintErr("-jit_pid: ", err)
		if perfErr != nil {
			s.ui.PrintErr("-jit_pid: ", perfErr)
		}
		return
	case err == nil:
		for _, skipped := range res.Skipped {
			s.ui.PrintErr("-jit_pid: ", skipped)
		}
		s.ui.Print(fmt.Sprintf("-jit_pid: %d JIT objects copied from process %d", len(res.Written)+len(res.Unchanged), pid))
	}
	s.snap = dir
}

// close removes the snapshot's directory.
func (s *liveSnapshot) close() {
	if s == nil {
		return
	}
	s.once.Do(func() {}) // none taken from now on
	s.temp.close()
}

// copiedName is the name jitsnap.CopyPerfFiles gives its copy of from,
// the JIT file of process pid.
func copiedName(from string, pid int) string {
	if strings.HasSuffix(from, ".dump") {
		return fmt.Sprintf("jit-%d.dump", pid)
	}
	return fmt.Sprintf("perf-%d.map", pid)
}
