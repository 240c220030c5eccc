//go:build unix

package jitenv

import "golang.org/x/sys/unix"

// writable reports, as an error, whether the process may create files in
// dir ("" for the current directory).
func writable(dir string) error {
	if dir == "" {
		dir = "."
	}
	return unix.Access(dir, unix.W_OK)
}
