//go:build unix

package regfile

import "syscall"

// nonblock makes an open of something that is not a regular file
// return at once instead of waiting for a writer.
const nonblock = syscall.O_NONBLOCK
