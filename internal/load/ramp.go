package load

import (
	"time"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// rampedCap is how many of n slots a ramp over ramp seconds has opened at
// offset ns from the phase start, and when the next one opens (-1: none).
func rampedCap(n int, ramp float64, ns int64) (open int, next int64) {
	if ramp <= 0 || n <= 1 {
		return n, -1
	}
	open = min(n, 1+int(float64(ns)/1e9*float64(n-1)/ramp))
	for open < n && plan.SlotOpens(open, n, ramp) <= ns { // rounding
		open++
	}
	if open == n {
		return n, -1
	}
	return open, plan.SlotOpens(open, n, ramp)
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
			if !p.e.waitUntil(p.phaseCtx, timer, p.r.StartNs+plan.SlotOpens(k, n, p.ph.PrefillRamp)) {
				return
			}
			<-p.prefill
		}
	}()
}
