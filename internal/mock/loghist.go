package mock

import (
	"math"
	"sync/atomic"
	"time"
)

// Log-spaced histogram geometry: logPerDecade buckets per factor of ten from
// logLow to logHigh (1 µs to 10 s), each 2.3% wide, plus one below logLow
// and one from logHigh up. Bucket i (1 ≤ i ≤ logSpan) holds
// [logBounds[i-1], logBounds[i]).
const (
	logLow       = time.Microsecond
	logHigh      = 10 * time.Second
	logPerDecade = 100
	logDecades   = 7 // log10(logHigh / logLow)
	logSpan      = logPerDecade * logDecades
	logBuckets   = logSpan + 2
)

// logBounds are the bucket edges in nanoseconds: logBounds[i] is
// 1 µs × 10^(i/100), rounded, so logBounds[0] is 1 µs and logBounds[logSpan]
// is 10 s.
var logBounds = func() [logSpan + 1]int64 {
	var b [logSpan + 1]int64
	for i := range b {
		b[i] = int64(math.Round(float64(logLow) * math.Pow(10, float64(i)/logPerDecade)))
	}
	return b
}()

// logBucket returns the bucket of v nanoseconds: 0 below 1 µs (negative
// values included), logSpan+1 from 10 s up.
func logBucket(v int64) int {
	lo, hi := 0, len(logBounds) // the first bound > v is in [lo, hi]
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if logBounds[mid] <= v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// logHist is a histogram of durations with fixed log-spaced buckets, safe
// for concurrent use without locks: an observation is two atomic adds (and
// a compare-and-swap on a new extreme). Its count, sum, minimum and maximum
// are exact; quantiles are estimates from the buckets, within a bucket's
// width (2.3%) of the true value between 1 µs and 10 s.
type logHist struct {
	counts [logBuckets]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
	max    atomic.Int64 // nanoseconds; 0 when empty or all ≤ 0
	// least is math.MaxInt64 minus the least observation (negative ones
	// count as 0), so that its zero value means none and it only grows.
	least atomic.Int64
}

// observe records one duration of v nanoseconds.
func (h *logHist) observe(v int64) { h.observeN(v, 1) }

// observeN records n durations of v nanoseconds each.
func (h *logHist) observeN(v int64, n uint64) {
	if n == 0 {
		return
	}
	h.counts[logBucket(v)].Add(n)
	h.addSum(v, n)
	raise(&h.max, v)
	raise(&h.least, math.MaxInt64-max(v, 0))
}

// addSum adds n × v to the sum. The sum saturates at the bounds of int64
// rather than wrapping, which only durations near the mock's maxDelay
// could reach, so the common case is a single atomic add.
func (h *logHist) addSum(v int64, n uint64) {
	const small = 1 << 40 // about 18 minutes; n times it cannot overflow
	if v > -small && v < small && n < 1<<22 {
		if sum := h.sum.Add(v * int64(n)); sum > -small<<22 && sum < math.MaxInt64-small<<22 {
			return
		}
		h.sum.Add(-v * int64(n)) // near a bound: undo, then add with saturation
	}
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, satAdd(old, satMul(v, n))) {
			return
		}
	}
}

// satMul returns n × v, saturated at the bounds of int64.
func satMul(v int64, n uint64) int64 {
	switch {
	case v == 0 || n == 0:
		return 0
	case n > math.MaxInt64 || v > 0 && v > math.MaxInt64/int64(n):
		if v > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	case v < 0 && v < math.MinInt64/int64(n):
		return math.MinInt64
	}
	return v * int64(n)
}

// satAdd returns a + b, saturated at the bounds of int64.
func satAdd(a, b int64) int64 {
	switch s := a + b; {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	default:
		return s
	}
}

// countStats is the count, sum, minimum and maximum of small non-negative
// integers, safe for concurrent use without locks.
type countStats struct {
	count, sum atomic.Int64
	max        atomic.Int64
	least      atomic.Int64 // math.MaxInt64 minus the least, as in logHist
}

// observe records v (>= 0).
func (c *countStats) observe(v int) {
	c.count.Add(1)
	c.sum.Add(int64(v))
	raise(&c.max, int64(v))
	raise(&c.least, math.MaxInt64-int64(v))
}

// countSummary is a countStats as GET /mock/timing reports it (all zero
// when empty).
type countSummary struct {
	Count int64   `json:"count"`
	Sum   int64   `json:"sum"`
	Mean  float64 `json:"mean"`
	Min   int64   `json:"min"`
	Max   int64   `json:"max"`
}

// summary reads c. Observations made while it reads may be half counted.
func (c *countStats) summary() countSummary {
	s := countSummary{Count: c.count.Load(), Sum: c.sum.Load(), Max: c.max.Load()}
	if s.Count > 0 {
		s.Mean = float64(s.Sum) / float64(s.Count)
		s.Min = math.MaxInt64 - c.least.Load()
	}
	return s
}

// raise sets a to v if v is greater.
func raise(a *atomic.Int64, v int64) {
	for {
		m := a.Load()
		if v <= m || a.CompareAndSwap(m, v) {
			return
		}
	}
}

// histStats is a logHist summarised in microseconds, as GET /mock/timing
// reports it. Count and SumUS are exact, MinUS and MaxUS too; the
// quantiles are estimates from the buckets.
type histStats struct {
	Count  uint64  `json:"count"`
	SumUS  float64 `json:"sum_us"`
	MeanUS float64 `json:"mean_us"`
	MinUS  float64 `json:"min_us"`
	P50US  float64 `json:"p50_us"`
	P90US  float64 `json:"p90_us"`
	P99US  float64 `json:"p99_us"`
	MaxUS  float64 `json:"max_us"`
}

// snapshot reads h. Observations made while it reads may be half counted
// (in a bucket but not yet in the sum); the count is the buckets' total.
func (h *logHist) snapshot() logSnapshot {
	var s logSnapshot
	for i := range h.counts {
		s.counts[i] = h.counts[i].Load()
		s.count += s.counts[i]
	}
	s.sum, s.max, s.min = h.sum.Load(), h.max.Load(), math.MaxInt64-h.least.Load()
	return s
}

// logSnapshot is a copy of a logHist's state.
type logSnapshot struct {
	counts        [logBuckets]uint64
	count         uint64
	sum, min, max int64 // min counts negative observations as 0
}

// quantile estimates the q-quantile (0 ≤ q ≤ 1) in nanoseconds: it finds
// the bucket holding the observation of rank q×count and interpolates
// within it, geometrically (linearly in the bucket below 1 µs), then
// clamps the estimate to the smallest and largest observations. It
// reports 0 when empty.
func (s *logSnapshot) quantile(q float64) float64 {
	if s.count == 0 {
		return 0
	}
	rank := q * float64(s.count)
	var cum uint64
	for i, c := range s.counts {
		if c == 0 || float64(cum+c) < rank {
			cum += c
			continue
		}
		frac := min(1, max(0, (rank-float64(cum))/float64(c)))
		var v float64
		switch {
		case i == 0:
			v = frac * float64(logBounds[0])
		case i > logSpan:
			v = float64(s.max) // above 10 s: no upper edge to interpolate to
		default:
			lo, hi := float64(logBounds[i-1]), float64(logBounds[i])
			v = lo * math.Pow(hi/lo, frac)
		}
		return min(max(v, float64(s.min)), float64(max(s.max, 0)))
	}
	return float64(s.max)
}

// stats summarises s in microseconds.
func (s *logSnapshot) stats() histStats {
	const us = float64(time.Microsecond)
	st := histStats{Count: s.count, SumUS: float64(s.sum) / us, MaxUS: float64(s.max) / us}
	if s.count > 0 {
		st.MeanUS = st.SumUS / float64(s.count)
		st.MinUS = float64(s.min) / us
		st.P50US = s.quantile(0.50) / us
		st.P90US = s.quantile(0.90) / us
		st.P99US = s.quantile(0.99) / us
	}
	return st
}
