package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/result"
)

// reset resets the KV cache of every origin once, before any load.
func (c *cell) reset(ctx context.Context) error {
	h := c.p.ResetHook()
	if !h.Enabled {
		return nil
	}
	mark, origins := c.o.ResetMark, c.p.Origins()
	if !c.holdEarlierReset(ctx, mark) {
		return fmt.Errorf("interrupted while waiting for a KV-cache reset left unanswered (no load was sent): %w", ctx.Err())
	}
	sent := time.Now()
	c.markReset(mark, origins, sent, sent.Add(time.Duration(len(origins))*(h.MaxRetry+h.Timeout)+max(h.Timeout, hooks.LateResetGrace)))
	calls, err := c.control.Reset(ctx, origins, h)
	c.run.ControlHooks = append(c.run.ControlHooks, calls...)
	logCalls(c.log, calls)
	if err != nil && ctx.Err() != nil { // the mark now waits from the interrupt
		c.markReset(mark, origins, sent, time.Now().Add(max(h.Timeout, hooks.LateResetGrace)))
		return fmt.Errorf("interrupted during the KV-cache reset call (no load was sent): %w", err)
	}
	if err != nil { // a reset left unanswered keeps its mark: this trial's next run waits for it
		if late, _ := lateUntil(calls, h.Timeout); late.IsZero() {
			unmark(mark)
		} else {
			c.markReset(mark, origins, sent, late)
		}
		return fmt.Errorf("%w (no load was sent)", err) // err says "reset kv cache: …"
	}
	if !c.holdLateReset(ctx, calls, h.Timeout) {
		return fmt.Errorf("interrupted while waiting for a KV-cache reset left unanswered (no load was sent): %w", ctx.Err())
	}
	unmark(mark) // answered, or waited for: nothing of it is left to run
	return nil
}

// holdLateReset waits, before any load, for the reset attempts of calls
// that got no answer although a retry was answered: a server finishes a
// reset whose client left (vLLM's handler does), so such an attempt may
// still empty the cache, and in the middle of the load if it is sent at
// once. It waits until max(timeout, hooks.LateResetGrace) after the last
// was given up (as a sweep holds its next trial), says so, and warns in the
// run's audit that it may still have run during the load. false when ctx
// ended the wait.
func (c *cell) holdLateReset(ctx context.Context, calls []hooks.Call, timeout time.Duration) bool {
	until, late := lateUntil(calls, timeout)
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
	return wait <= 0 || sleepCtx(ctx, wait)
}

// lateUntil is the latest hooks.Call.LateUntil of calls, and that call:
// the zero time when every attempt was answered.
func lateUntil(calls []hooks.Call, timeout time.Duration) (until time.Time, late hooks.Call) {
	for _, call := range calls {
		if u := call.LateUntil(timeout); u.After(until) {
			until, late = u, call
		}
	}
	return until, late
}

// resetMark is the evidence a reset leaves on disk (Options.ResetMark, a
// sweep trial's directory) from just before it is sent until every attempt
// was answered, or was waited for: a run interrupted in between (a Ctrl-C,
// a kill) leaves it, and the trial's next run (`aiperf sweep --resume`)
// waits for that reset, which its server may still run, before its load.
// It holds no secret.
type resetMark struct {
	Origins []string `json:"origins"`
	SentAt  int64    `json:"sent_at_ns"`
	// Until is when a reset it records has run if it ever will: its
	// attempts' time, then the grace (hooks.Call.LateUntil). Written
	// before the reset as the attempts could take longest, and again at an
	// interrupt, from then.
	Until int64 `json:"until_ns"`
}

// markReset writes the mark of a reset about to be sent to origins (or,
// sent at sentAt and cut now, again); "" path: none.
func (c *cell) markReset(path string, origins []string, sentAt, until time.Time) {
	if path == "" {
		return
	}
	b, _ := json.Marshal(resetMark{Origins: origins, SentAt: sentAt.UnixNano(), Until: until.UnixNano()}) // cannot fail
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, b, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil { // the run goes on: only a --resume after its interrupt would not wait for this reset
		fmt.Fprintf(c.log, "warning: write the KV-cache reset's mark: %v\n", err)
	}
}

// unmark removes the reset's mark at path ("": none).
func unmark(path string) {
	if path != "" {
		_ = os.Remove(path)
	}
}

// holdEarlierReset waits, before this run's reset, for the reset an earlier
// run of this trial left unanswered (its mark at path), until that reset
// has run if it ever will, and warns that it may have run during this run.
// false when ctx ended the wait.
func (c *cell) holdEarlierReset(ctx context.Context, path string) bool {
	b, err := os.ReadFile(path)
	if path == "" || err != nil {
		return true
	}
	var m resetMark
	if json.Unmarshal(b, &m) != nil {
		return true // not one of ours: nothing to wait for
	}
	wait := time.Until(time.Unix(0, m.Until))
	if wait <= 0 {
		return true
	}
	why := fmt.Sprintf("%san earlier run of this trial (sent to %s at %s) got no answer before that run ended",
		result.WarnOwnLateReset, strings.Join(m.Origins, ", "), time.Unix(0, m.SentAt).Format(time.TimeOnly))
	fmt.Fprintf(c.log, "note: %s: waiting %s before this run's reset, since the server may still run it\n", why, wait.Round(time.Second))
	c.warn(why + " and may have run during this run")
	return sleepCtx(ctx, wait)
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
