//go:build unix

package driver

import (
	"os"
	"syscall"
)

// raise sends the process the signal s.
func raise(s syscall.Signal) { syscall.Kill(os.Getpid(), s) }
