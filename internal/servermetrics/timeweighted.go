package servermetrics

import "math"

// StatTimeWeightedAvg is a gauge's average over time in its window, beside
// AIPerf's avg (the plain mean of the samples, marks included, which
// depends on how many scrapes a run had): what the console shows as a
// gauge's avg, what `aiperf compare` reads as one, and what the store keeps
// under this name. The exports, in AIPerf's shape, leave it out.
const StatTimeWeightedAvg = "time_weighted_avg"

// timeWeightedAvg is the time-weighted average of the gauge samples in
// vals[from..to], taken at times[from..to] (NaN: the series was absent, the
// scrape is skipped). The first and the last sample bound the window: they
// are the state at its edges (the begin mark, taken before the phase's
// first request, and the end mark, after its last reply, when the
// endpoint gave them) and hold for no time. Every sample between holds
// until the next one (a step function, as Prometheus reads a gauge between
// scrapes), and the first of them also from the window's beginning: the
// load changes the state the begin mark saw at once. False without a
// sample between the edges. One pass, no allocation; the mean is updated
// in place, so that a constant gauge averages to exactly its value.
func timeWeightedAvg(vals []float64, times []int64, from, to int) (float64, bool) {
	var (
		n           int     // valid samples seen
		prev        float64 // the last one's value
		holdFrom    int64   // when prev began to hold
		avg, weight float64
	)
	for i := max(from, 0); i <= to && i < len(vals) && i < len(times); i++ {
		v := vals[i]
		if math.IsNaN(v) {
			continue
		}
		t := times[i]
		switch {
		case n == 0:
			holdFrom = t // the first edge: the next sample holds from here
		case n >= 2: // prev, a sample between the edges, held until now
			if d := float64(t - holdFrom); d > 0 {
				weight += d
				avg += (prev - avg) * (d / weight)
			}
			holdFrom = t
		}
		prev = v
		n++
	}
	if n < 3 || weight <= 0 {
		return 0, false
	}
	return avg, true
}
