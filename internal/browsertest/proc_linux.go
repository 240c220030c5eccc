package browsertest

import (
	"errors"
	"os/exec"
	"syscall"
)

// isolate puts the browser in a process group of its own, so that
// killGroup reaches its helper processes too, and has the kernel kill it
// if the test process dies first.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group isolate made for cmd, which may
// outlive cmd's own process.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil // Everything has exited already.
	}
	return err
}
