package plan

import "math"

// RateRampStep is AIPerf's rate ramp update interval (seconds): the ramp
// starts at target·step/ramp, so that a target below 1 request/s still
// ramps.
const RateRampStep = 0.1

// SlotOpens is when slot k (from 0) of a concurrency of n ramped over ramp
// seconds opens, in ns from the phase start: AIPerf's discrete ramp from 1
// to n, one more slot every ramp/(n-1) seconds, the last at ramp.
func SlotOpens(k, n int, ramp float64) int64 {
	if ramp <= 0 || k == 0 || n <= 1 {
		return 0
	}
	return int64(math.Round(ramp * float64(k) / float64(n-1) * 1e9))
}

// RampWarp maps an offset tau (seconds) on the schedule of the target rate
// to the phase time at which a linear rate ramp over ramp seconds reaches
// it: the rate is target·max(u, t)/ramp until ramp (u the update step),
// then target. It inverts F(t) = ∫ rate/target, so sends keep the arrival
// pattern's shape while their density follows the ramp.
func RampWarp(tau, ramp float64) float64 {
	if ramp <= 0 {
		return tau
	}
	u := min(RateRampStep, ramp)
	low := u * u / ramp                    // F(u)
	full := low + (ramp*ramp-u*u)/(2*ramp) // F(ramp)
	switch {
	case tau < low:
		return tau * ramp / u
	case tau < full:
		return math.Sqrt(2*ramp*(tau-low) + u*u)
	default:
		return ramp + tau - full
	}
}

// rampedRate is the rate a linear ramp to target over ramp seconds has
// reached t seconds into it.
func rampedRate(target, ramp, t float64) float64 {
	if t >= ramp {
		return target
	}
	return target * max(min(RateRampStep, ramp), t) / ramp
}

// slotsBefore is how many of the n slots a ramp over ramp seconds opens
// before t seconds (a slot opening at t is too late).
func slotsBefore(n int, ramp, t float64) int {
	k := 0
	for k < n && SlotOpens(k, n, ramp) < int64(t*1e9) {
		k++
	}
	return k
}
