//go:build !unix

package profile

const syscallNonblock = 0
