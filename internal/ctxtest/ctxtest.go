// Package ctxtest holds contexts for tests of interruptions: one done from
// its n-th look on, and a writer that cancels one when a run writes a
// marker, so that an interruption lands in the middle of the work at a
// point the machine's speed does not move.
package ctxtest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DoneAfter is a context whose Err is context.Canceled from its n-th call
// on; Looks counts the calls. It has no Done channel: it is for work that
// polls Err.
type DoneAfter struct {
	context.Context
	n, looks atomic.Int64
}

// NewDoneAfter is a DoneAfter done from the n-th look.
func NewDoneAfter(n int64) *DoneAfter {
	c := &DoneAfter{Context: context.Background()}
	c.n.Store(n)
	return c
}

// Err is nil before the n-th call, context.Canceled from it on.
func (c *DoneAfter) Err() error {
	if c.looks.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// Looks is how many times Err was called.
func (c *DoneAfter) Looks() int64 { return c.looks.Load() }

// Done is nil: the context is polled, never waited on.
func (c *DoneAfter) Done() <-chan struct{} { return nil }

// Deadline is none.
func (c *DoneAfter) Deadline() (time.Time, bool) { return time.Time{}, false }

// CancelOn is a writer that calls Cancel once what was written to it holds
// Marker: an interruption at a known point of a run that logs as it goes
// (the in-process stand-in for a Ctrl-C, with no race against the
// machine's speed). String is what was written.
type CancelOn struct {
	Marker string
	Cancel context.CancelFunc
	mu     sync.Mutex
	b      bytes.Buffer
}

func (c *CancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.Write(p)
	if strings.Contains(c.b.String(), c.Marker) {
		c.Cancel()
	}
	return len(p), nil
}

func (c *CancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
