// Package stopsignal is which signals stop aiperf's commands cleanly and
// how they are named to the user: aiperf's runs and the mock server take
// the same ones, under the same names.
package stopsignal

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that stop a command cleanly: SIGINT (Ctrl-C),
// SIGTERM, and SIGHUP, the terminal closed (an ssh session dropped),
// unless the process was started with SIGHUP ignored (nohup): Notify would
// catch it again, and a hang-up would stop a process meant to outlive its
// terminal.
func Signals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// Name names a signal that stops a command.
func Name(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP (hang-up: the terminal was closed)"
	}
	return sig.String()
}
