//go:build !unix

package jitenv

import "os"

// writable reports, as an error, whether the process may create files in
// dir ("" for the current directory): here, by making one.
func writable(dir string) error {
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, ".jitpprof-writable-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
