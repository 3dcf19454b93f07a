package load

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// gapStats draws n gaps of a schedule and returns their mean (seconds) and
// coefficient of variation.
func gapStats(t *testing.T, s *Schedule, n int) (mean, cv float64) {
	t.Helper()
	prev := s.Next()
	require.Zero(t, prev, "the first send is at the phase start")
	var sum, sum2 float64
	for i := 0; i < n; i++ {
		x := s.Next()
		require.GreaterOrEqual(t, x, prev, "offsets never go backwards")
		g := float64(x-prev) / 1e9
		sum += g
		sum2 += g * g
		prev = x
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(sum2/float64(n)-mean*mean) / mean
}

// TestScheduleGammaShape: gamma gaps keep the mean 1/rate whatever the
// smoothness, and their coefficient of variation is 1/sqrt(shape), as
// vLLM's burstiness: below 1 burstier than Poisson, above 1 more regular.
func TestScheduleGammaShape(t *testing.T) {
	const n, rate = 200000, 50.0
	for _, shape := range []float64{0.25, 0.5, 1, 2, 4, 16} {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			mean, cv := gapStats(t, NewSchedule(plan.Phase{Rate: rate, RateMode: plan.RateGamma, Smoothness: shape}, 3), n)
			assert.InEpsilon(t, 1/rate, mean, 0.02, "mean gap")
			assert.InEpsilon(t, 1/math.Sqrt(shape), cv, 0.03, "coefficient of variation")
		})
	}
}

// TestScheduleGammaSeeded: the same seed gives the same arrivals, another
// seed others; an unset smoothness (0) is shape 1, Poisson-like gaps.
func TestScheduleGammaSeeded(t *testing.T) {
	ph := plan.Phase{Rate: 10, RateMode: plan.RateGamma, Smoothness: 0.5}
	a, b, c := NewSchedule(ph, 11), NewSchedule(ph, 11), NewSchedule(ph, 12)
	differ := false
	for i := 0; i < 1000; i++ {
		x, y, z := a.Next(), b.Next(), c.Next()
		require.Equal(t, x, y)
		differ = differ || x != z
	}
	assert.True(t, differ)

	_, cv := gapStats(t, NewSchedule(plan.Phase{Rate: 10, RateMode: plan.RateGamma}, 5), 100000)
	assert.InEpsilon(t, 1, cv, 0.03, "shape 1 by default")
}

func BenchmarkScheduleGamma(b *testing.B) {
	s := NewSchedule(plan.Phase{Rate: 1000, RateMode: plan.RateGamma, Smoothness: 0.5}, 1)
	for b.Loop() {
		s.Next()
	}
}
