package bench

import (
	"testing"

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
	picked, same, differ := 0, 0, 0
	for i := range 100_000 {
		a := c.picks(plan.KindProfiling, i)
		if a {
			picked++
		}
		if a == newCancellation(p).picks(plan.KindProfiling, i) {
			same++
		}
		if a != other.picks(plan.KindProfiling, i) {
			differ++
		}
		assert.False(t, c.picks(plan.KindWarmup, i))
	}
	assert.InDelta(t, 10_000, picked, 400)
	assert.Equal(t, 100_000, same)
	assert.Greater(t, differ, 10_000)
	assert.False(t, newCancellation(plan.NewProfile()).picks(plan.KindProfiling, 3), "no rate, none picked")
}
