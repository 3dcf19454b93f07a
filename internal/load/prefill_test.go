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

// TestPrefillRamp: --prefill-concurrency-ramp-duration opens the prefill
// cap's slots one at a time: a request enters prefill only with a slot the
// ramp has opened, and all 4 are open at the end of the ramp.
func TestPrefillRamp(t *testing.T) {
	f := &prefillServer{clock: NewClock(), first: make(chan struct{}), rest: make(chan struct{})}
	const n, ramp = 4, 0.3
	var start atomic.Int64
	var over atomic.Int64 // entries beyond the slots the ramp had opened
	send := func(ctx context.Context, c Credit) metrics.Record {
		if open, _ := rampedCap(n, ramp, f.clock.Now()-start.Load()); f.prefill.Load()+1 > int64(open) {
			over.Add(1)
		}
		return f.send(ctx, c)
	}
	e := &Engine{Clock: f.clock, Source: SingleTurn(send), OnRecord: (&collector{}).add,
		Hooks: Hooks{BeforeSend: func(context.Context, plan.Phase) error { start.Store(f.clock.Now()); return nil }}}
	wait := runAsync(t, e, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: n, PrefillConcurrency: n,
		PrefillRamp: ramp, Requests: 8}})
	require.Eventually(t, func() bool { return f.prefill.Load() == n }, 5*time.Second, time.Millisecond, "every slot opens")
	close(f.first)
	close(f.rest)
	wait()
	assert.Zero(t, over.Load(), "no request entered prefill before the ramp opened its slot")
	assert.EqualValues(t, n, f.maxPrefill.Load())
}
