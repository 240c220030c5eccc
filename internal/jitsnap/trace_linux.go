//go:build linux

package jitsnap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// StartTraced starts cmd as cmd.Start does, with SysProcAttr.Ptrace set
// (other SysProcAttr fields are kept), from an OS thread that a
// goroutine of the Tracer keeps for the ptrace requests (the kernel
// takes them only from the thread that started the tracee). It returns
// once the command has executed its program and is stopped at its first
// instruction: open the recording's events on Pid then, and call
// Resume. Wait then waits for the command's end, after the snapshot into
// dir.
//
// If the command cannot be made ready (it is killed at its first
// instruction and reaped), or cannot be started, StartTraced returns the
// error and the command does not run. Once it has returned, Resume or
// Wait must be called: the command waits at its first instruction until
// then. To give up on a command that has not run (its recording could
// not be set up), kill it (cmd.Process.Kill) and Wait.
func (o Options) StartTraced(cmd *exec.Cmd, dir string) (*Tracer, error) {
	var attr syscall.SysProcAttr
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	attr.Ptrace = true
	cmd.SysProcAttr = &attr
	t := &Tracer{cmd: cmd, dir: dir, opts: o,
		started: make(chan error, 1), resume: make(chan struct{}), done: make(chan *Exit, 1)}
	go t.run()
	if err := <-t.started; err != nil {
		return nil, err
	}
	return t, nil
}

// Resume lets the command run from its first instruction. Calling it
// again does nothing.
func (t *Tracer) Resume() {
	t.resumeOnce.Do(func() { close(t.resume) })
}

// Wait resumes the command if Resume was not called, waits until it has
// exited, having been snapshotted at its exit, and returns what happened
// then, with the error cmd.Wait returns (an *exec.ExitError for a
// non-zero status). Call it instead of cmd.Wait, once.
func (t *Tracer) Wait() (*Exit, error) {
	t.Resume()
	ex := <-t.done
	err := t.cmd.Wait()
	ex.State = t.cmd.ProcessState
	return ex, err
}

// run is the tracer's goroutine, on its own OS thread.
func (t *Tracer) run() {
	runtime.LockOSThread()
	// If the command could not be let go cleanly, the goroutine ends on
	// its locked thread, which the runtime then ends, and the kernel
	// detaches what that thread traced.
	clean := true
	defer func() {
		if clean {
			runtime.UnlockOSThread()
		}
	}()
	if err := t.cmd.Start(); err != nil {
		t.started <- err
		return
	}
	pid := t.cmd.Process.Pid
	ex := &Exit{}
	if err := t.first(pid); err != nil {
		t.cmd.Process.Kill() // at its first instruction: nothing of it ran
		t.cmd.Wait()
		t.started <- err
		return
	}
	ex.Stops++
	t.started <- nil
	<-t.resume
	clean = t.follow(pid, ex)
	t.done <- ex
}

// first waits for the stop at the command's first instruction (the
// SIGTRAP of its execve under PTRACE_TRACEME) and sets the options.
func (t *Tracer) first(pid int) error {
	s, err := nextStop(pid)
	switch {
	case err != nil:
		return fmt.Errorf("waiting for %s (pid %d) to start: %w", t.cmd.Path, pid, err)
	case s.exited:
		return fmt.Errorf("%s (pid %d) exited before its first instruction", t.cmd.Path, pid)
	case s.event != 0 || s.sig != int(syscall.SIGTRAP):
		return fmt.Errorf("%s (pid %d) stopped with signal %d, event %d before its first instruction, not SIGTRAP", t.cmd.Path, pid, s.sig, s.event)
	}
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXIT|unix.PTRACE_O_TRACEEXEC); err != nil {
		return fmt.Errorf("tracing %s (pid %d): %w", t.cmd.Path, pid, err)
	}
	return nil
}

// follow runs the command from its first stop to its exit stop, where
// it snapshots and detaches, or to its death. It reports false if a
// ptrace request failed and the tracee could not be detached.
func (t *Tracer) follow(pid int, ex *Exit) bool {
	sig := 0 // the signal to pass on when resuming; none at the first stop
	for {
		if err := unix.PtraceCont(pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			// ESRCH: killed (SIGKILL) while stopped; its exit follows.
			return unix.PtraceDetach(pid) == nil
		}
		s, err := nextStop(pid)
		if err != nil || s.exited {
			if ex.Snapshot == nil && ex.SnapshotErr == nil {
				ex.SnapshotErr = &Error{PID: pid, Kind: ErrNoProcess,
					Msg: "the process ended without stopping at its exit, so its JIT objects were not copied"}
			}
			return true
		}
		ex.Stops++
		sig = 0
		switch {
		case s.event == unix.PTRACE_EVENT_EXIT:
			start := time.Now()
			ex.Snapshot, ex.SnapshotErr = t.snapshot(pid)
			ex.Held = time.Since(start)
			// The exit goes on untraced; cmd.Wait reaps it.
			err := unix.PtraceDetach(pid)
			return err == nil || errors.Is(err, unix.ESRCH)
		case s.event != 0: // PTRACE_EVENT_EXEC
		case groupStop(pid):
			// Without PTRACE_SEIZE, a job-control stop cannot be held
			// and released with the group: it is continued.
		default:
			sig = s.sig // a signal-delivery stop: the signal goes on
		}
	}
}

// snapshot copies the JIT objects of the process, stopped at its exit,
// never panicking: a tracer that panicked would leave it stopped until
// this process ended.
func (t *Tracer) snapshot(pid int) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &Error{PID: pid, Kind: ErrCorrupt, Msg: fmt.Sprintf("snapshot at exit failed: %v", r)}
		}
	}()
	return t.opts.Snapshot(pid, t.dir)
}

// si_code values of SIGCHLD (asm-generic/siginfo.h), which x/sys/unix
// does not define.
const (
	cldExited  = 1
	cldKilled  = 2
	cldDumped  = 3
	cldTrapped = 4
	cldStopped = 5
)

// A stop is what nextStop saw.
type stop struct {
	exited bool // the process ended (left unreaped, for cmd.Wait)
	sig    int  // the stop's signal
	event  int  // its PTRACE_EVENT_*, 0 for a signal stop
}

// nextStop waits for the next ptrace stop of pid, which it consumes, or
// for its end, which it leaves to be reaped by cmd.Wait (waitid with
// WNOWAIT, then WSTOPPED only).
func nextStop(pid int) (stop, error) {
	for {
		var si unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return stop{}, err
		}
		code, _, status := childInfo(&si)
		switch code {
		case cldExited, cldKilled, cldDumped:
			return stop{exited: true}, nil
		case cldTrapped, cldStopped:
		default: // CLD_CONTINUED is not asked for
			return stop{}, fmt.Errorf("waitid: unexpected si_code %d", code)
		}
		// Consume the stop. WSTOPPED alone never reaps: if the process
		// was killed since, there is no stop, and the loop sees the end.
		var got unix.Siginfo
		err = unix.Waitid(unix.P_PID, pid, &got, unix.WSTOPPED|unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return stop{}, err
		}
		if _, p, _ := childInfo(&got); p != int32(pid) {
			continue
		}
		// For a PTRACE_EVENT stop, si_status is SIGTRAP | event<<8, as
		// the kernel's exit_code.
		return stop{sig: int(status & 0xff), event: int(status>>8) & 0xff}, nil
	}
}

// childInfo decodes the SIGCHLD fields of a siginfo that waitid filled:
// si_code, si_pid and si_status. x/sys/unix leaves the union opaque; it
// follows si_signo, si_errno and si_code, aligned to a pointer.
func childInfo(si *unix.Siginfo) (code, pid, status int32) {
	const union = 3*4 + (unsafe.Sizeof(uintptr(0)) - 4)
	b := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(si))
	return si.Code, int32(binary.NativeEndian.Uint32(b[union:])), int32(binary.NativeEndian.Uint32(b[union+8:]))
}

// groupStop reports whether the tracee's signal stop is a group-stop
// (PTRACE_GETSIGINFO fails with EINVAL for one) rather than the
// delivery of a signal.
func groupStop(pid int) bool {
	var si unix.Siginfo
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(pid), 0, uintptr(unsafe.Pointer(&si)), 0, 0)
	return e == unix.EINVAL
}
