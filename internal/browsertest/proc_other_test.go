//go:build !linux

package browsertest

// processGroupAlive cannot tell outside Linux, where the browser has no
// group of its own.
func processGroupAlive(pgid int) bool { return false }
