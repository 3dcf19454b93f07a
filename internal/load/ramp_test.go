package load

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestConcurrencyRampSteps: AIPerf's discrete ramp, from 1 slot at the
// start to n at the ramp's end, one more every ramp/(n-1).
func TestConcurrencyRampSteps(t *testing.T) {
	var opens []int64
	for k := range 5 {
		opens = append(opens, plan.SlotOpens(k, 5, 4))
	}
	assert.Equal(t, []int64{0, 1e9, 2e9, 3e9, 4e9}, opens)
	for _, c := range []struct {
		at   int64
		open int
		next int64
	}{{0, 1, 1e9}, {999_999_999, 1, 1e9}, {1e9, 2, 2e9}, {3.5e9, 4, 4e9}, {4e9, 5, -1}, {9e9, 5, -1}} {
		open, next := rampedCap(5, 4, c.at)
		assert.Equal(t, c.open, open, "open at %d", c.at)
		assert.Equal(t, c.next, next, "next at %d", c.at)
	}
	open, next := rampedCap(5, 0, 0)
	assert.Equal(t, 5, open, "no ramp")
	assert.EqualValues(t, -1, next)
}

// TestRateRampSchedule: a constant rate of 10/s ramped over 20 s starts at
// target·0.1/20 for 0.1 s, rises linearly (the gap halfway is twice the target's),
// reaches the target at 20 s and keeps it; sends stay in order.
func TestRateRampSchedule(t *testing.T) {
	s := NewSchedule(plan.Phase{Rate: 10, RateMode: plan.RateConstant, RateRamp: 20}, 1)
	var at []float64
	for range 400 {
		at = append(at, float64(s.Next())/1e9)
	}
	require.Zero(t, at[0])
	// 0.05 req/s for the first 0.1 s, then target·t/20: the first send
	// after 0 is where ∫ rate reaches 1.
	assert.InDelta(t, math.Sqrt(2*20*(0.1-0.1*0.1/20)+0.1*0.1), at[1], 1e-6)
	for i := 1; i < len(at); i++ {
		require.Greater(t, at[i], at[i-1])
	}
	// Sends within the ramp: ∫ rate = 10·(20/2 + 0.1²/(2·20)) ≈ 100.
	n := 0
	for _, x := range at {
		if x < 20 {
			n++
		}
	}
	assert.InDelta(t, 100, n, 2)
	assert.InDelta(t, 0.1, at[len(at)-1]-at[len(at)-2], 1e-6, "the target's gap after the ramp")
	// Halfway, the rate is 5/s: gaps of 0.2 s.
	for i := 1; i < len(at); i++ {
		if at[i] >= 10 {
			assert.InDelta(t, 0.2, at[i]-at[i-1], 0.01)
			break
		}
	}
}

// TestConcurrencyRampHoldsSlots: with a ramp far longer than the test, only
// the first slot is open: one request in flight at a time, in concurrency
// mode and under a rate mode's cap.
func TestConcurrencyRampHoldsSlots(t *testing.T) {
	for _, ph := range []plan.Phase{
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 4, ConcurrencyRamp: 3600, Requests: 6},
		{Name: "profiling", Kind: plan.KindProfiling, Rate: 1e6, RateMode: plan.RateConstant, Concurrency: 4, ConcurrencyRamp: 3600, Requests: 6},
	} {
		f := &fakeServer{clock: NewClock(), release: make(chan struct{})}
		c := &collector{}
		wait := runAsync(t, newEngine(f, c), []plan.Phase{ph})
		for range 6 {
			require.Eventually(t, func() bool { return f.inflight.Load() == 1 }, 5*time.Second, time.Millisecond)
			f.release <- struct{}{}
		}
		wait()
		assert.Len(t, c.recs, 6)
		assert.EqualValues(t, 1, f.maxSeen.Load(), "rate %g", ph.Rate)
	}
}
