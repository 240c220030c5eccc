package jitsnap

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// Kinds of failure. Every error Snapshot returns is an *Error whose Kind
// is one of these, so callers can test errors.Is(err, ErrNoObjects).
var (
	// ErrNoProcess: there is no process with that pid, or it exited
	// during the snapshot.
	ErrNoProcess = errors.New("no such process")
	// ErrPermission: the kernel refused to let us read the process
	// (another user's process, Yama ptrace_scope, a non-dumpable process).
	ErrPermission = errors.New("permission denied")
	// ErrNoInterface: no loaded ELF file defines __jit_debug_descriptor.
	ErrNoInterface = errors.New("no GDB JIT interface")
	// ErrNoObjects: the interface exists but its list is empty.
	ErrNoObjects = errors.New("no JIT objects registered")
	// ErrUnsupported: the target is a 32-bit process or of a byte order
	// or layout jitsnap does not read.
	ErrUnsupported = errors.New("unsupported target")
	// ErrCorrupt: the descriptor or the list is not what LLVM writes
	// (wrong version, a cycle, a dangling pointer, too many entries).
	ErrCorrupt = errors.New("corrupt JIT descriptor or list")
	// ErrUnstable: the list changed between every two reads.
	ErrUnstable = errors.New("JIT object list kept changing")
	// ErrTooLarge: the objects together exceed Options.MaxTotalSize.
	ErrTooLarge = errors.New("JIT objects too large")
	// ErrWrite: the target was read, but its objects could not be
	// stored.
	ErrWrite = errors.New("cannot write JIT objects")
)

// An Error is a failed snapshot of one process. Its message names the
// process, what went wrong and where, and says what to do about it.
type Error struct {
	PID  int    // the target process, or 0 if not known
	Kind error  // one of the Err* values of this package
	Addr uint64 // the address in the target involved, or 0
	Msg  string // what happened, such as "reading /proc/42/maps"
	Hint string // what to do about it, or ""
	Err  error  // the underlying error, or nil
}

// Error returns "pid PID: what happened: cause; what to do".
func (e *Error) Error() string {
	var b strings.Builder
	if e.PID != 0 {
		fmt.Fprintf(&b, "pid %d: ", e.PID)
	}
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

// Is reports whether target is e's Kind, so errors.Is(err, ErrPermission)
// holds for a permission error.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// A ReadError is a failed read of the target's memory.
type ReadError struct {
	Addr uint64 // first address of the read
	Len  uint64 // bytes asked for
	Err  error  // the system call's error, such as unix.EFAULT
}

// Error names the address range and the system call's error.
func (e *ReadError) Error() string {
	return fmt.Sprintf("reading %d bytes at %#x: %v", e.Len, e.Addr, e.Err)
}

// Unwrap returns the system call's error.
func (e *ReadError) Unwrap() error { return e.Err }

// An ObjectError says why one list entry was skipped: its symfile is
// not in readable memory, is too large, or is not a valid relocatable ELF.
type ObjectError struct {
	Entry   uint64 // address of the jit_code_entry
	Symfile uint64 // its symfile_addr
	Size    uint64 // its symfile_size
	Err     error  // what is wrong; an *elfrel.FormatError or *elfrel.UnsupportedError for a bad ELF
}

// Error names the entry, its symfile and the problem.
func (e *ObjectError) Error() string {
	msg := e.Err.Error()
	if r, ok := e.Err.(interface{ Reason() string }); ok {
		msg = "invalid ELF: " + r.Reason() // the error's own name for the file is "symfile"
	}
	return fmt.Sprintf("entry %#x: symfile %#x size %d: %s", e.Entry, e.Symfile, e.Size, msg)
}

// Unwrap returns the problem.
func (e *ObjectError) Unwrap() error { return e.Err }

// classifyReadError turns a failed read of the target into an *Error
// of the right kind: the process is gone, access is denied, or (Kind
// ErrCorrupt) the address is not readable. The caller sets PID and, for
// ErrPermission, the hint.
func classifyReadError(what string, addr uint64, err error) *Error {
	e := &Error{Kind: ErrCorrupt, Addr: addr, Msg: what, Err: err}
	switch {
	case errors.Is(err, syscall.ESRCH), errors.Is(err, fs.ErrNotExist):
		e.Kind, e.Hint = ErrNoProcess, "the process exited"
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		e.Kind = ErrPermission
	}
	return e
}
