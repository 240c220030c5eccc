//go:build !linux

package jitsnap

import "runtime"

// Snapshot copies the JIT objects of process pid into dir. It needs
// Linux (/proc and process_vm_readv); elsewhere it returns an *Error of
// kind ErrUnsupported.
func (o Options) Snapshot(pid int, dir string) (*Result, error) {
	return nil, &Error{PID: pid, Kind: ErrUnsupported, Msg: "reading another process's JIT objects is implemented only on Linux, not " + runtime.GOOS}
}
