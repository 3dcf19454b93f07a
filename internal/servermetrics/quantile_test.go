package servermetrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Quantiles are Prometheus's histogram_quantile on hand-made buckets.
func TestBucketQuantile(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{0.1, 0.2, 0.5, inf}
	counts := []float64{10, 30, 40, 40}
	for _, tc := range []struct {
		q, want float64
	}{
		{0.10, 0.04},  // rank 4 in [0, 0.1] holding 10
		{0.25, 0.1},   // rank 10: the top of the first bucket
		{0.50, 0.15},  // rank 20: 10 into (0.1, 0.2] holding 20
		{0.75, 0.2},   // rank 30
		{0.99, 0.488}, // rank 39.6: 9.6 into (0.2, 0.5] holding 10
		{1.00, 0.5},
	} {
		got, ok := bucketQuantile(tc.q, bounds, counts)
		assert.True(t, ok)
		assert.InDelta(t, tc.want, got, 1e-12, "q=%g", tc.q)
	}

	// Mass above the last finite bound: its bound, as Prometheus.
	got, ok := bucketQuantile(0.9, []float64{1, inf}, []float64{5, 10})
	assert.True(t, ok)
	assert.Equal(t, 1.0, got)
	// A non-positive first bound is returned as is.
	got, _ = bucketQuantile(0.1, []float64{-1, 0, inf}, []float64{4, 8, 8})
	assert.Equal(t, -1.0, got)
	// Non-monotonic counts (a reset between two scrapes) are made monotonic.
	got, _ = bucketQuantile(0.5, bounds, []float64{10, 8, 20, 20})
	assert.InDelta(t, 0.1, got, 1e-12, "rank 10 of 20 is the top of the first bucket once 8 reads 10")

	for _, bad := range []struct {
		q              float64
		bounds, counts []float64
	}{
		{0.5, bounds, []float64{0, 0, 0, 0}},    // empty
		{0.5, []float64{inf}, []float64{3}},     // no finite bucket
		{0.5, []float64{1, 2}, []float64{1, 2}}, // no +Inf
		{1.5, bounds, counts},                   // q out of range
		{0.5, bounds, []float64{1, 2}},          // lengths differ
	} {
		_, ok := bucketQuantile(bad.q, bad.bounds, bad.counts)
		assert.False(t, ok, "%v", bad)
	}
}

// The bucket of an estimate is its resolution: stored beside the median.
func TestQuantileBucket(t *testing.T) {
	inf := math.Inf(1)
	bounds := []float64{0.1, 0.2, 0.5, inf}
	lo, hi, frac, ok := quantileBucket(0.5, bounds, []float64{10, 30, 40, 40})
	assert.True(t, ok)
	assert.Equal(t, []float64{0.1, 0.2, 0.5}, []float64{lo, hi, frac}, "rank 20: halfway into (0.1, 0.2]")
	lo, hi, _, _ = quantileBucket(0.5, bounds, []float64{0, 0, 1, 10})
	assert.Equal(t, 0.5, lo)
	assert.True(t, math.IsInf(hi, 1), "the +Inf bucket has no resolution")
}
