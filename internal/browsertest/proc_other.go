//go:build !linux

package browsertest

import (
	"errors"
	"os"
	"os/exec"
)

// isolate does nothing outside Linux.
func isolate(cmd *exec.Cmd) {}

// killGroup kills the browser's own process; outside Linux its helper
// processes are left to notice that their parent died.
func killGroup(cmd *exec.Cmd) error {
	err := cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}
