package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// prefillServer answers in two steps, each released by the test: the first
// token (which ends the request's prefill), then the rest.
type prefillServer struct {
	clock                Clock
	prefill, inflight    atomic.Int64
	maxPrefill, maxTotal atomic.Int64
	first, rest          chan struct{}
}

func raise(m *atomic.Int64, n int64) {
	for {
		if o := m.Load(); n <= o || m.CompareAndSwap(o, n) {
			return
		}
	}
}

func (f *prefillServer) send(ctx context.Context, c Credit) metrics.Record {
	raise(&f.maxTotal, f.inflight.Add(1))
	defer f.inflight.Add(-1)
	raise(&f.maxPrefill, f.prefill.Add(1))
	<-f.first
	f.prefill.Add(-1)
	c.FirstToken()
	<-f.rest
	return metrics.Record{Index: c.Index, Phase: c.Phase.Name, PhaseKind: c.Phase.Kind, ScheduledNs: c.ScheduledNs, SentNs: f.clock.Now()}
}

// TestPrefillCap: with --prefill-concurrency 2 under a concurrency of 4, at
// most 2 requests wait for their first token at once, while 4 are in
// flight once the first tokens came.
func TestPrefillCap(t *testing.T) {
	f := &prefillServer{clock: NewClock(), first: make(chan struct{}), rest: make(chan struct{})}
	c := &collector{}
	e := &Engine{Clock: f.clock, Source: SingleTurn(f.send), OnRecord: c.add}
	wait := runAsync(t, e, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, PrefillConcurrency: 2, Requests: 8}})
	require.Eventually(t, func() bool { return f.prefill.Load() == 2 }, 5*time.Second, time.Millisecond)
	f.first <- struct{}{}
	f.first <- struct{}{} // two past prefill: two more may enter it
	require.Eventually(t, func() bool { return f.inflight.Load() == 4 && f.prefill.Load() == 2 }, 5*time.Second, time.Millisecond)
	close(f.first) // every later request passes prefill at once, and ends
	close(f.rest)
	reports := wait()
	assert.Len(t, c.recs, 8)
	assert.EqualValues(t, 2, f.maxPrefill.Load())
	assert.EqualValues(t, 4, f.maxTotal.Load())
	assert.Positive(t, reports[0].CapDelayed, "sends that waited for a prefill slot are counted")
}
