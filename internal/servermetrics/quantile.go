package servermetrics

import (
	"math"
	"sort"
)

// bucketQuantile estimates the q-quantile (0 ≤ q ≤ 1) of a histogram from
// its cumulative bucket counts, as Prometheus's histogram_quantile does for
// classic histograms: find the bucket holding rank q·total and interpolate
// linearly inside it, the lowest bucket starting at 0. A rank in the +Inf
// bucket gives the highest finite bound. bounds are sorted upper bounds, the
// last +Inf; counts are cumulative (made monotonic here, as Prometheus
// does). It reports false when the histogram is empty or has no finite
// bucket.
//
// AIPerf itself refines this with a polynomial estimate learned from the
// per-scrape means; plain interpolation is what the issue asks for and what
// a Prometheus user reads on a dashboard.
func bucketQuantile(q float64, bounds, counts []float64) (float64, bool) {
	lo, hi, frac, ok := quantileBucket(q, bounds, counts)
	if !ok || frac == 0 {
		return lo, ok
	}
	return lo + (hi-lo)*frac, true
}

// quantileBucket is the bucket bucketQuantile interpolates in: its lower
// and upper bounds (hi is +Inf for the +Inf bucket, and lo = hi for a
// non-positive first bound) and how far into it the rank falls (0..1).
// Its width is the estimate's resolution.
func quantileBucket(q float64, bounds, counts []float64) (lo, hi, frac float64, ok bool) {
	n := len(bounds)
	if n < 2 || len(counts) != n || !math.IsInf(bounds[n-1], 1) || q < 0 || q > 1 {
		return 0, 0, 0, false
	}
	cum := make([]float64, n)
	for i, c := range counts {
		cum[i] = c
		if i > 0 && cum[i] < cum[i-1] {
			cum[i] = cum[i-1]
		}
	}
	total := cum[n-1]
	if !(total > 0) {
		return 0, 0, 0, false
	}
	rank := q * total
	b := sort.Search(n-1, func(i int) bool { return cum[i] >= rank })
	if b == n-1 {
		return bounds[n-2], math.Inf(1), 0, true
	}
	if b == 0 && bounds[0] <= 0 {
		return bounds[0], bounds[0], 0, true
	}
	start, end, count := 0.0, bounds[b], cum[b]
	if b > 0 {
		start = bounds[b-1]
		count -= cum[b-1]
		rank -= cum[b-1]
	}
	if count == 0 { // q = 0 on empty low buckets
		return start, end, 0, true
	}
	return start, end, rank / count, true
}
