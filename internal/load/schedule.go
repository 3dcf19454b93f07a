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
	rate    float64
	poisson bool
	rng     *rand.Rand
	i       int64
	t       float64 // poisson: running offset in seconds
}

// NewSchedule returns the schedule of a rate phase. Poisson gaps are
// exponential and seeded, so a seed always yields the same arrivals.
func NewSchedule(rate float64, mode string, seed int64) *Schedule {
	return &Schedule{
		rate:    rate,
		poisson: mode == plan.RatePoisson,
		rng:     rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
	}
}

// Next returns the offset of the next send. The first send is at 0; constant
// sends are at i/rate, computed from i so rounding never accumulates.
func (s *Schedule) Next() int64 {
	defer func() { s.i++ }()
	if !s.poisson {
		return int64(math.Round(float64(s.i) * 1e9 / s.rate))
	}
	if s.i > 0 {
		s.t += s.rng.ExpFloat64() / s.rate
	}
	return int64(math.Round(s.t * 1e9))
}
