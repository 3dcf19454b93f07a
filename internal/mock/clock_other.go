//go:build !linux

package mock

import (
	"sync/atomic"
	"time"
)

// osClock is how the clock's goroutine sleeps off Linux: on Go's timers,
// so no more precisely than they fire.
type osClock struct {
	woken chan struct{}
}

func newOSClock() *osClock { return &osClock{woken: make(chan struct{}, 1)} }

// setup returns the mode GET /mock/timing reports.
func (o *osClock) setup() string { return "go-timer" }

// sleep waits until nanotime reaches until (noDeadline: no timeout), or
// word no longer holds seq, or a wake cuts it short.
func (o *osClock) sleep(word *atomic.Uint32, seq uint32, until int64) {
	if word.Load() != seq {
		return
	}
	if until == noDeadline {
		<-o.woken
		return
	}
	t := time.NewTimer(time.Duration(until - nanotime()))
	defer t.Stop()
	select {
	case <-t.C:
	case <-o.woken:
	}
}

// wake cuts short a sleep (a stale wake only makes the next one return
// early).
func (o *osClock) wake(*atomic.Uint32) {
	select {
	case o.woken <- struct{}{}:
	default:
	}
}
