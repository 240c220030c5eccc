//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd

package driver

import "os"

// isTerminal reports whether f is a terminal: here, a character device.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
