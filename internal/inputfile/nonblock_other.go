//go:build !unix

package inputfile

// nonblock is not needed where there are no FIFOs to open.
const nonblock = 0
