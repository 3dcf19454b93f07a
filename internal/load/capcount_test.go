package load

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// runHeld runs ph on a server that holds every request until the test
// releases it: each request is released once it was sent and some
// schedule ticks (1 µs apart) have come due while it was in flight. It
// returns the phase's report and the ticks of the sends.
func runHeld(t *testing.T, ph plan.Phase) (PhaseReport, []int64) {
	t.Helper()
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	var reports []PhaseReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		reports, err = e.Run(context.Background(), []plan.Phase{ph})
		assert.NoError(t, err)
	}()
	for i := range ph.Requests {
		require.Eventually(t, func() bool {
			f.mu.Lock()
			defer f.mu.Unlock()
			return len(f.events) == i+1
		}, time.Minute, time.Millisecond) // the limit only guards against a hang
		// Thousands of ticks come due while the request is held: the
		// issuer meets them with the cap full (unless the machine kept it
		// from running all along: the assertions hold either way).
		time.Sleep(20 * time.Millisecond)
		f.release <- struct{}{}
	}
	<-done
	require.Len(t, reports, 1)
	r := reports[0]
	var ticks []int64
	for _, rec := range c.recs {
		ticks = append(ticks, (rec.ScheduledNs-r.StartNs)/int64(time.Microsecond))
	}
	return r, ticks
}

// TestCapSkipsOnlyWhileASessionMayStart: a tick that finds the cap full
// once the request count is sent skips nothing (no send was due), so a
// lone request skips none and the second of two skips exactly the ticks
// between the two sends.
func TestCapSkipsOnlyWhileASessionMayStart(t *testing.T) {
	ph := plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 1e6, RateMode: plan.RateConstant, Concurrency: 1, Requests: 1}
	r, _ := runHeld(t, ph)
	assert.Equal(t, 1, r.Sent)
	assert.Zero(t, r.CapSkipped, "the one request went at once: nothing was skipped")

	ph.Requests = 2
	r, ticks := runHeld(t, ph)
	require.Equal(t, 2, r.Sent)
	require.Len(t, ticks, 2)
	assert.Equal(t, int64(0), min(ticks[0], ticks[1]), "the first request goes on the first tick")
	second := max(ticks[0], ticks[1])
	assert.EqualValues(t, second-1, r.CapSkipped, "the ticks between the two sends are skipped, none after the second")
	assert.Zero(t, r.CapDelayed)
}

// TestCapDelaysOnlyWhileASessionMayStart: under CapDelay a send that never
// waited is not counted as delayed.
func TestCapDelaysOnlyWhileASessionMayStart(t *testing.T) {
	ph := plan.Phase{Name: "p", Kind: plan.KindProfiling, Rate: 1e6, RateMode: plan.RateConstant, Concurrency: 1, Requests: 1,
		CapPolicy: plan.CapDelay}
	r, _ := runHeld(t, ph)
	assert.Equal(t, 1, r.Sent)
	assert.Zero(t, r.CapDelayed, "the one request went at once: nothing waited")

	ph.Requests = 2
	r, ticks := runHeld(t, ph)
	require.Equal(t, 2, r.Sent)
	assert.Equal(t, []int64{0, 1}, ticks, "the delayed send keeps its tick")
	// The second waited for the first (unless the issuer did not run until
	// the first was released); nothing after it waited, whatever the timing.
	assert.LessOrEqual(t, r.CapDelayed, 1)
	assert.Zero(t, r.CapSkipped)
}
