package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/result"
)

// holdLateReset waits, before any load, for the reset attempts of calls
// that got no answer although a retry was answered: a server finishes a
// reset whose client left (vLLM's handler does), so such an attempt may
// still empty the cache, and in the middle of the load if it is sent at
// once. It waits until max(timeout, hooks.LateResetGrace) after the last
// was given up (as a sweep holds its next trial), says so, and warns in the
// run's audit that it may still have run during the load. false when ctx
// ended the wait.
func (c *cell) holdLateReset(ctx context.Context, calls []hooks.Call, timeout time.Duration) bool {
	var (
		until time.Time
		late  hooks.Call
	)
	for _, call := range calls {
		if u := call.LateUntil(timeout); u.After(until) {
			until, late = u, call
		}
	}
	if until.IsZero() {
		return true
	}
	why := fmt.Sprintf(result.WarnOwnLateReset+"%s had %d of its %d attempts get no answer within %s (a retry was answered)",
		late.Origin, late.Unanswered, late.Attempts, timeout)
	wait := time.Until(until)
	if wait > 0 {
		fmt.Fprintf(c.log, "note: %s: waiting %s before the load, since the server may still run it\n", why, wait.Round(time.Second))
	}
	c.warn(why + " and may have run during this run")
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
