package load

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func TestScheduleConstantIsAbsolute(t *testing.T) {
	s := NewSchedule(plan.Phase{Rate: 3, RateMode: plan.RateConstant}, 1)
	var got []int64
	for i := 0; i < 7; i++ {
		got = append(got, s.Next())
	}
	// 1/3 s gaps computed from i, so no rounding drift: the 6th send is at exactly 2 s.
	assert.Equal(t, []int64{0, 333333333, 666666667, 1000000000, 1333333333, 1666666667, 2000000000}, got)
}

func TestSchedulePoissonSeededAndRateMatches(t *testing.T) {
	ph := plan.Phase{Rate: 100, RateMode: plan.RatePoisson}
	a, b, c := NewSchedule(ph, 7), NewSchedule(ph, 7), NewSchedule(ph, 8)
	var last int64
	same, differ := true, false
	const n = 20000
	for i := 0; i < n; i++ {
		x, y, z := a.Next(), b.Next(), c.Next()
		require.GreaterOrEqual(t, x, last, "offsets never go backwards")
		last = x
		same = same && x == y
		differ = differ || x != z
	}
	assert.True(t, same, "same seed, same arrivals")
	assert.True(t, differ, "other seed, other arrivals")
	rate := float64(n-1) / (float64(last) / 1e9)
	assert.InDelta(t, 100, rate, 3, "mean rate of %d exponential gaps", n)
}

// fakeServer is a Sender whose requests block until released, so tests can
// observe in-flight counts without sleeping.
type fakeServer struct {
	clock    Clock
	inflight atomic.Int64
	maxSeen  atomic.Int64
	release  chan struct{} // nil: answer at once
	mu       sync.Mutex
	events   []string
}

func (f *fakeServer) log(s string) {
	f.mu.Lock()
	f.events = append(f.events, s)
	f.mu.Unlock()
}

func (f *fakeServer) send(ctx context.Context, c Credit) metrics.Record {
	raise(&f.maxSeen, f.inflight.Add(1))
	defer f.inflight.Add(-1)
	rec := metrics.Record{Index: c.Index, Phase: c.Phase.Name, PhaseKind: c.Phase.Kind, ScheduledNs: c.ScheduledNs, SentNs: f.clock.Now()}
	f.log("send " + c.Phase.Name)
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			rec.Error = &metrics.Error{Type: "Cancelled", Message: ctx.Err().Error()}
		}
	}
	rec.EndNs = f.clock.Now()
	return rec
}

type collector struct {
	mu   sync.Mutex
	recs []metrics.Record
}

func (c *collector) add(r metrics.Record) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
}

func newEngine(f *fakeServer, c *collector) *Engine {
	return &Engine{Clock: f.clock, Source: SingleTurn(f.send), OnRecord: c.add}
}

func TestConcurrencyModeKeepsNInFlight(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := e.Run(context.Background(), []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, Requests: 20}})
		assert.NoError(t, err)
	}()
	// Let every request through one at a time: each release frees one slot,
	// which must immediately be refilled until the count runs out.
	for i := 0; i < 20; i++ {
		require.Eventually(t, func() bool { return f.inflight.Load() == int64(min(4, 20-i)) }, 5*time.Second, time.Millisecond)
		f.release <- struct{}{}
	}
	<-done
	assert.Len(t, c.recs, 20)
	assert.EqualValues(t, 4, f.maxSeen.Load())
	idx := map[int]bool{}
	for _, r := range c.recs {
		idx[r.Index] = true
		assert.Equal(t, r.ScheduledNs <= r.SentNs, true)
	}
	assert.Len(t, idx, 20, "credit indexes are unique")
}

func TestRateModeCapDelaysAndCounts(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	var reports []PhaseReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		// 1e6 req/s: every send is due at once, so the third finds both slots busy.
		reports, err = e.Run(context.Background(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Rate: 1e6, RateMode: plan.RateConstant, Concurrency: 2, Requests: 6, CapPolicy: plan.CapDelay}})
		assert.NoError(t, err)
	}()
	require.Eventually(t, func() bool { return f.inflight.Load() == 2 }, 5*time.Second, time.Millisecond)
	for i := 0; i < 6; i++ {
		f.release <- struct{}{}
	}
	<-done
	require.Len(t, c.recs, 6)
	assert.EqualValues(t, 2, f.maxSeen.Load(), "the cap bounds in-flight requests")
	assert.Equal(t, 6, reports[0].Sent)
	assert.GreaterOrEqual(t, reports[0].CapDelayed, 1, "sends that found no free slot are counted")
	for _, r := range c.recs {
		// scheduled times stay on the absolute grid (i µs) even when the cap delayed the send.
		assert.Zero(t, (r.ScheduledNs-reports[0].StartNs)%1000, "scheduled on the grid: %d", r.ScheduledNs)
	}
}

func TestPhasesHooksOrderAndWarmupSeparation(t *testing.T) {
	f := &fakeServer{clock: NewClock()}
	c := &collector{}
	e := newEngine(f, c)
	e.Hooks = Hooks{
		BeforeSend: func(_ context.Context, ph plan.Phase) error { f.log("before " + ph.Name); return nil },
		Drained:    func(ph plan.Phase) { f.log("drained " + ph.Name) },
	}
	phases := []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 2, Requests: 3},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 2, Requests: 5},
	}
	reports, err := e.Run(context.Background(), phases)
	require.NoError(t, err)
	require.Len(t, reports, 2)
	assert.Equal(t, 3, reports[0].Sent)
	assert.Equal(t, 5, reports[1].Sent)
	want := []string{"before warmup", "send warmup", "send warmup", "send warmup", "drained warmup", "before profiling"}
	assert.Equal(t, want, f.events[:6], "a non-seamless phase waits for the previous one to drain")
	assert.Equal(t, "drained profiling", f.events[len(f.events)-1])
	kinds := map[string]int{}
	for _, r := range c.recs {
		kinds[r.PhaseKind]++
	}
	assert.Equal(t, map[string]int{plan.KindWarmup: 3, plan.KindProfiling: 5}, kinds)
}

func TestSeamlessPhaseStartsBeforePreviousDrains(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	started := make(chan string, 4)
	e.Hooks.BeforeSend = func(_ context.Context, ph plan.Phase) error { started <- ph.Name; return nil }
	phases := []plan.Phase{
		{Name: "a", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1},
		{Name: "b", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1, Seamless: true},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := e.Run(context.Background(), phases)
		assert.NoError(t, err)
	}()
	assert.Equal(t, "a", within(t, started))
	assert.Equal(t, "b", within(t, started), "b starts while a's request is still in flight")
	require.Eventually(t, func() bool { return f.inflight.Load() == 2 }, time.Minute, time.Millisecond)
	f.release <- struct{}{}
	f.release <- struct{}{}
	<-done
	assert.Len(t, c.recs, 2)
}

// within receives from ch, failing the test (never hanging it) after a minute.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatal("nothing arrived within a minute")
		panic("unreachable")
	}
}

func TestBeforeSendErrorAbortsPhase(t *testing.T) {
	f := &fakeServer{clock: NewClock()}
	c := &collector{}
	e := newEngine(f, c)
	e.Hooks.BeforeSend = func(_ context.Context, ph plan.Phase) error {
		if ph.Kind == plan.KindProfiling {
			return assert.AnError
		}
		return nil
	}
	_, err := e.Run(context.Background(), []plan.Phase{
		{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 1, Requests: 2},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 1, Requests: 2},
	})
	require.ErrorIs(t, err, assert.AnError)
	for _, r := range c.recs {
		assert.Equal(t, plan.KindWarmup, r.PhaseKind, "no profiling request was sent")
	}
}

func TestGracePeriodCancelsStragglers(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})} // never released
	c := &collector{}
	e := newEngine(f, c)
	drained := make(chan struct{})
	e.Hooks.Drained = func(plan.Phase) { close(drained) }
	reports, err := e.Run(context.Background(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Concurrency: 3, Duration: 1, GracePeriod: 0}})
	require.NoError(t, err)
	<-drained
	sent := reports[0].Sent
	assert.True(t, sent >= 1 && sent <= 3, "each slot sends at most once, then the duration ends: %d", sent)
	assert.Equal(t, sent, reports[0].Cancelled)
	assert.Len(t, c.recs, sent)
	for _, r := range c.recs {
		assert.True(t, r.Cancelled)
	}
}

func TestCancelStopsIssuingAndStillDrains(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
	c := &collector{}
	e := newEngine(f, c)
	var drainedCalls atomic.Int32
	e.Hooks.Drained = func(plan.Phase) { drainedCalls.Add(1) }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel() // also when the wait fails: Run must end either way
		assert.Eventually(t, func() bool { return f.inflight.Load() == 2 }, time.Minute, time.Millisecond)
	}()
	_, err := e.Run(ctx, []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Rate: 1000, RateMode: plan.RateConstant, Concurrency: 2, Requests: 100}})
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 1, drainedCalls.Load(), "the drained hook runs even after Ctrl-C (profiler stop)")
	assert.Len(t, c.recs, 2)
	for _, r := range c.recs {
		assert.True(t, r.Cancelled)
	}
}

func TestPrecisePacingKeepsSchedule(t *testing.T) {
	f := &fakeServer{clock: NewClock()}
	c := &collector{}
	e := newEngine(f, c)
	e.Precise = true
	_, err := e.Run(context.Background(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling, Rate: 500, RateMode: plan.RatePoisson, Requests: 50}})
	require.NoError(t, err)
	require.Len(t, c.recs, 50)
	for _, r := range c.recs {
		assert.GreaterOrEqual(t, r.SentNs, r.ScheduledNs, "never sent early")
	}
}

// A seamless phase's BeforeSend must run before its predecessor's Drained,
// even when the predecessor drains first: reference-counted hooks (the
// server profiler) rely on it to share one start/stop.
func TestSeamlessHandoffOrdersHooks(t *testing.T) {
	f := &fakeServer{clock: NewClock()}
	c := &collector{}
	e := newEngine(f, c)
	release := make(chan struct{})
	e.Hooks = Hooks{
		BeforeSend: func(_ context.Context, ph plan.Phase) error {
			if ph.Name == "b" {
				// a's only request has returned by now; hold b's start
				// until the test has seen that a did not report drained.
				<-release
			}
			f.log("before " + ph.Name)
			return nil
		},
		Drained: func(ph plan.Phase) { f.log("drained " + ph.Name) },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := e.Run(context.Background(), []plan.Phase{
			{Name: "a", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1},
			{Name: "b", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1, Seamless: true},
		})
		assert.NoError(t, err)
	}()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.recs) == 1
	}, 5*time.Second, time.Millisecond)
	f.mu.Lock()
	assert.NotContains(t, f.events, "drained a", "a waits for b to start")
	f.mu.Unlock()
	close(release)
	<-done
	assert.Less(t, slices.Index(f.events, "before b"), slices.Index(f.events, "drained a"), "%v", f.events)
	assert.Contains(t, f.events, "drained b")
}

// With a cap that stays full, the schedule's backlog must not be sent after
// the duration ends: issuing stops at the end, then the grace period runs.
func TestRateCapStopsIssuingAtDurationEnd(t *testing.T) {
	f := &fakeServer{clock: NewClock(), release: make(chan struct{})} // never released
	c := &collector{}
	e := newEngine(f, c)
	reports, err := e.Run(context.Background(), []plan.Phase{{Name: "p", Kind: plan.KindProfiling,
		Rate: 1000, RateMode: plan.RateConstant, Concurrency: 1, Duration: 1, GracePeriod: 0}})
	require.NoError(t, err)
	assert.Equal(t, 1, reports[0].Sent, "only the first send found a free slot before the end")
	assert.Equal(t, 1, reports[0].Cancelled, "the grace period cut it")
	assert.LessOrEqual(t, reports[0].CapDelayed, 1)
	assert.Len(t, c.recs, 1)
}

// A duration-bound rate phase stops issuing when its duration ends, not at
// its last scheduled send: a seamless successor starts no earlier.
func TestRatePhaseLastsItsDuration(t *testing.T) {
	f := &fakeServer{clock: NewClock()}
	c := &collector{}
	e := newEngine(f, c)
	reports, err := e.Run(context.Background(), []plan.Phase{
		{Name: "a", Kind: plan.KindProfiling, Rate: 1, RateMode: plan.RateConstant, Duration: 1.5, GracePeriod: -1},
		{Name: "b", Kind: plan.KindProfiling, Concurrency: 1, Requests: 1, Seamless: true},
	})
	require.NoError(t, err)
	// 500 ms between the last send due and the end, either way: room for a
	// late timer on a loaded machine.
	assert.Equal(t, 2, reports[0].Sent, "sends at 0 and 1 s; the next (2 s) is past the end")
	for _, r := range c.recs {
		if r.Phase == "b" {
			assert.GreaterOrEqual(t, r.SentNs, reports[0].StartNs+1500*int64(time.Millisecond), "b starts once a's 1.5 s are over")
		}
	}
}
