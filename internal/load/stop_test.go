package load

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestStopDrainsWithoutCutting: after Stop the phase sends nothing more, the
// requests in flight still finish (none is cut), no later phase starts, and
// Run returns no error.
func TestStopDrainsWithoutCutting(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	wait := runAsync(t, e, []plan.Phase{
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 3, Requests: 100},
		{Name: "second", Kind: plan.KindProfiling, Concurrency: 3, Requests: 100},
	})
	require.Eventually(t, func() bool { return f.inflight.Load() == 3 }, 5*time.Second, time.Millisecond)
	e.Stop()
	e.Stop() // idempotent
	for range 3 {
		f.release <- struct{}{}
	}
	reports := wait()
	require.Len(t, c.recs, 3, "only the requests in flight at Stop")
	for _, r := range c.recs {
		assert.Nil(t, r.Error)
		assert.False(t, r.Cancelled)
		assert.Equal(t, "profiling", r.Phase)
	}
	assert.Equal(t, 3, reports[0].Sent)
	assert.Zero(t, reports[1].Sent, "no later phase starts")
}

// runAsync runs the phases on e in the background; wait returns their
// reports once Run returned without error.
func runAsync(t *testing.T, e *Engine, phases []plan.Phase) (wait func() []PhaseReport) {
	t.Helper()
	var reports []PhaseReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		reports, err = e.Run(context.Background(), phases)
		assert.NoError(t, err)
	}()
	return func() []PhaseReport { <-done; return reports }
}
