package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func shift(xs []float64, by float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + by
	}
	return out
}

func TestTOST(t *testing.T) {
	t.Parallel()
	t.Run("closed form at df 2", func(t *testing.T) {
		// a = {0, 2}, b = {1, 3}: means 1 and 2, variances 2, so SE = √2 and
		// Welch's df = (1+1)² / (1/1 + 1/1) = 2, where the t CDF is
		// 1/2 + x / (2√(2+x²)). Margin 3: t_lower = 4/√2 = 2√2, t_upper =
		// −2/√2 = −√2; p_lower = 1/2 − 2√2/(2√10) = 1/2 − 1/√5, p_upper =
		// 1/2 − √2/(2·2) = 1/2 − √2/4.
		r := TOST(Aggregate([]float64{0, 2}, 0.95), Aggregate([]float64{1, 3}, 0.95), 3)
		assert.InDelta(t, 2*math.Sqrt2, r.TLower, 1e-12)
		assert.InDelta(t, -math.Sqrt2, r.TUpper, 1e-12)
		assert.InDelta(t, 2, r.DF, 1e-12)
		assert.InDelta(t, 0.5-1/math.Sqrt(5), r.PLower, 1e-12)
		assert.InDelta(t, 0.5-math.Sqrt2/4, r.PUpper, 1e-12)
		assert.InDelta(t, 0.5-math.Sqrt2/4, r.P, 1e-12, "the larger one-sided p")
	})
	t.Run("each side is Welch's test of a shifted sample", func(t *testing.T) {
		// a: mean 2.5, s² 5/3; b: mean 7, s² 14 (n 4 and 6), so SE = √(5/12 +
		// 14/6) = √2.75. Testing b − a ≥ +δ is testing (b − δ) − a ≥ 0: its
		// t is Welch's t of a against b − δ, its one-sided p half of
		// Welch's two-sided p (or one minus that half, by the sign).
		a, b := []float64{1, 2, 3, 4}, []float64{2, 4, 6, 8, 10, 12}
		for _, margin := range []float64{0.5, 1, 4.5, 6, 20} {
			r := TOST(Aggregate(a, 0.95), Aggregate(b, 0.95), margin)
			assert.InDelta(t, (4.5+margin)/math.Sqrt(2.75), r.TLower, 1e-12, "margin %g", margin)
			assert.InDelta(t, (4.5-margin)/math.Sqrt(2.75), r.TUpper, 1e-12, "margin %g", margin)
			assert.InDelta(t, 6.59467097295115, r.DF, 1e-9)

			up := Welch(Aggregate(a, 0.95), Aggregate(shift(b, -margin), 0.95))
			assert.InDelta(t, up.T, r.TUpper, 1e-12)
			wantUp := up.P / 2 // P(T ≤ t) for t < 0
			if up.T > 0 {
				wantUp = 1 - up.P/2
			}
			assert.InDelta(t, wantUp, r.PUpper, 1e-12, "margin %g", margin)

			lo := Welch(Aggregate(a, 0.95), Aggregate(shift(b, margin), 0.95))
			assert.InDelta(t, lo.T, r.TLower, 1e-12)
			assert.InDelta(t, lo.P/2, r.PLower, 1e-12, "t_lower > 0 here: P(T ≥ t) is half the two-sided p")
			assert.Equal(t, max(r.PLower, r.PUpper), r.P)
		}
	})
	t.Run("equivalence is the 1−2α interval inside the margin", func(t *testing.T) {
		a := Aggregate([]float64{100.2, 99.7, 100.4, 99.9, 100.1, 99.8}, 0.90)
		b := Aggregate([]float64{100.9, 100.6, 101.3, 100.8, 100.7, 101.1}, 0.90)
		w := Welch(a, b)
		se := (b.Mean - a.Mean) / w.T
		hw := TQuantile(0.95, w.DF) * se // 90% interval of the difference
		lo, hi := b.Mean-a.Mean-hw, b.Mean-a.Mean+hw
		for _, margin := range []float64{hi - 1e-6, hi + 1e-6, 2 * hi} {
			r := TOST(a, b, margin)
			assert.Equal(t, -margin < lo && hi < margin, r.P < 0.05, "margin %g, interval [%g, %g], p %g", margin, lo, hi, r.P)
		}
	})
	t.Run("samples that do not vary", func(t *testing.T) {
		same := Aggregate([]float64{5, 5, 5}, 0.95)
		near := Aggregate([]float64{5.5, 5.5}, 0.95)
		assert.Equal(t, 0.0, TOST(same, near, 1).P, "exactly 0.5 apart, inside ±1")
		assert.Equal(t, 1.0, TOST(same, near, 0.5).P, "on the margin is not inside it")
		assert.Equal(t, 1.0, TOST(same, same, 0).P, "a zero margin never shows equivalence")
		assert.Equal(t, 0.0, TOST(same, same, 1e-9).P)
		assert.Equal(t, 1.0, TOST(near, same, 0.2).P, "below the margin")
	})
	t.Run("undefined", func(t *testing.T) {
		two := Aggregate([]float64{1, 2}, 0.95)
		for name, r := range map[string]TOSTResult{
			"one trial":       TOST(Aggregate([]float64{1}, 0.95), two, 1),
			"negative margin": TOST(two, two, -1),
			"NaN margin":      TOST(two, two, math.NaN()),
			"infinite margin": TOST(two, two, math.Inf(1)),
		} {
			assert.True(t, math.IsNaN(r.P), name)
		}
	})
}
