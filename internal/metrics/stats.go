package metrics

import (
	"math"
	"slices"
)

// Compute returns the distribution of values as AIPerf reports it: mean,
// extremes, numpy-style linearly interpolated percentiles, population
// standard deviation (np.std), count and sum. values is not modified. An
// empty input gives the zero Stats.
func Compute(values []float64) Stats {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return computeSorted(sorted)
}

// computeSorted is Compute over an already sorted slice it may keep.
func computeSorted(sorted []float64) Stats {
	n := len(sorted)
	if n == 0 {
		return Stats{}
	}
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	mean := sum / float64(n)
	var sq float64
	for _, v := range sorted {
		d := v - mean
		sq += d * d
	}
	return Stats{
		Avg:   mean,
		Min:   sorted[0],
		Max:   sorted[n-1],
		P1:    percentile(sorted, 1),
		P5:    percentile(sorted, 5),
		P10:   percentile(sorted, 10),
		P25:   percentile(sorted, 25),
		P50:   percentile(sorted, 50),
		P75:   percentile(sorted, 75),
		P90:   percentile(sorted, 90),
		P95:   percentile(sorted, 95),
		P99:   percentile(sorted, 99),
		Std:   math.Sqrt(sq / float64(n)),
		Count: n,
		Sum:   sum,
	}
}

// finite reports whether every statistic of s is a finite number.
func (s Stats) finite() bool {
	for _, x := range []float64{s.Avg, s.Min, s.Max, s.P1, s.P5, s.P10, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99, s.Std, s.Sum} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// percentile is numpy.percentile(sorted, p) with the default "linear" method,
// computed in the same floating-point order as numpy so results match it.
func percentile(sorted []float64, p float64) float64 {
	return percentileOf(len(sorted), p, func(i int) float64 { return sorted[i] })
}

// percentileOf is percentile over n sorted values read by their rank.
func percentileOf(n int, p float64, at func(rank int) float64) float64 {
	q := p / 100
	idx := float64(n-1) * q // numpy's virtual index for the linear method
	if idx >= float64(n-1) {
		return at(n - 1)
	}
	if idx <= 0 {
		return at(0)
	}
	lo := math.Floor(idx)
	a, b := at(int(lo)), at(int(lo)+1)
	t := idx - lo
	// numpy's _lerp: interpolate from the nearer end for accuracy.
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}
