//go:build !unix

package regfile

import "io/fs"

// Allocated returns how many bytes of storage the file fi occupies; this
// system does not say, so ok is false.
func Allocated(fi fs.FileInfo) (n int64, ok bool) { return 0, false }
