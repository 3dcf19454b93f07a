package main

import (
	"io"
	"sync/atomic"
)

// liveView is the dashboard while it draws on the terminal: what a signal
// makes aiperf say goes above it (notes, its log), never over it, and an
// exit at once first gives the terminal back (restore).
type liveView struct {
	notes   io.Writer
	restore func()
}

// onTerminal is the live view drawing now (nil: none).
var onTerminal atomic.Pointer[liveView]

// signalNote is where a note about a signal is printed: above the live
// view while it draws, else signalNotes.
func signalNote() io.Writer {
	if v := onTerminal.Load(); v != nil {
		return v.notes
	}
	return signalNotes
}

// restoreTerminal gives the terminal back from the live view, if one
// draws, before a process exits without closing it.
func restoreTerminal() {
	if v := onTerminal.Load(); v != nil {
		v.restore()
	}
}
