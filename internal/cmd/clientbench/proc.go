package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCounters are a process's counters that the pinned measurement reads
// at each end of its window.
type procCounters struct {
	user, sys int64 // CPU time in clock ticks (fields 14 and 15 of /proc/PID/stat)
	faults    int64 // minor page faults (field 10): memory the kernel had to map in
	// switches is the context switches of all its threads, voluntary
	// (a thread blocked: parked in epoll, a futex, a read) and not.
	switches int64
	// reads and writes are its read and write system calls (read, recv,
	// write, send… of /proc/PID/io).
	reads, writes int64
}

func (a procCounters) minus(b procCounters) procCounters {
	return procCounters{a.user - b.user, a.sys - b.sys, a.faults - b.faults, a.switches - b.switches, a.reads - b.reads, a.writes - b.writes}
}

// readProc reads the counters of process pid.
func readProc(pid int) (procCounters, error) {
	var c procCounters
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return c, err
	}
	// The command name (field 2) may hold spaces: count fields after it.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return c, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var errs [3]error
	c.faults, errs[0] = strconv.ParseInt(f[7], 10, 64)
	c.user, errs[1] = strconv.ParseInt(f[11], 10, 64)
	c.sys, errs[2] = strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return c, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		c.switches += field(b, "voluntary_ctxt_switches:") + field(b, "nonvoluntary_ctxt_switches:")
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		c.reads, c.writes = field(b, "syscr:"), field(b, "syscw:")
	}
	return c, nil
}

// field is the number after name at the start of a line of b (0 if none).
func field(b []byte, name string) int64 {
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// tcpSegments reads InSegs and OutSegs of the Tcp lines of
// /proc/PID/net/snmp: the counters of pid's network namespace.
func tcpSegments(pid int) (in, out int64, err error) {
	v, err := netCounters(pid, "snmp", "Tcp:", "InSegs", "OutSegs")
	if err != nil {
		return 0, 0, err
	}
	return v[0], v[1], nil
}

// lossProbes reads TCPLossProbes of /proc/PID/net/netstat: the tail loss
// probes the namespace's senders fired, each after an ACK came later than
// about twice the round trip.
func lossProbes(pid int) (int64, error) {
	v, err := netCounters(pid, "netstat", "TcpExt:", "TCPLossProbes")
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// netCounters reads the named counters of a /proc/PID/net file whose lines
// come in pairs, names then values, each starting with prefix.
func netCounters(pid int, file, prefix string, names ...string) ([]int64, error) {
	path := fmt.Sprintf("/proc/%d/net/%s", pid, file)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var header []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != prefix {
			continue
		}
		if header == nil {
			header = f
			continue
		}
		out := make([]int64, len(names))
		for i, name := range names {
			j := slices.Index(header, name)
			if j < 0 || j >= len(f) {
				return nil, fmt.Errorf("%s: no %s %s", path, prefix, name)
			}
			out[i], _ = strconv.ParseInt(f[j], 10, 64)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: no %s counters", path, prefix)
}
