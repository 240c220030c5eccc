//go:build !unix

package regfile

import "os"

// IDOf returns the ID of the open file f: here, its cleaned name.
func IDOf(f *os.File) (ID, error) { return nameID(f), nil }
