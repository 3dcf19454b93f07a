package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// The picked share converges on the rate, the same seed picks the same
// requests, another seed others, and warmup requests are never picked.
func TestCancellationPicks(t *testing.T) {
	p := plan.NewProfile()
	p.RequestCancellationRate = plan.Ptr(10.0)
	c, other := newCancellation(p), newCancellation(p)
	other.seed = 7
	prof, warm := &plan.Phase{Kind: plan.KindProfiling}, &plan.Phase{Kind: plan.KindWarmup}
	picked, same, differ := 0, 0, 0
	for i := range 100_000 {
		a, _ := c.picks(prof, i)
		if a {
			picked++
		}
		if b, _ := newCancellation(p).picks(prof, i); a == b {
			same++
		}
		if b, _ := other.picks(prof, i); a != b {
			differ++
		}
		w, _ := c.picks(warm, i)
		assert.False(t, w)
	}
	assert.InDelta(t, 10_000, picked, 400)
	assert.Equal(t, 100_000, same)
	assert.Greater(t, differ, 10_000)
	none, _ := newCancellation(plan.NewProfile()).picks(prof, 3)
	assert.False(t, none, "no rate, none picked")
}

// A phase's own cancellation (AIPerf's per-phase YAML) replaces the
// profile's, on any kind of phase, with its own delay; a rate of 0 picks none.
func TestPhaseCancellation(t *testing.T) {
	p := plan.NewProfile()
	p.RequestCancellationRate = plan.Ptr(10.0)
	c := newCancellation(p)
	half := &plan.Phase{Kind: plan.KindWarmup, Cancellation: &plan.Cancellation{Rate: 50, Delay: 0.25}}
	off := &plan.Phase{Kind: plan.KindProfiling, Cancellation: &plan.Cancellation{}}
	picked := 0
	for i := range 10_000 {
		if ok, delay := c.picks(half, i); ok {
			picked++
			assert.Equal(t, 250*time.Millisecond, delay)
		}
		ok, _ := c.picks(off, i)
		assert.False(t, ok)
	}
	assert.InDelta(t, 5_000, picked, 300)
}
