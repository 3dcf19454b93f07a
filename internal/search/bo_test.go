package search

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A GP on two points has a closed-form posterior. With an RBF kernel of
// length 1 and signal 1, inputs 0 and 1 and noise s, K = [[a, e], [e, a]]
// with a = 1 + s, e = exp(−½). At x*, k* = (k1, k2):
// mean = k*ᵀK⁻¹y, var = 1 − k*ᵀK⁻¹k*, K⁻¹ = [[a, −e], [−e, a]] / (a² − e²).
func TestGPPosteriorOnTwoPoints(t *testing.T) {
	t.Parallel()
	const s = 0.01
	a, e := 1+s, math.Exp(-0.5)
	det := a*a - e*e
	y := []float64{1.5, -0.7}
	g, err := newGP(rbf, [][]float64{{0}, {1}}, y, gpParams{lengths: []float64{1}, signal: 1, noise: s})
	require.NoError(t, err)
	for _, x := range []float64{0, 0.25, 0.5, 1, 2.5} {
		k1, k2 := math.Exp(-x*x/2), math.Exp(-(x-1)*(x-1)/2)
		w1, w2 := (a*k1-e*k2)/det, (a*k2-e*k1)/det // K⁻¹k*
		mean, sd := g.predict([]float64{x})
		assert.InDelta(t, w1*y[0]+w2*y[1], mean, 1e-12, "mean at %g", x)
		assert.InDelta(t, math.Sqrt(1-(k1*w1+k2*w2)), sd, 1e-9, "sd at %g", x)
	}
	// log marginal likelihood: −½ yᵀK⁻¹y − ½ log det K − log 2π.
	quad := (a*y[0]*y[0] - 2*e*y[0]*y[1] + a*y[1]*y[1]) / det
	assert.InDelta(t, -0.5*quad-0.5*math.Log(det)-math.Log(2*math.Pi), g.logLikelihood(), 1e-12)
}

func TestMaternKernel(t *testing.T) {
	t.Parallel()
	p := gpParams{lengths: []float64{2}, signal: 3}
	assert.InDelta(t, 3, matern52.cov([]float64{1}, []float64{1}, p), 1e-15)
	r := math.Sqrt(5) // distance = one length
	assert.InDelta(t, 3*(1+r+r*r/3)*math.Exp(-r), matern52.cov([]float64{0}, []float64{2}, p), 1e-15)
}

// Expected improvement of N(1, 2²) over 0.5: (μ − b)Φ(z) + σφ(z) with
// z = 0.25; Φ(0.25) = 0.5987063256829237, φ(0.25) = 0.38666811680284924.
func TestExpectedImprovementOfAKnownNormal(t *testing.T) {
	t.Parallel()
	want := 0.5*0.5987063256829237 + 2*0.38666811680284924
	assert.InDelta(t, want, expectedImprovement(1, 2, 0.5), 1e-12)
	assert.Equal(t, 0.0, expectedImprovement(0, 0, 0.5), "no spread, no improvement")
	assert.Equal(t, 1.5, expectedImprovement(2, 0, 0.5))
	assert.InDelta(t, 0.15865525393145707, probBelowZero(1, 1), 1e-12, "P(N(1,1) ≤ 0) = Φ(−1)")
}

// Fitting hyperparameters by marginal likelihood beats a poor guess.
func TestFitGPRaisesTheLikelihood(t *testing.T) {
	t.Parallel()
	var x [][]float64
	var y []float64
	for i := range 12 {
		u := float64(i) / 11
		x, y = append(x, []float64{u}), append(y, math.Sin(6*u))
	}
	fit, err := fitGP(matern52, x, y)
	require.NoError(t, err)
	poor, err := newGP(matern52, x, y, gpParams{lengths: []float64{0.02}, signal: 0.05, noise: 0.5})
	require.NoError(t, err)
	assert.Greater(t, fit.logLikelihood(), poor.logLikelihood())
	mean, _ := fit.predict([]float64{0.5})
	assert.InDelta(t, math.Sin(3), mean, 0.05, "interpolates a smooth function")
}

// BO on a smooth 2D function finds the optimum's neighbourhood.
func TestBOFindsTheOptimum(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Planner: PlannerBayesian,
		Space: Space{
			{Name: "a", Lo: 0, Hi: 1, Kind: KindReal},
			{Name: "b", Lo: -2, Hi: 2, Kind: KindReal},
		},
		Objective:     Objective{Metric: "score", Stat: "avg", Direction: Minimize},
		MaxIterations: 25,
		Seed:          3,
	}
	s, err := New(cfg)
	require.NoError(t, err)
	f := func(pt Point) float64 { return (pt[0]-0.3)*(pt[0]-0.3) + 0.25*(pt[1]-0.5)*(pt[1]-0.5) }
	h, stop := drive(t, s, func(pt Point, _, _ int) Trial {
		return Trial{OK: true, Values: map[string]float64{"score.avg": f(pt)}}
	})
	t.Logf("stopped: %s after %d probes", stop.Reason, len(h.Probes))
	best := s.Summarize(h).Best
	require.NotNil(t, best)
	assert.Less(t, best.Objective, 0.01, "best %v", best.Point)
}

// max-throughput under a TTFT SLA: throughput rises with concurrency, TTFT
// too; the constrained EI lands near the largest feasible concurrency.
func TestBORespectsTheSLA(t *testing.T) {
	t.Parallel()
	cfg := slaConfig(PlannerBayesian, 1000, 200, TrialRule{})
	cfg.Space[0].Log = true
	cfg.Seed = 42
	s, err := New(cfg)
	require.NoError(t, err)
	h, stop := drive(t, s, ttftAt(func(c float64) float64 { return 2 * c })) // feasible up to 99
	sum := s.Summarize(h)
	require.NotNil(t, sum.Best)
	t.Logf("stopped: %s after %d probes; best %v", stop.Reason, len(h.Probes), sum.Best.Point)
	assert.Equal(t, Pass, sum.Best.Verdict.Outcome)
	assert.GreaterOrEqual(t, sum.Best.Point[0], 80.0)
	assert.LessOrEqual(t, sum.Best.Point[0], 99.0)
	seen := map[float64]bool{}
	for _, p := range h.Probes {
		assert.False(t, seen[p.Point[0]], "%g probed twice", p.Point[0])
		seen[p.Point[0]] = true
	}
}

func TestBOStopsOnPatience(t *testing.T) {
	t.Parallel()
	cfg := Config{
		Planner:             PlannerBayesian,
		Space:               Space{{Name: "c", Lo: 1, Hi: 1000, Kind: KindInt}},
		Objective:           Objective{Metric: "thr", Stat: "avg", Direction: Maximize},
		ImprovementPatience: 4,
		MaxIterations:       40,
		PlateauThreshold:    1e-12,
	}
	s, err := New(cfg)
	require.NoError(t, err)
	h, stop := drive(t, s, func(Point, int, int) Trial {
		return Trial{OK: true, Values: map[string]float64{"thr.avg": 5}} // flat: the first probe stays best
	})
	assert.Equal(t, ReasonImprovementPatience, stop.Reason)
	assert.Len(t, h.Probes, 5, "initial points, then patience 4 after the first")
}
