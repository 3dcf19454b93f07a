package load

import (
	"math"
	"sort"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// curve is a --request-rate-series as a schedule warp: the rate is linear
// between points and holds after the last, and at maps a count of sends
// (the integral of the rate) to the time the series reaches it, so the
// arrival pattern keeps its shape while its density follows the series.
type curve struct {
	t, q []float64 // the points' times (s) and rates
	area []float64 // the integral of the rate from 0 to t[i]
}

// newCurve is the curve of pts (nil for none; pts are checked:
// plan.CheckRateSeries).
func newCurve(pts []plan.RatePoint) *curve {
	if len(pts) == 0 {
		return nil
	}
	c := &curve{t: make([]float64, len(pts)), q: make([]float64, len(pts)), area: make([]float64, len(pts))}
	for i, pt := range pts {
		c.t[i], c.q[i] = pt.TimeS, pt.QPS
		if i > 0 {
			c.area[i] = c.area[i-1] + (c.q[i]+c.q[i-1])/2*(c.t[i]-c.t[i-1])
		}
	}
	return c
}

// at is the time (s) at which the integral of the rate reaches sends.
func (c *curve) at(sends float64) float64 {
	n := len(c.t)
	if sends >= c.area[n-1] { // after the last point the rate holds (> 0)
		return c.t[n-1] + (sends-c.area[n-1])/c.q[n-1]
	}
	// The first point whose integral reaches sends, or the segment [i,
	// i+1] that holds it.
	k := sort.Search(n, func(k int) bool { return c.area[k] >= sends })
	if c.area[k] == sends {
		return c.t[k]
	}
	i := k - 1
	dt := c.t[i+1] - c.t[i]
	a := (c.q[i+1] - c.q[i]) / (2 * dt) // rate(x) = q[i] + 2a·x
	b, rest := c.q[i], sends-c.area[i]
	// Solve a·x² + b·x = rest for x in [0, dt], in the form that keeps its
	// precision when a is small.
	d := b*b + 4*a*rest
	if d < 0 {
		d = 0
	}
	x := dt
	if den := b + math.Sqrt(d); den > 0 {
		x = min(2*rest/den, dt)
	}
	return c.t[i] + x
}
