//go:build !unix

package driver

import "syscall"

// raise would send the process the signal s: this system cannot, and
// the caller exits as the signal would have ended it.
func raise(s syscall.Signal) {}
