//go:build unix

package store

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive reports whether a process with this id exists (signal 0
// checks without sending anything; EPERM means it exists as another user's)
// and has not exited: a zombie, dead but not yet reaped by its parent, is
// not alive.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // not a process id: never taken for a dead owner
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether process pid has exited and waits only to be
// reaped: its state in /proc/PID/stat is Z (false where there is no /proc).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')') // the command name, in parentheses, may hold anything
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
