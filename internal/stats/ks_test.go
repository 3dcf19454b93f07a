package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected p-values are exact, counted independently (integer lattice
// paths in Python); scipy's ks_2samp gives the same.
func TestKSTwoSampleExact(t *testing.T) {
	var a, b []float64
	for i := 1; i <= 10; i++ {
		a, b = append(a, float64(i)), append(b, float64(i+5))
	}
	ks := KSTwoSample(a, b)
	assert.InDelta(t, 0.5, ks.D, 1e-12)
	assert.InDelta(t, 0.16782134274394334, ks.P, 1e-9)

	a = []float64{0.094708, 1.250024, -0.931378, 0.992377, -0.259155, -0.261511, 1.899725, 0.157537, -0.042924, 0.729498,
		1.126854, -0.030843, 0.587994, -0.973724, -0.36679, -0.438125, -1.332283, -1.508514, -1.626913, -0.238653,
		-0.172425, -0.320338, 0.069128, -1.335586, -0.079465, 0.238099, 0.751042, -0.846223, -0.399871, -2.015178}
	b = []float64{0.09635, -1.596691, -0.819386, 1.701511, -1.601629, 1.398562, 0.927897, 0.287661, 1.059343, 1.127461,
		1.645421, 0.36963, 0.00778, -0.004615, -0.386442, 0.555077, -0.185759}
	ks = KSTwoSample(a, b)
	assert.InDelta(t, 0.33921568627450976, ks.D, 1e-12)
	assert.InDelta(t, 0.12697541422512604, ks.P, 1e-9)
	assert.Equal(t, ks, KSTwoSample(b, a), "symmetric")
}

func TestKSTwoSampleEdges(t *testing.T) {
	same := []float64{3, 1, 2}
	assert.Equal(t, KS{D: 0, P: 1}, KSTwoSample(same, same))
	ks := KSTwoSample(nil, same)
	assert.True(t, math.IsNaN(ks.D) && math.IsNaN(ks.P))
	assert.Equal(t, []float64{3, 1, 2}, same, "the inputs are left unsorted")
}

// Past exactMax² steps (n·m) the p-value is the asymptotic Kolmogorov
// distribution's, whose 5% and 1% points are 1.3581 and 1.6276; a
// lopsided pair below that, 10,001 values against 2, is counted exactly,
// where the limiting distribution is far off.
func TestKSTwoSampleAsymptotic(t *testing.T) {
	assert.InDelta(t, 0.05, kolmogorovQ(1.3581), 1e-4)
	assert.InDelta(t, 0.01, kolmogorovQ(1.6276), 1e-4)
	assert.Equal(t, 1.0, kolmogorovQ(0))
	n := exactMax + 1
	a, b := make([]float64, n), make([]float64, n)
	for i := range n {
		a[i], b[i] = float64(i), float64(i)+float64(n)/100 // D = 0.01, barely
	}
	ks := KSTwoSample(a, b)
	assert.InDelta(t, 0.01, ks.D, 1e-4)
	assert.InDelta(t, kolmogorovQ(math.Sqrt(float64(n)/2)*ks.D), ks.P, 1e-12)

	// Both values of the small sample above all n: D = 1, and of the
	// C(n+2, 2) interleavings only the two extremes reach it.
	ks = KSTwoSample(a, []float64{1e9, 2e9})
	assert.Equal(t, 1.0, ks.D)
	assert.InEpsilon(t, 2/(float64(n+2)*float64(n+1)/2), ks.P, 1e-6)
	assert.Equal(t, ks, KSTwoSample([]float64{1e9, 2e9}, a), "the same either way round")
}
