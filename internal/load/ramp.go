package load

import (
	"math"
	"time"
)

// rateRampStep is AIPerf's rate ramp update interval: the ramp starts at
// target·step/ramp, so that a target below 1 request/s still ramps.
const rateRampStep = 0.1

// slotOpens is when slot k (from 0) of a concurrency of n ramped over ramp
// seconds opens, in ns from the phase start: AIPerf's discrete ramp from 1
// to n, one more slot every ramp/(n-1) seconds, the last at ramp.
func slotOpens(k, n int, ramp float64) int64 {
	if ramp <= 0 || k == 0 || n <= 1 {
		return 0
	}
	return int64(math.Round(ramp * float64(k) / float64(n-1) * 1e9))
}

// rampedCap is how many of n slots a ramp over ramp seconds has opened at
// offset ns from the phase start, and when the next one opens (-1: none).
func rampedCap(n int, ramp float64, ns int64) (open int, next int64) {
	if ramp <= 0 || n <= 1 {
		return n, -1
	}
	open = min(n, 1+int(float64(ns)/1e9*float64(n-1)/ramp))
	for open < n && slotOpens(open, n, ramp) <= ns { // rounding
		open++
	}
	if open == n {
		return n, -1
	}
	return open, slotOpens(open, n, ramp)
}

// warp maps an offset tau (seconds) on the schedule of the target rate to
// the phase time at which a linear rate ramp over ramp seconds reaches it:
// the rate is target·max(u, t)/ramp until ramp (u the update step), then
// target. It inverts F(t) = ∫ rate/target, so sends keep the arrival
// pattern's shape while their density follows the ramp.
func warp(tau, ramp float64) float64 {
	if ramp <= 0 {
		return tau
	}
	u := min(rateRampStep, ramp)
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

// rampPrefill is AIPerf's prefill-concurrency ramp: of the prefill cap's n
// slots, all but one are held back at the phase's start and opened one at
// a time at slotOpens, until the phase ends. (A held-back slot is a token
// in the cap's channel; opening one takes a token out, which frees a slot
// whichever token it is.)
func (p *phaseRun) rampPrefill() {
	n := p.ph.PrefillConcurrency
	for range n - 1 {
		p.prefill <- struct{}{}
	}
	go func() {
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for k := 1; k < n; k++ {
			if !p.e.waitUntil(p.phaseCtx, timer, p.r.StartNs+slotOpens(k, n, p.ph.PrefillRamp)) {
				return
			}
			<-p.prefill
		}
	}()
}
