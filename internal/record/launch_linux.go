//go:build linux

package record

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A child is a command Record launched. One goroutine, locked to its OS
// thread, starts it and does everything ptrace asks of its tracer: the
// kernel takes ptrace requests only from the thread that is the tracer.
//
// The command starts traced (PTRACE_TRACEME, syscall.SysProcAttr.Ptrace)
// and so stops with SIGTRAP right after its exec, before its first
// instruction; Record opens the events on it then (they follow it and,
// with inherit, what it starts) and synthesizes its mappings from /proc,
// since the kernel has already mapped its program. Then the tracer lets
// it go: it detaches, which discards the SIGTRAP, or, with a hold, keeps
// it traced with PTRACE_O_TRACEEXIT, passing on every signal it
// receives and following its execs, until it stops at its exit, calls
// the hold, and detaches.
//
// If pprof dies while the command is traced, the kernel detaches it: it
// is never left stopped. (Killed in the moment between the exec and the
// detach, a few milliseconds, the command receives the SIGTRAP it
// stopped on, and ends.)
type child struct {
	pid   int
	pidfd int // -1 if the kernel has no pidfd_open (before 5.3)
	hold  func(pid int) error

	release chan bool     // true: go; false: kill it (the events could not be opened)
	done    chan struct{} // closed once it has exited and been reaped

	mu      sync.Mutex
	status  *ExitStatus
	holdErr error
	ended   bool // pprof sent it SIGTERM or SIGKILL
}

// startCommand starts the command of o, stopped after its exec, and
// returns it. notify is called once it has exited.
func startCommand(o *Options, notify func()) (*child, error) {
	name := o.Command[0]
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		err = nil // a shell runs it too
	}
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err // exec.Error repeats the name
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, &CommandError{Name: name, Status: 127, Err: err}
		}
		return nil, &CommandError{Name: name, Status: 126, Err: err}
	}
	env := o.Environ
	if env == nil {
		env = os.Environ()
	}
	if o.Env != nil {
		env = o.Env(env)
	}
	files := []uintptr{0, 1, 2}
	for i, f := range []*os.File{o.Stdin, o.Stdout, o.Stderr} {
		if f != nil {
			files[i] = f.Fd()
		}
	}
	c := &child{pidfd: -1, hold: o.HoldAtExit, release: make(chan bool, 1), done: make(chan struct{})}
	started := make(chan error, 1)
	go c.trace(path, o.Command, &syscall.ProcAttr{Dir: o.Dir, Env: env, Files: files,
		Sys: &syscall.SysProcAttr{Ptrace: true}}, started, notify)
	if err := <-started; err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &CommandError{Name: name, Status: 127, Err: err}
		}
		return nil, &CommandError{Name: name, Status: 126, Err: err}
	}
	return c, nil
}

// trace is the tracer goroutine: it starts the command, reports on
// started, and waits for release.
func (c *child) trace(path string, argv []string, attr *syscall.ProcAttr, started chan<- error, notify func()) {
	// The thread stays locked until the goroutine ends, and then ends
	// with it: no other goroutine runs on a tracer thread.
	runtime.LockOSThread()
	defer func() {
		close(c.done)
		notify()
	}()
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		started <- err
		return
	}
	c.pid = pid
	var ws unix.WaitStatus
	if _, err := wait4(pid, &ws, 0); err != nil || !ws.Stopped() {
		// It ended before its exec stop (killed by another process).
		c.exited(ws)
		started <- nil
		return
	}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil { // close-on-exec
		c.pidfd = fd
	}
	started <- nil
	if !<-c.release {
		unix.Kill(pid, unix.SIGKILL)
		unix.PtraceDetach(pid)
		c.waitExit()
		return
	}
	if c.hold == nil {
		unix.PtraceDetach(pid) // data 0: the exec's SIGTRAP is not delivered
		c.waitExit()
		return
	}
	// PTRACE_O_TRACEEXEC: an exec of the traced thread (sh -c 'exec
	// java ...', a program that re-executes itself) stops at an event
	// instead of raising a SIGTRAP, which would end the command.
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXIT|unix.PTRACE_O_TRACEEXEC); err != nil {
		unix.PtraceDetach(pid)
		c.setHoldErr(err)
		c.waitExit()
		return
	}
	unix.PtraceCont(pid, 0)
	for {
		if _, err := wait4(pid, &ws, 0); err != nil {
			return
		}
		switch {
		case ws.Exited() || ws.Signaled():
			c.exited(ws)
			return
		case !ws.Stopped():
			continue
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXEC:
			unix.PtraceCont(pid, 0)
		case ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXIT:
			// Its main thread is exiting: its memory is still there.
			c.setHoldErr(c.hold(pid))
			unix.PtraceDetach(pid)
			c.waitExit()
			return
		case groupStop(pid):
			// A stop signal took effect: resuming it is the only way
			// not to leave it stopped for good (a traced process in a
			// group stop waits for its tracer, not for SIGCONT).
			unix.PtraceCont(pid, 0)
		default:
			unix.PtraceCont(pid, int(ws.StopSignal())) // pass the signal on
		}
	}
}

// groupStop reports whether the traced, stopped process pid is in a
// group stop rather than stopped for a signal's delivery:
// PTRACE_GETSIGINFO fails only then.
func groupStop(pid int) bool {
	var info [128]byte // siginfo_t
	_, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_GETSIGINFO, uintptr(pid), 0, uintptr(unsafe.Pointer(&info[0])), 0, 0)
	return errno == unix.EINVAL
}

// waitExit waits for the command, no longer traced, to exit.
func (c *child) waitExit() {
	var ws unix.WaitStatus
	for {
		if _, err := wait4(c.pid, &ws, 0); err != nil {
			return
		}
		if ws.Exited() || ws.Signaled() {
			c.exited(ws)
			return
		}
	}
}

func wait4(pid int, ws *unix.WaitStatus, options int) (int, error) {
	for {
		wpid, err := unix.Wait4(pid, ws, options, nil)
		if err != unix.EINTR {
			return wpid, err
		}
	}
}

func (c *child) exited(ws unix.WaitStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &ExitStatus{Code: ws.ExitStatus(), Ended: c.ended}
	if ws.Signaled() {
		s.Signal = syscall.Signal(ws.Signal())
		s.Code = 128 + int(s.Signal)
	}
	c.status = s
}

func (c *child) setHoldErr(err error) {
	c.mu.Lock()
	c.holdErr = err
	c.mu.Unlock()
}

// signal sends the command sig, noting that pprof ended it. Through
// its pidfd, the signal cannot reach another process that got its pid
// once it was reaped.
func (c *child) signal(sig unix.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status != nil {
		return
	}
	c.ended = true
	if c.pidfd >= 0 {
		unix.PidfdSendSignal(c.pidfd, sig, nil, 0)
	} else {
		unix.Kill(c.pid, sig)
	}
}

// close releases the pidfd, once the command has been reaped.
func (c *child) close() {
	<-c.done
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
}

// result returns how the command ended and the hold's error.
func (c *child) result() (*ExitStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.holdErr
}
