package hotspot

import (
	"errors"
	"strconv"
	"strings"
)

// Kinds of failure. Every error of this package is an *Error whose Kind
// is one of these, so callers can test errors.Is(err, ErrNotJVM).
var (
	// ErrNoProcess: there is no process with that pid.
	ErrNoProcess = errors.New("no such process")
	// ErrNotJVM: the process does not map libjvm.so. It was not
	// signalled.
	ErrNotJVM = errors.New("not a HotSpot JVM")
	// ErrPermission: the caller may not attach to the process (another
	// user's, and the caller is not root).
	ErrPermission = errors.New("permission denied")
	// ErrAttachDisabled: the JVM was started with
	// -XX:+DisableAttachMechanism. It was not signalled.
	ErrAttachDisabled = errors.New("attach mechanism disabled")
	// ErrNoSignalHandler: the JVM does not catch SIGQUIT (-Xrs) and has
	// no attach socket. It was not signalled: SIGQUIT would end it.
	ErrNoSignalHandler = errors.New("JVM does not catch SIGQUIT")
	// ErrTimeout: the JVM did not open its attach socket in time after
	// SIGQUIT, or did not answer in time.
	ErrTimeout = errors.New("JVM did not respond")
	// ErrInsecure: the attach socket is not the JVM's (wrong owner or
	// mode); it was not used.
	ErrInsecure = errors.New("attach socket not trusted")
	// ErrCommand: the JVM ran the request and reported a failure (an
	// unknown command, say).
	ErrCommand = errors.New("command failed in the JVM")
	// ErrProtocol: the JVM's reply is not what the protocol says, or
	// talking to it failed otherwise.
	ErrProtocol = errors.New("attach protocol error")
	// ErrUnsupported: not on Linux.
	ErrUnsupported = errors.New("unsupported")
)

// An Error is a failed attach to, or command in, one JVM.
type Error struct {
	PID  int    // the target process
	Kind error  // one of the Err* values of this package
	Msg  string // what happened
	Hint string // what to do about it, or ""
	Err  error  // the underlying error, or nil
}

// Error returns "pid PID: what happened: cause; what to do".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("pid ")
	b.WriteString(strconv.Itoa(e.PID))
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
