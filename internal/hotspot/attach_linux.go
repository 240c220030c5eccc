//go:build linux

package hotspot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Jcmd runs the diagnostic command line cmd in the JVM of process pid,
// as `jcmd PID cmd` does, and returns its output. The JVM's attach
// listener is started first if it is not running (see the package doc
// for when the JVM is signalled and when it is not). An error is an
// *Error; a command the JVM ran and refused (an unknown command, or bad
// arguments) is of kind ErrCommand, its message the JVM's.
func (o Options) Jcmd(pid int, cmd string) (string, error) {
	t, err := inspect(pid)
	if err != nil {
		return "", err
	}
	return o.run(t, cmd)
}

// PerfMap is the package's PerfMap with these options.
func (o Options) PerfMap(pid int) (string, error) {
	t, err := inspect(pid)
	if err != nil {
		return "", err
	}
	if _, err := o.run(t, "Compiler.perfmap"); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Kind == ErrCommand {
			e.Hint = "Compiler.perfmap needs JDK 17 or later; start an older JVM with a JVMTI agent such as perf's libperf-jvmti.so"
		}
		return "", err
	}
	return fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, t.nspid), nil
}

// inspect reads what attaching needs from /proc/PID, and refuses a
// process that is not a HotSpot JVM.
func inspect(pid int) (*target, error) {
	if pid <= 0 {
		return nil, &Error{PID: pid, Kind: ErrNoProcess, Msg: "not a process id"}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, procError(pid, "reading its status", err)
	}
	t := &target{pid: pid, nspid: pid}
	if err := parseStatus(status, t); err != nil {
		return nil, &Error{PID: pid, Kind: ErrProtocol, Msg: fmt.Sprintf("reading /proc/%d/status", pid), Err: err}
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, procError(pid, "reading its memory map", err)
	}
	if len(maps) == 0 {
		return nil, &Error{PID: pid, Kind: ErrNotJVM, Msg: "the process has no memory map (a zombie or a kernel thread)"}
	}
	if !mapsLibJVM(maps) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		return nil, &Error{PID: pid, Kind: ErrNotJVM,
			Msg:  fmt.Sprintf("%s does not map libjvm.so: not a HotSpot JVM (not signalled)", strings.TrimSpace(string(comm))),
			Hint: "give the pid of the java process itself, not of a script or launcher that started it"}
	}
	return t, nil
}

// procError classifies an error reading /proc/PID/...
func procError(pid int, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ESRCH):
		return &Error{PID: pid, Kind: ErrNoProcess, Msg: "no such process", Hint: "check the pid; the process may have exited"}
	case errors.Is(err, fs.ErrPermission):
		return &Error{PID: pid, Kind: ErrPermission, Msg: what, Err: err, Hint: permissionHint(pid)}
	}
	return &Error{PID: pid, Kind: ErrProtocol, Msg: what, Err: err}
}

// permissionHint says who may attach to process pid.
func permissionHint(pid int) string {
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &st); err == nil && st.Uid != uint32(os.Geteuid()) {
		return fmt.Sprintf("the JVM runs as uid %d and you are uid %d: run as that user or as root", st.Uid, os.Geteuid())
	}
	return "run as the JVM's user or as root"
}

// run starts the JVM's attach listener if needed, then runs cmd.
func (o Options) run(t *target, cmd string) (string, error) {
	sock := t.socketPath()
	if _, err := os.Stat(sock); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", procError(t.pid, "looking for its attach socket "+sock, err)
		}
		if err := o.startListener(t, sock); err != nil {
			return "", err
		}
	}
	if err := t.checkSocket(sock); err != nil {
		return "", err
	}
	conn, err := t.dial(sock, o.commandTimeout())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(o.commandTimeout()))
	if _, err := conn.Write(request("jcmd", cmd)); err != nil {
		return "", t.ioError("sending the command", err)
	}
	reply, err := io.ReadAll(io.LimitReader(conn, maxReply+1))
	if err != nil {
		return "", t.ioError("reading the reply", err)
	}
	if len(reply) > maxReply {
		return "", &Error{PID: t.pid, Kind: ErrProtocol, Msg: fmt.Sprintf("the reply is longer than %d MiB", maxReply>>20)}
	}
	return parseReply(t.pid, reply)
}

// startListener has the JVM open its attach socket: the trigger file,
// then SIGQUIT, then a wait for the socket, as jcmd does.
func (o Options) startListener(t *target, sock string) error {
	if disabled, where := attachDisabled(t.pid); disabled {
		return &Error{PID: t.pid, Kind: ErrAttachDisabled,
			Msg:  fmt.Sprintf("the JVM was started with -XX:+DisableAttachMechanism (%s): not signalled", where),
			Hint: "restart it without that option, or with -XX:+DumpPerfMapAtExit for a perf map at exit"}
	}
	if !t.catches {
		return &Error{PID: t.pid, Kind: ErrNoSignalHandler,
			Msg:  "the JVM does not catch SIGQUIT (-Xrs or -XX:+ReduceSignalUsage) and has no attach socket " + sock + ": not signalled, SIGQUIT would end it",
			Hint: "such a JVM opens its socket at startup; it may have been removed from its /tmp"}
	}
	trigger, err := t.createTrigger()
	if err != nil {
		return err
	}
	defer os.Remove(trigger)
	if err := syscall.Kill(t.pid, syscall.SIGQUIT); err != nil {
		return procError(t.pid, "sending SIGQUIT", err)
	}
	timeout := o.attachTimeout()
	start := time.Now()
	resent := false
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		time.Sleep(delay)
		if _, err := os.Stat(sock); err == nil {
			return nil
		}
		waited := time.Since(start)
		if waited > timeout {
			return &Error{PID: t.pid, Kind: ErrTimeout,
				Msg:  fmt.Sprintf("no attach socket %s %v after SIGQUIT", sock, waited.Round(time.Millisecond)),
				Hint: "the JVM may be stopped, busy at a safepoint, or not a HotSpot JVM that starts its attach listener on SIGQUIT"}
		}
		if !resent && waited > timeout/2 {
			// As jcmd: a second chance for a JVM that missed the first.
			syscall.Kill(t.pid, syscall.SIGQUIT)
			resent = true
		}
	}
}

// createTrigger creates .attach_pidNSPID in the JVM's working
// directory, or else in its /tmp, owned by the JVM's user and group
// (HotSpot before JDK 11 ignores a trigger of another owner), and
// returns its path.
func (t *target) createTrigger() (string, error) {
	name := fmt.Sprintf(".attach_pid%d", t.nspid)
	var errs []error
	for _, dir := range []string{fmt.Sprintf("/proc/%d/cwd", t.pid), fmt.Sprintf("/proc/%d/root/tmp", t.pid)} {
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if os.Geteuid() == 0 && t.uid != 0 {
			err = f.Chown(int(t.uid), int(t.gid))
		}
		f.Close()
		if err != nil {
			os.Remove(path)
			errs = append(errs, err)
			continue
		}
		return path, nil
	}
	err := errors.Join(errs...)
	kind := ErrProtocol
	if errors.Is(err, fs.ErrPermission) {
		kind = ErrPermission
	}
	return "", &Error{PID: t.pid, Kind: kind, Msg: "cannot create the attach trigger file " + name, Err: err, Hint: permissionHint(t.pid)}
}

// attachDisabled reports whether the JVM's options, as its command line
// and the environment variables the JVM reads show them, end with
// -XX:+DisableAttachMechanism, and where. Options from files
// (-XX:Flags=, @argfiles) are not seen.
func attachDisabled(pid int) (bool, string) {
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	vars := map[string]string{}
	for _, kv := range strings.Split(string(env), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	// The order the JVM reads them in; the last setting wins.
	sources := []struct{ where, text string }{
		{"JAVA_TOOL_OPTIONS", vars["JAVA_TOOL_OPTIONS"]},
		{"JDK_JAVA_OPTIONS", vars["JDK_JAVA_OPTIONS"]},
		{"its command line", strings.ReplaceAll(string(cmdline), "\x00", " ")},
		{"_JAVA_OPTIONS", vars["_JAVA_OPTIONS"]},
	}
	disabled, where := false, ""
	for _, s := range sources {
		for _, tok := range strings.Fields(s.text) {
			switch tok {
			case "-XX:+DisableAttachMechanism":
				disabled, where = true, s.where
			case "-XX:-DisableAttachMechanism":
				disabled = false
			}
		}
	}
	return disabled, where
}

// checkSocket checks, as jcmd does, that the socket is the JVM's: a
// socket owned by the JVM's effective user, closed to group and others.
func (t *target) checkSocket(sock string) error {
	fi, err := os.Lstat(sock)
	if err != nil {
		return procError(t.pid, "looking at its attach socket "+sock, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode().Type() != fs.ModeSocket:
		return &Error{PID: t.pid, Kind: ErrInsecure, Msg: fmt.Sprintf("%s is not a socket (%v)", sock, fi.Mode())}
	case !ok || st.Uid != t.uid:
		return &Error{PID: t.pid, Kind: ErrInsecure, Msg: fmt.Sprintf("%s is owned by uid %d, not by the JVM's user (uid %d)", sock, st.Uid, t.uid)}
	case fi.Mode().Perm()&0o077 != 0:
		return &Error{PID: t.pid, Kind: ErrInsecure, Msg: fmt.Sprintf("%s is open to others (mode %04o)", sock, fi.Mode().Perm())}
	}
	return nil
}

// dial connects to the JVM's socket. As root, for a JVM of another
// user, it connects from a thread switched to the JVM's effective uid
// and gid, which the JVM finds with SO_PEERCRED.
func (t *target) dial(sock string, timeout time.Duration) (net.Conn, error) {
	switchCreds := os.Geteuid() == 0 && t.uid != 0
	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// If the credentials cannot be switched back, the goroutine ends
		// with its thread still locked, and the runtime ends the thread.
		fd, restored, err := connectAs(sock, timeout, switchCreds, t.uid, t.gid)
		if restored {
			runtime.UnlockOSThread()
		}
		done <- result{fd, err}
	}()
	r := <-done
	if r.err != nil {
		return nil, t.ioError("connecting to its attach socket "+sock, r.err)
	}
	f := os.NewFile(uintptr(r.fd), sock)
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, t.ioError("connecting to its attach socket "+sock, err)
	}
	return conn, nil
}

// connectAs opens a Unix socket and connects it to path, on the calling
// thread, which must be locked; with switchCreds, with the thread's
// effective ids set to uid and gid for the connection. restored reports
// whether the thread's credentials are as they were.
func connectAs(path string, timeout time.Duration, switchCreds bool, uid, gid uint32) (fd int, restored bool, err error) {
	const keep = ^uintptr(0) // -1: leave the id as it is
	if switchCreds {
		// setresgid first: once the euid is not 0, the thread may not
		// change its gid. The raw system calls change this thread only;
		// syscall.Setresuid would change every thread of the process.
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, keep, uintptr(gid), keep); e != 0 {
			return -1, true, fmt.Errorf("switching to gid %d: %w", gid, e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, keep, uintptr(uid), keep); e != 0 {
			_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, keep, 0, keep)
			return -1, e2 == 0, fmt.Errorf("switching to uid %d: %w", uid, e)
		}
	}
	fd, err = connect(path, timeout)
	if switchCreds {
		_, _, e1 := unix.RawSyscall(unix.SYS_SETRESUID, keep, 0, keep)
		_, _, e2 := unix.RawSyscall(unix.SYS_SETRESGID, keep, 0, keep)
		if e1 != 0 || e2 != 0 {
			return fd, false, err
		}
	}
	return fd, true, err
}

// connect opens a Unix stream socket connected to path; a connection
// that waits for room in the listener's backlog gives up after timeout.
func connect(path string, timeout time.Duration) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// ioError classifies an error talking to the JVM's socket.
func (t *target) ioError(what string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &Error{PID: t.pid, Kind: ErrPermission, Msg: what, Err: err, Hint: permissionHint(t.pid)}
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, syscall.EAGAIN):
		return &Error{PID: t.pid, Kind: ErrTimeout, Msg: what, Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNREFUSED):
		return &Error{PID: t.pid, Kind: ErrProtocol, Msg: what, Err: err,
			Hint: "the JVM closed the connection: it refuses a client whose uid and gid are not its own, or is exiting"}
	}
	return &Error{PID: t.pid, Kind: ErrProtocol, Msg: what, Err: err}
}
