// Package ctxtest holds a context for tests of work that looks at its
// context as it goes: one that is done from its n-th look on, so that an
// interruption lands in the middle of the work at a point the machine's
// speed does not move.
package ctxtest

import (
	"context"
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
