package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// computeStream gives Compute's order statistics exactly, and its moments
// to rounding, on values spread over many buckets, piled in one, negative
// and repeated.
func TestComputeStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sets := map[string][]float64{
		"spread":   make([]float64, 10001),
		"one":      {3.5},
		"same":     make([]float64, 500),
		"negative": {-2, -1, 0, 1, 2, 2, 2, -0.5},
	}
	for i := range sets["spread"] {
		sets["spread"][i] = math.Exp(rng.NormFloat64()*2) / 1e3
	}
	for i := range sets["same"] {
		sets["same"][i] = 0.004
	}
	for name, vs := range sets {
		for _, limit := range []int{sliceCap, 3} { // values one by one, then distinct values counted
			saved := sliceCap
			sliceCap = limit
			checkStream(t, name, vs)
			sliceCap = saved
		}
	}
	assert.Equal(t, Stats{}, computeStream(func(func(float64)) {}))
}

func checkStream(t *testing.T, name string, vs []float64) {
	t.Helper()
	{
		want := Compute(vs)
		got := computeStream(func(yield func(float64)) {
			for _, v := range vs {
				yield(v)
			}
		})
		for _, pair := range [][2]float64{{want.Min, got.Min}, {want.Max, got.Max}, {want.P1, got.P1}, {want.P5, got.P5},
			{want.P10, got.P10}, {want.P25, got.P25}, {want.P50, got.P50}, {want.P75, got.P75}, {want.P90, got.P90},
			{want.P95, got.P95}, {want.P99, got.P99}} {
			assert.Equal(t, pair[0], pair[1], name)
		}
		assert.Equal(t, want.Count, got.Count, name)
		assert.InEpsilon(t, want.Sum+1, got.Sum+1, 1e-12, name)
		assert.InDelta(t, want.Avg, got.Avg, 1e-12, name)
		assert.InDelta(t, want.Std, got.Std, 1e-12, name)
	}
}

// Values read in parts, some empty, give the statistics of all of them.
func TestComputeStreamParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vs := make([]float64, 30000)
	for i := range vs {
		vs[i] = math.Round(rng.ExpFloat64()*40) / 10 // repeated values too
	}
	part := func(lo, hi int) func(func(float64)) {
		return func(yield func(float64)) {
			for _, v := range vs[lo:hi] {
				yield(v)
			}
		}
	}
	for _, limit := range []int{sliceCap, 3} {
		saved := sliceCap
		sliceCap = limit
		want, got := Compute(vs), computeStream(part(0, 7), part(7, 7), part(7, 20000), part(20000, 30000))
		sliceCap = saved
		assert.Equal(t, []float64{want.Min, want.P1, want.P5, want.P10, want.P25, want.P50, want.P75, want.P90, want.P95, want.P99, want.Max},
			[]float64{got.Min, got.P1, got.P5, got.P10, got.P25, got.P50, got.P75, got.P90, got.P95, got.P99, got.Max})
		assert.Equal(t, want.Count, got.Count)
		assert.InDelta(t, want.Avg, got.Avg, 1e-12)
		assert.InDelta(t, want.Std, got.Std, 1e-12)
	}
}
