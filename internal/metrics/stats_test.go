package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The expected values below were computed with numpy 1.24
// (np.percentile default method, np.mean, np.std).
func TestCompute(t *testing.T) {
	tests := []struct {
		name    string
		in      []float64
		avg     float64
		std     float64
		sum     float64
		pctiles [9]float64 // p1 p5 p10 p25 p50 p75 p90 p95 p99
	}{
		{
			name: "one to ten", in: []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			avg: 5.5, std: 2.8722813232690143, sum: 55,
			pctiles: [9]float64{1.09, 1.45, 1.9, 3.25, 5.5, 7.75, 9.1, 9.549999999999999, 9.91},
		},
		{
			name: "uneven gaps", in: []float64{50, 15, 40, 20, 35},
			avg: 32, std: 12.884098726725126, sum: 160,
			pctiles: [9]float64{15.2, 16, 17, 20, 35, 40, 46, 48, 49.6},
		},
		{
			name: "fractions", in: []float64{0.1, 0.7, 0.3, 12.5, 3.3, 9.9, 4.4},
			avg: 4.457142857142856, std: 4.56754299154281, sum: 31.2,
			pctiles: [9]float64{0.112, 0.16, 0.22000000000000003, 0.5, 3.3, 7.15, 10.940000000000001, 11.719999999999999, 12.344},
		},
		{
			name: "single value", in: []float64{42},
			avg: 42, std: 0, sum: 42,
			pctiles: [9]float64{42, 42, 42, 42, 42, 42, 42, 42, 42},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.in...)
			s := Compute(in)
			assert.Equal(t, tc.in, in, "Compute must not reorder its input")
			assert.Equal(t, len(tc.in), s.Count)
			assert.InDelta(t, tc.avg, s.Avg, 1e-12)
			assert.InDelta(t, tc.std, s.Std, 1e-12)
			assert.InDelta(t, tc.sum, s.Sum, 1e-12)
			minV, maxV := tc.in[0], tc.in[0]
			for _, v := range tc.in {
				minV, maxV = min(minV, v), max(maxV, v)
			}
			assert.Equal(t, minV, s.Min)
			assert.Equal(t, maxV, s.Max)
			// Percentiles match numpy to the last bit.
			got := [9]float64{s.P1, s.P5, s.P10, s.P25, s.P50, s.P75, s.P90, s.P95, s.P99}
			assert.Equal(t, tc.pctiles, got)
		})
	}
}

func TestComputeEmpty(t *testing.T) {
	require.Equal(t, Stats{}, Compute(nil))
	require.Equal(t, Stats{}, Compute([]float64{}))
}

func TestComputeStdIsPopulation(t *testing.T) {
	// Sample std of {2, 4} would be sqrt(2); population std is 1.
	assert.Equal(t, 1.0, Compute([]float64{2, 4}).Std)
}
