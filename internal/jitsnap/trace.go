package jitsnap

import (
	"os"
	"os/exec"
	"sync"
	"time"
)

// A Tracer runs a command it started until the command exits, and
// snapshots the command's JIT objects just before, while its memory is
// still there: a JIT host that never dumps its objects is symbolized all
// the same. It holds the process at its exit with ptrace
// (PTRACE_O_TRACEEXIT), only for the snapshot, and otherwise lets it run
// untouched.
//
// What is traced is the command's process: its main thread, with none of
// the threads or child processes it creates (no PTRACE_O_TRACECLONE or
// TRACEFORK), so that they cost nothing; execve(2) keeps the process
// (PTRACE_O_TRACEEXEC), as a JIT host that re-executes itself does. The
// ptrace stops are then: one at the command's first instruction (where
// StartTraced hands it over, for a recorder to open its events on it
// before it runs), one per signal the main thread receives (passed on at
// once), one per execve, and one at the exit. A job-control stop
// (SIGSTOP, SIGTSTP) of the traced thread is continued at once, as
// ptrace without PTRACE_SEIZE must: a stop signal sent to the command
// alone does not stop it while it is traced (Ctrl-Z at a terminal stops
// the tracer too, and with it the command).
//
// The process is never left stopped or traced: the tracer detaches at
// the exit stop whatever the snapshot did; if the tracing process dies,
// the kernel detaches the command, which runs on. PTRACE_O_EXITKILL is
// not set: a profiler that is killed must not take the profiled program
// with it (as perf record does not). A tracer that should stop the
// command on Ctrl-C needs nothing either: the terminal sends SIGINT to
// both, and the tracer passes it on; it should itself keep running until
// the command has exited.
//
// Other processes, such as one started with -pid, are snapshotted at the
// end of a recording with Snapshot instead.
type Tracer struct {
	cmd  *exec.Cmd
	dir  string
	opts Options

	started    chan error    // the first stop, or why not
	resume     chan struct{} // closed by Resume
	resumeOnce sync.Once
	done       chan *Exit
}

// An Exit is what happened at a traced command's exit.
type Exit struct {
	// State is the command's exit status, as exec.Cmd.Wait leaves it in
	// Cmd.ProcessState.
	State *os.ProcessState
	// Snapshot is the snapshot taken at the exit, or nil if there was
	// none (SnapshotErr says why). A command killed by a signal stops
	// at its exit too, even by SIGKILL (Linux 6.18 holds it there, as a
	// test here checks); a kernel that did not would leave the snapshot
	// racing with the process's teardown.
	Snapshot *Result
	// SnapshotErr is why there is no Snapshot: an *Error, of kind
	// ErrNoInterface for a program without a GDB JIT interface; nil when
	// there is one.
	SnapshotErr error
	// Held is how long the command was held at its exit for the
	// snapshot.
	Held time.Duration
	// Stops counts the ptrace stops of the command: the cost of tracing
	// it (the first and the exit stop included).
	Stops int
}

// StartTraced starts cmd as cmd.Start does, traced, with the default
// Options; see Options.StartTraced.
func StartTraced(cmd *exec.Cmd, dir string) (*Tracer, error) {
	return Options{}.StartTraced(cmd, dir)
}

// Pid returns the command's process id.
func (t *Tracer) Pid() int { return t.cmd.Process.Pid }
