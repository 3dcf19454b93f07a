package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

// stopSignals are the signals that stop a run cleanly (interruptContext):
// SIGINT (Ctrl-C), SIGTERM, and SIGHUP, the terminal closed (an ssh
// session dropped), unless the process was started with SIGHUP ignored
// (nohup): Notify would catch it again, and a hang-up would stop a run
// meant to outlive its terminal.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// signalName names a signal that stops a run.
func signalName(sig os.Signal) string {
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

// quitOnSIGQUIT makes SIGQUIT (Ctrl-\) exit at once with ExitQuit, as a
// second Ctrl-C does, in place of Go's default (the goroutines' stacks
// drawn over the dashboard, the terminal left as it drew it, exit 2): the
// dashboard gives the terminal back first, then the goroutines' stacks are
// printed (what Ctrl-\ is for in a Go program that seems stuck), then what
// exiting at once may lose or leave running. The returned function stops
// it.
func quitOnSIGQUIT() (stop func()) {
	quits := make(chan os.Signal, 1)
	signal.Notify(quits, syscall.SIGQUIT)
	done := make(chan struct{})
	go func() {
		select {
		case <-quits:
			restoreTerminal()
			fmt.Fprintf(signalNotes, "SIGQUIT: quit\n\n%s\n", goroutineStacks())
			fmt.Fprint(signalNotes, exitNowMessage(`SIGQUIT (Ctrl-\): exiting now, the goroutines' stacks above`))
			os.Exit(ExitQuit)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(quits)
		close(done)
	}
}

// goroutineStacks is every goroutine's stack, as Go's SIGQUIT prints them.
func goroutineStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
