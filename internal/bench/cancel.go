package bench

import (
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// cancellation picks the profiling requests --request-cancellation-rate
// aborts: each request index is picked or not by a hash of it and the
// seed, so a rerun with the same seed aborts the same requests, and the
// share picked converges on the rate.
type cancellation struct {
	rate  float64 // fraction, 0 = none
	delay time.Duration
	seed  uint64
}

func newCancellation(p plan.Profile) cancellation {
	c := cancellation{seed: uint64(p.RandomSeed)}
	if p.RequestCancellationRate != nil {
		c.rate = *p.RequestCancellationRate / 100
	}
	if p.RequestCancellationDelay != nil {
		c.delay = time.Duration(*p.RequestCancellationDelay * float64(time.Second))
	}
	return c
}

// picks reports whether request index of phase is to be aborted, and
// when: the phase's own cancellation when it has one, else the profile's
// for a profiling phase.
func (c cancellation) picks(ph *plan.Phase, index int) (bool, time.Duration) {
	rate, delay := c.rate, c.delay
	switch {
	case ph.Cancellation != nil:
		rate, delay = ph.Cancellation.Rate/100, time.Duration(ph.Cancellation.Delay*float64(time.Second))
	case ph.Kind != plan.KindProfiling:
		rate = 0
	}
	if rate == 0 {
		return false, 0
	}
	return float64(draw(c.seed, index)>>11)/(1<<53) < rate, delay // uniform in [0, 1)
}

// draw is splitmix64 of the seed and the index: a uniform 64-bit draw,
// the same for the same pair.
func draw(seed uint64, index int) uint64 {
	z := seed ^ uint64(index)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
