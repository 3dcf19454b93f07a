package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

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
