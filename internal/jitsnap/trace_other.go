//go:build !linux

package jitsnap

import (
	"os/exec"
	"runtime"
)

// StartTraced needs Linux (ptrace); elsewhere it returns an *Error of
// kind ErrUnsupported and does not start cmd.
func (o Options) StartTraced(cmd *exec.Cmd, dir string) (*Tracer, error) {
	return nil, &Error{Kind: ErrUnsupported, Msg: "tracing a command to its exit is implemented only on Linux, not " + runtime.GOOS}
}

// Resume does nothing: there is no Tracer outside Linux.
func (t *Tracer) Resume() {}

// Wait waits for the command: there is no Tracer outside Linux.
func (t *Tracer) Wait() (*Exit, error) {
	err := t.cmd.Wait()
	return &Exit{State: t.cmd.ProcessState}, err
}
