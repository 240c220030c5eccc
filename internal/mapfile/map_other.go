//go:build !unix

package mapfile

import "os"

func mmap(f *os.File, size int) ([]byte, error) { return nil, ErrUnsupported }

func munmap(b []byte) error { return nil }

func release(b []byte) {}
