//go:build !unix

package regfile

import "os"

// Holes returns how many bytes of [off, off+size) of f are holes; this
// system does not say, so ok is false.
func Holes(f *os.File, off, size int64) (holes int64, ok bool) { return 0, false }
