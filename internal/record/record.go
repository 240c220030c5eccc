// Package record records a command it launches, or running processes,
// with the kernel's perf events (perf_event_open(2)), in process, into a
// perf.data file: the file perf record would write, which package
// perfdata turns into a profile and perf report opens.
//
// One event per CPU follows the target and, with inherit, the threads
// and processes it starts; each CPU's events write into one ring buffer,
// which Record copies into the file record by record as the kernel wrote
// them (MMAP2, COMM, FORK, EXIT, SAMPLE, SWITCH, LOST), adding what perf
// record adds for what existed before the recording began: the kernel's
// mapping and, from /proc, each process's threads, command and executable
// mappings. Samples are timed on CLOCK_MONOTONIC, the clock jitdump
// writers stamp their records with.
//
// A command is started stopped: Record starts it traced (ptrace), so
// that it stops right after its exec, before it runs any code; the
// events are opened on it then, and it is released (or, with
// Options.HoldAtExit, kept traced until it exits).
package record

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// CallGraph says how stacks are recorded.
type CallGraph int

const (
	// FramePointers has the kernel walk the frame pointers of the user
	// stack (and the kernel's own), as perf record -g.
	FramePointers CallGraph = iota
	// DWARF copies the user registers and the top of the user stack
	// with each sample (perf record --call-graph dwarf), for the reader
	// to unwind with the call frame information of the files mapped.
	DWARF
)

// Events Record samples on.
const (
	// CPUClock is the software timer event cpu-clock: it works in
	// virtual machines and containers, where hardware counters often
	// are not available; its period is in nanoseconds.
	CPUClock = "cpu-clock"
	// Cycles is the hardware event cycles; where the machine has none,
	// Record falls back to CPUClock and says so.
	Cycles = "cycles"
)

// DefaultFrequency is the sampling frequency, per second of CPU time of
// each thread, when Options.Frequency is 0: a millisecond's resolution
// (samply's default; 10 times Go's CPU profiler's 100 Hz, for short
// runs), and not a round number, so that sampling does not fall into
// step with work done at round intervals (timers ticking every 1 or 10
// ms). A thread busy for a second gives 999 samples, of 64 to 200 bytes
// each with frame-pointer stacks (8 KiB more with -call_graph dwarf).
const DefaultFrequency = 999

// DefaultStackBytes is how much of the user stack a DWARF sample copies,
// perf record's default.
const DefaultStackBytes = 8192

// Options configure Record. Either Command or PIDs is set.
type Options struct {
	// Command is the command to launch and record, looked up in $PATH
	// as a shell does, with its arguments.
	Command []string
	// Dir is the command's working directory; "" is the current one.
	Dir string
	// Environ is the command's environment; nil means os.Environ().
	Environ []string
	// Env, if not nil, is given the command's environment and returns
	// the one it runs with: where the runtimes' switches that make them
	// write perf maps or jitdumps are added (package jitenv).
	Env func(env []string) []string
	// Stdin, Stdout and Stderr are the command's; nil means the
	// process's own.
	Stdin, Stdout, Stderr *os.File

	// PIDs are running processes to attach to, each with all its
	// threads.
	PIDs []int

	// Duration ends the recording after that long; 0 means when the
	// command exits, or when every process attached to has exited.
	Duration time.Duration
	// Signals end the recording early when pprof receives them (Ctrl-C,
	// SIGTERM); a second one kills a launched command that has not
	// exited on the SIGTERM Record sends it.
	Signals []os.Signal

	// Event is CPUClock (the default, for "") or Cycles.
	Event string
	// Frequency is the number of samples per second; 0 means
	// DefaultFrequency.
	Frequency int
	// CallGraph says how stacks are recorded.
	CallGraph CallGraph
	// StackBytes is how much of the user stack DWARF samples copy; 0
	// means DefaultStackBytes.
	StackBytes int
	// OffCPU records when each thread leaves and reenters a CPU
	// (context_switch records) and, where tracefs allows, the stack
	// where it blocked (the sched:sched_switch tracepoint with its
	// callchain).
	OffCPU bool

	// Output is the file the recording is written to.
	Output *os.File
	// CmdLine is the command line the file says recorded it.
	CmdLine []string

	// HoldAtExit, if not nil, keeps a launched command traced and
	// stops it at its exit (PTRACE_O_TRACEEXIT) once its main thread
	// exits, while its memory is still there, and calls HoldAtExit with
	// its pid before it is let go: where the JIT objects of an LLVM JIT
	// are copied out of it (package jitsnap). Signals the command
	// receives meanwhile are passed on to it.
	HoldAtExit func(pid int) error
	// BeforeStop, if not nil, is called with the pids of the processes
	// attached to that are still running, before the recording stops:
	// where a running JVM is asked to write its perf map (package
	// hotspot).
	BeforeStop func(pids []int)

	// Tracefs is the tracefs mount point where the sched:sched_switch
	// tracepoint's id is read for OffCPU; "" finds it in /proc/mounts.
	Tracefs string
	// Log, if not nil, is told what Record does that the user should
	// know (a fallback taken, a command's end), a line at a time.
	Log func(string)
}

// Result says what was recorded.
type Result struct {
	// PIDs are the processes recorded: the command launched, or those
	// attached to.
	PIDs []int
	// Samples is the number of samples of the event written,
	// BlockSamples that of sched:sched_switch samples (the stacks where
	// threads blocked), Bytes the size of the file.
	Samples, BlockSamples int64
	Bytes                 int64
	// Duration is how long the recording ran.
	Duration time.Duration
	// Event is the event sampled, after any fallback.
	Event string
	// KernelExcluded reports that kernel frames were left out
	// (perf_event_paranoid without CAP_PERFMON).
	KernelExcluded bool
	// BlockStacks reports that off-CPU intervals have the stack where
	// each thread blocked (sched:sched_switch); without it, the reader
	// gives them the stack of the thread's last on-CPU sample.
	BlockStacks bool
	// Exit is how the command ended; nil when attaching.
	Exit *ExitStatus
}

// ExitStatus is how a launched command ended.
type ExitStatus struct {
	// Code is its exit status, or 128 plus the signal that killed it, as
	// a shell reports it.
	Code int
	// Signal is the signal that killed it, 0 if it exited.
	Signal syscall.Signal
	// Ended reports that Record ended it (the duration elapsed, or
	// pprof was asked to stop), with SIGTERM or, on a second request,
	// SIGKILL.
	Ended bool
}

func (s *ExitStatus) String() string {
	switch {
	case s.Ended:
		return fmt.Sprintf("ended by pprof (%v)", s.Signal)
	case s.Signal != 0:
		return fmt.Sprintf("killed by signal %d (%v)", int(s.Signal), s.Signal)
	}
	return fmt.Sprintf("exited with status %d", s.Code)
}

// A CommandError reports a command that could not be started, with the
// exit status a shell gives it: 127 not found, 126 found but not
// executable.
type CommandError struct {
	Name   string
	Status int
	Err    error
}

func (e *CommandError) Error() string {
	if e.Status == 127 {
		return e.Name + ": command not found"
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// ErrNoProcess is returned (wrapped, naming the pid) for a process to
// attach to that does not exist.
var ErrNoProcess = errors.New("no such process")

// A PermissionError reports that the kernel refused to record: what was
// refused, why (the kernel's setting or the capability missing), and
// what to run.
type PermissionError struct {
	What string // "recording pid 123", "recording ./prog"
	// Paranoid is kernel.perf_event_paranoid; Other reports a target
	// that belongs to another user.
	Paranoid int
	Other    bool
	Err      error
}

func (e *PermissionError) Error() string {
	if e.Other {
		return fmt.Sprintf("%s: %v: the process belongs to another user; recording it needs root or CAP_PERFMON with ptrace access (CAP_SYS_PTRACE): run pprof with sudo", e.What, e.Err)
	}
	switch {
	case e.Paranoid > 2:
		return fmt.Sprintf("%s: %v: kernel.perf_event_paranoid is %d, which allows no profiling without CAP_PERFMON; run pprof with sudo, or allow profiling of your own processes' user space with: sudo sysctl kernel.perf_event_paranoid=2", e.What, e.Err, e.Paranoid)
	default:
		return fmt.Sprintf("%s: %v: kernel.perf_event_paranoid is %d, and pprof lacks CAP_PERFMON; run pprof with sudo, give it the capability (sudo setcap cap_perfmon,cap_sys_ptrace+ep PPROF), or lower the setting: sudo sysctl kernel.perf_event_paranoid=1", e.What, e.Err, e.Paranoid)
	}
}

func (e *PermissionError) Unwrap() error { return e.Err }
