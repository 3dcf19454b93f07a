package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values come from scipy 1.10 (scipy.stats.t, ttest_ind with
// equal_var=False) and the closed forms of the t distribution for df = 1
// (Cauchy) and df = 2.

func TestTCritical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		confidence, df, want float64
	}{
		{0.95, 1, 12.706204736432095},
		{0.95, 2, 4.302652729911275},
		{0.95, 4, 2.7764451051977987},
		{0.95, 10, 2.2281388519649385},
		{0.95, 30, 2.0422724563012373},
		{0.99, 5, 4.032142983557536},
		{0.90, 3, 2.3533634348018264},
		{0.95, 7.5, 2.333039626555376}, // fractional df, as Welch produces
	}
	for _, tc := range tests {
		t.Run("", func(t *testing.T) {
			got := TCritical(tc.confidence, tc.df)
			assert.InEpsilon(t, tc.want, got, 1e-9, "t(%g, df=%g)", tc.confidence, tc.df)
			assert.InDelta(t, 1-(1-tc.confidence)/2, TCDF(got, tc.df), 1e-12, "TCDF inverts TQuantile")
		})
	}
}

func TestTCDF(t *testing.T) {
	t.Parallel()
	t.Run("scipy", func(t *testing.T) {
		assert.InDelta(t, 0.9490302605850709, TCDF(2, 5), 1e-13)
		assert.InDelta(t, 0.13433336208631366, TCDF(-1.3, 3.7), 1e-13)
		assert.InDelta(t, 0.6549951627960546, TCDF(0.4, 100), 1e-13)
		assert.InDelta(t, 0.9979617112061073, TCDF(8, 3), 1e-13)
	})
	t.Run("closed forms", func(t *testing.T) {
		for _, x := range []float64{-50, -3.2, -1, -0.1, 0, 0.25, 1, 2.5, 40} {
			cauchy := 0.5 + math.Atan(x)/math.Pi
			assert.InDelta(t, cauchy, TCDF(x, 1), 1e-13, "df=1 at %g", x)
			df2 := 0.5 + x/(2*math.Sqrt(2+x*x))
			assert.InDelta(t, df2, TCDF(x, 2), 1e-13, "df=2 at %g", x)
		}
	})
	t.Run("edges", func(t *testing.T) {
		assert.Equal(t, 1.0, TCDF(math.Inf(1), 3))
		assert.Equal(t, 0.0, TCDF(math.Inf(-1), 3))
		assert.True(t, math.IsNaN(TCDF(1, 0)))
		assert.Equal(t, 0.0, TQuantile(0.5, 4))
		assert.InDelta(t, -TQuantile(0.975, 4), TQuantile(0.025, 4), 1e-12)
		assert.True(t, math.IsInf(TQuantile(1, 4), 1))
		assert.True(t, math.IsNaN(TQuantile(1.5, 4)))
	})
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	t.Run("three trials", func(t *testing.T) {
		a := Aggregate([]float64{12.5, 13.1, 12.8}, 0.95)
		assert.Equal(t, 3, a.N)
		assert.InDelta(t, 12.8, a.Mean, 1e-12)
		assert.InDelta(t, 0.3, a.Std, 1e-12)
		assert.Equal(t, 12.5, a.Min)
		assert.Equal(t, 13.1, a.Max)
		assert.InDelta(t, 0.3/12.8, a.CV, 1e-12)
		assert.InDelta(t, 0.17320508075688765, a.SE, 1e-12)
		assert.InDelta(t, 4.302652729911275, a.T, 1e-9)
		assert.InDelta(t, 12.054758686446878, a.CILow, 1e-9)
		assert.InDelta(t, 13.545241313553127, a.CIHigh, 1e-9)
		assert.InDelta(t, a.CIHigh-a.Mean, a.HalfWidth(), 1e-12)
	})
	t.Run("single value has no spread", func(t *testing.T) {
		a := Aggregate([]float64{7}, 0.95)
		assert.Equal(t, 1, a.N)
		assert.Equal(t, 7.0, a.Mean)
		assert.Equal(t, 7.0, a.Min)
		assert.Equal(t, 7.0, a.Max)
		for _, v := range []float64{a.Std, a.CV, a.SE, a.T, a.CILow, a.CIHigh} {
			assert.True(t, math.IsNaN(v))
		}
	})
	t.Run("empty", func(t *testing.T) {
		a := Aggregate(nil, 0.95)
		assert.Equal(t, 0, a.N)
		assert.True(t, math.IsNaN(a.Mean))
	})
	t.Run("zero mean has no cv", func(t *testing.T) {
		a := Aggregate([]float64{-1, 1}, 0.95)
		assert.True(t, math.IsNaN(a.CV))
		assert.InDelta(t, math.Sqrt2, a.Std, 1e-12)
	})
}

func TestWelch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		a, b     []float64
		t, df, p float64
		checkDF  bool
	}{
		{name: "ttft 20 vs 60", a: []float64{20.1, 19.8, 20.3}, b: []float64{59.7, 60.4, 60.1},
			t: 160.35674514745526, p: 4.093887958374371e-08},
		{name: "overlapping", a: []float64{10.2, 9.7, 10.5, 10.1, 9.9}, b: []float64{10.4, 10.0, 10.8, 10.3},
			t: 1.380077629072068, p: 0.21474831248876572},
		{name: "unequal sizes and variances", a: []float64{1, 2, 3, 4}, b: []float64{2, 4, 6, 8, 10, 12},
			t: 2.713602101199873, df: 6.59467097295115, p: 0.03182444378084147, checkDF: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Welch(Aggregate(tc.a, 0.95), Aggregate(tc.b, 0.95))
			assert.InEpsilon(t, tc.t, r.T, 1e-9)
			assert.InEpsilon(t, tc.p, r.P, 1e-7)
			if tc.checkDF {
				assert.InEpsilon(t, tc.df, r.DF, 1e-9)
			}
			back := Welch(Aggregate(tc.b, 0.95), Aggregate(tc.a, 0.95))
			assert.InEpsilon(t, -tc.t, back.T, 1e-9, "swapping the samples flips t")
			assert.InEpsilon(t, tc.p, back.P, 1e-9, "and keeps p")
		})
	}
	t.Run("needs two values per side", func(t *testing.T) {
		r := Welch(Aggregate([]float64{1}, 0.95), Aggregate([]float64{2, 3}, 0.95))
		assert.True(t, math.IsNaN(r.P))
	})
	t.Run("no variance", func(t *testing.T) {
		same := Welch(Aggregate([]float64{5, 5}, 0.95), Aggregate([]float64{5, 5, 5}, 0.95))
		require.Equal(t, 1.0, same.P)
		diff := Welch(Aggregate([]float64{5, 5}, 0.95), Aggregate([]float64{6, 6}, 0.95))
		require.Equal(t, 0.0, diff.P)
		assert.True(t, math.IsInf(diff.T, 1))
	})
}

// Values beyond 1e154 square past float64's range: the spread, Welch's
// test and the TOST are those of the same values scaled down, not NaN.
func TestHugeValuesDoNotOverflow(t *testing.T) {
	small, huge := [][]float64{{1, 2, 3}, {4, 5, 6}}, [][]float64{{1e160, 2e160, 3e160}, {4e160, 5e160, 6e160}}
	var aggs [2][2]Agg
	for i, xs := range [][][]float64{small, huge} {
		for j := range xs {
			aggs[i][j] = Aggregate(xs[j], 0.95)
		}
	}
	assert.InDelta(t, 1e160, aggs[1][0].Std, 1e148)
	assert.InDelta(t, 2e160-aggs[1][0].T*1e160/math.Sqrt(3), aggs[1][0].CILow, 1e148)
	w, wh := Welch(aggs[0][0], aggs[0][1]), Welch(aggs[1][0], aggs[1][1])
	assert.InDelta(t, 3.674235, wh.T, 1e-6)
	assert.InDelta(t, 4, wh.DF, 1e-9)
	assert.InDelta(t, w.P, wh.P, 1e-12)
	assert.InDelta(t, 0.0213, wh.P, 1e-4)
	tost, tosth := TOST(aggs[0][0], aggs[0][1], 0.5), TOST(aggs[1][0], aggs[1][1], 0.5e160)
	assert.InDelta(t, tost.P, tosth.P, 1e-12)
	assert.InDelta(t, tost.DF, tosth.DF, 1e-9)
	assert.True(t, math.IsNaN(StdDev([]float64{1, math.Inf(1)})), "an infinite value has no spread")
}
