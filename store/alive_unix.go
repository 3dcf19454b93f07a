//go:build unix

package store

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// processAlive reports whether the process that wrote a claim with this
// pid and start (processStart's; "" in an older claim) still runs: a
// process with this id exists (signal 0 checks without sending anything;
// EPERM means it exists as another user's), has not exited (a zombie,
// dead but not yet reaped by its parent, is not alive) and, when /proc
// tells, started when the claim's owner did — a pid held by a process
// started since (a reused pid, a container's pid 1 restarted) is not the
// owner. A claim holding this very process's pid is its own only when it
// carries its start: an older one is a previous process's.
func processAlive(pid int, start string) bool {
	if pid <= 0 {
		return true // not a process id: never taken for a dead owner
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	state, now := procStat(pid)
	switch {
	case now == "": // no /proc: the pid is all there is to go by
		return pid != os.Getpid() || start == ""
	case state == 'Z':
		return false
	case pid == os.Getpid():
		return start == now
	}
	return start == "" || start == now
}

// processStart is the instance of process pid, as claims record it: the
// boot's id and the process's start time in clock ticks since that boot
// ("" where there is no /proc to read them from).
func processStart(pid int) string {
	_, start := procStat(pid)
	return start
}

// selfStart is this process's processStart.
var selfStart = sync.OnceValue(func() string { return processStart(os.Getpid()) })

// bootID is the kernel's id of this boot ("" when unknown): start times
// count from it.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// procStat reads process pid's state and its instance (processStart) from
// /proc/PID/stat (0 and "" when it cannot be read).
func procStat(pid int) (state byte, start string) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')') // the command name, in parentheses, may hold anything
	if err != nil || i < 0 || i+2 >= len(b) {
		return 0, ""
	}
	fields := strings.Fields(string(b[i+2:])) // from field 3, the state
	if len(fields) < 20 {
		return b[i+2], ""
	}
	return b[i+2], bootID() + " " + fields[19] // field 22, starttime
}

// zombie reports whether process pid has exited and waits only to be
// reaped: its state in /proc/PID/stat is Z (false where there is no /proc).
func zombie(pid int) bool {
	state, _ := procStat(pid)
	return state == 'Z'
}
