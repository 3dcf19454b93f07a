package main

import (
	"fmt"
	"os"

	"github.com/aiperf-go/aiperf/internal/bench"
	"github.com/aiperf-go/aiperf/internal/termsafe"
)

// leftRunning says what a process exiting at once may leave running: the
// server profilers its runs started and had not stopped (a variable for
// the test).
var leftRunning = bench.ProfilersLeftRunning

// hardExit is a second signal's exit: the dashboard gives back the
// terminal (restoreTerminal), then it says that it exits at once and what
// that may leave running, and exits with ExitInterrupted.
func hardExit() {
	restoreTerminal()
	fmt.Fprint(signalNotes, exitNowMessage("interrupted again: exiting now"))
	os.Exit(ExitInterrupted)
}

// exitNowMessage is what an exit at once says, after what: what it loses
// and what it may leave running.
func exitNowMessage(what string) string {
	msg := "aiperf: " + what + " (what the run in progress had not yet summarised, exported " +
		"or stored is lost; records it already stored stay in the store as an interrupted run)\n"
	for _, note := range leftRunning() {
		msg += "aiperf: " + termsafe.Text(note) + "\n"
	}
	return msg
}
