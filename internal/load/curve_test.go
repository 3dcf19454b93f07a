package load

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestCurveInvertsTheRateIntegral: at(n) is when the series' integral
// reaches n: constant, a ramp from 0 (t²/2 = n), a pause at rate 0 that
// takes no sends, and the last rate held after the points.
func TestCurveInvertsTheRateIntegral(t *testing.T) {
	c := newCurve([]plan.RatePoint{{TimeS: 0, QPS: 10}})
	assert.InDelta(t, 0.5, c.at(5), 1e-12)
	ramp := newCurve([]plan.RatePoint{{TimeS: 0, QPS: 0}, {TimeS: 10, QPS: 10}})
	assert.InDelta(t, 4, ramp.at(8), 1e-9, "t²/2 = 8")
	assert.InDelta(t, 12, ramp.at(70), 1e-9, "50 by t=10, then 10/s")
	pause := newCurve([]plan.RatePoint{{TimeS: 0, QPS: 2}, {TimeS: 10, QPS: 2}, {TimeS: 11, QPS: 0}, {TimeS: 20, QPS: 0}, {TimeS: 21, QPS: 2}})
	assert.InDelta(t, 5, pause.at(10), 1e-9)
	assert.InDelta(t, 11, pause.at(21), 1e-9, "reached as the rate falls to 0")
	assert.InDelta(t, 20.5, pause.at(21.25), 1e-9, "nothing more is sent while the rate is 0")
	for n := 0.0; n < 40; n += 0.25 { // monotone
		assert.LessOrEqual(t, pause.at(n), pause.at(n+0.25))
	}
}

// TestScheduleFollowsRateSeries: a constant-pattern schedule on a series
// from 10/s to 30/s over 10 s sends the series' integral by each time
// (within one send).
func TestScheduleFollowsRateSeries(t *testing.T) {
	pts := []plan.RatePoint{{TimeS: 0, QPS: 10}, {TimeS: 10, QPS: 30}}
	s := NewSchedule(plan.Phase{Rate: plan.MeanRate(pts), RateMode: plan.RateConstant, RateSeries: pts}, 1)
	var sends []int64
	for range 400 {
		sends = append(sends, s.Next())
	}
	for _, at := range []float64{2, 5, 10, 12} {
		want := 10*at + at*at // ∫(10 + 2t) over [0, at], until 10 s
		if at > 10 {
			want = 200 + 30*(at-10)
		}
		n := 0
		for _, ns := range sends {
			if float64(ns) < at*1e9 {
				n++
			}
		}
		require.InDelta(t, want, float64(n), 1.01, "sends before %gs", at)
	}
}
