//go:build unix

package profile

import "syscall"

// syscallNonblock makes an open of something that is not a regular file
// return at once instead of waiting for a writer.
const syscallNonblock = syscall.O_NONBLOCK
