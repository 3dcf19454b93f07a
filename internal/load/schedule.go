package load

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// Clock is the run's single monotonic clock: every stamp is nanoseconds since
// the run started.
type Clock struct{ start time.Time }

// NewClock starts a clock now.
func NewClock() Clock { return Clock{start: time.Now()} }

// Now returns nanoseconds since the clock started (monotonic).
func (c Clock) Now() int64 { return int64(time.Since(c.start)) }

// Wall converts a clock stamp to wall-clock Unix nanoseconds, for exports.
func (c Clock) Wall(ns int64) int64 { return c.start.UnixNano() + ns }

// Start is the wall-clock time the clock started.
func (c Clock) Start() time.Time { return c.start }

// Schedule yields absolute send offsets (ns from the phase start) for an
// open-loop rate. It is pure: no clock, no sleeping.
type Schedule struct {
	rate  float64
	mode  string
	shape float64 // gamma: the smoothness
	ramp  float64 // seconds of the linear rate ramp (0: none)
	shift float64 // constant: seconds every send is offset by
	// series, when set, warps the schedule onto --request-rate-series
	// (rate is then the series' mean).
	series *curve
	rng    *rand.Rand
	i      int64
	t      float64 // poisson and gamma: running offset in seconds
}

// NewSchedule returns the schedule of a rate phase. Poisson gaps are
// exponential and gamma gaps have shape ph.Smoothness (1 when 0) and mean
// 1/rate, as vLLM's --burstiness; both are seeded, so a seed always yields
// the same arrivals.
func NewSchedule(ph plan.Phase, seed int64) *Schedule {
	s := &Schedule{
		rate:   ph.Rate,
		mode:   ph.RateMode,
		shape:  ph.Smoothness,
		ramp:   ph.RateRamp,
		shift:  ph.Offset,
		series: newCurve(ph.RateSeries),
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
	}
	if s.shape == 0 {
		s.shape = 1
	}
	return s
}

// Next returns the offset of the next send. The first send is at 0; constant
// sends are at i/rate (plus the phase's Offset), computed from i so
// rounding never accumulates. A rate
// ramp warps the offsets so that the rate rises linearly to its target.
func (s *Schedule) Next() int64 {
	defer func() { s.i++ }()
	t := s.t
	switch s.mode {
	case plan.RatePoisson:
		if s.i > 0 {
			s.t += s.rng.ExpFloat64() / s.rate
		}
		t = s.t
	case plan.RateGamma:
		if s.i > 0 {
			s.t += gamma(s.rng, s.shape) / (s.rate * s.shape)
		}
		t = s.t
	default:
		t = float64(s.i)/s.rate + s.shift
	}
	if s.series != nil {
		return int64(math.Round(min(s.series.at(t*s.rate), plan.MaxSeconds) * 1e9))
	}
	return int64(math.Round(plan.RampWarp(t, s.ramp) * 1e9))
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method (2000);
// a shape below 1 is boosted to shape+1 and scaled by U^(1/shape).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rng, shape+1) * math.Pow(1-rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64() // (0, 1]
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
