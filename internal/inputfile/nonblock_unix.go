//go:build unix

package inputfile

import "syscall"

// nonblock opens a FIFO without waiting for its writer; it changes nothing
// for a regular file.
const nonblock = syscall.O_NONBLOCK
