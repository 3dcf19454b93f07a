package stats

import "math"

// Agg summarizes repeated measurements of one statistic (one value per
// trial), as AIPerf's multi-run aggregation does: mean, sample standard
// deviation (n−1), extremes, coefficient of variation, standard error and a
// Student-t confidence interval mean ± T·SE.
//
// With fewer than two values the spread is unknown: Std, CV, SE, T, CILow and
// CIHigh are NaN. CV is also NaN when the mean is 0.
type Agg struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	CV     float64 `json:"cv"`
	SE     float64 `json:"se"`
	T      float64 `json:"t_critical"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// Aggregate computes Agg over values at the given two-sided confidence level
// (e.g. 0.95). An empty input gives N = 0 and NaN everywhere else.
func Aggregate(values []float64, confidence float64) Agg {
	nan := math.NaN()
	a := Agg{N: len(values), Mean: nan, Std: nan, Min: nan, Max: nan, CV: nan, SE: nan, T: nan, CILow: nan, CIHigh: nan}
	if a.N == 0 {
		return a
	}
	a.Mean = Mean(values)
	a.Min, a.Max = values[0], values[0]
	for _, v := range values[1:] {
		a.Min, a.Max = min(a.Min, v), max(a.Max, v)
	}
	if a.N < 2 {
		return a
	}
	a.Std = StdDev(values)
	if a.Mean != 0 {
		a.CV = a.Std / math.Abs(a.Mean)
	}
	a.SE = a.Std / math.Sqrt(float64(a.N))
	a.T = TCritical(confidence, float64(a.N-1))
	a.CILow, a.CIHigh = a.Mean-a.T*a.SE, a.Mean+a.T*a.SE
	return a
}

// HalfWidth is the half width of the confidence interval, T·SE (NaN when
// the interval is unknown).
func (a Agg) HalfWidth() float64 { return a.T * a.SE }

// Mean is the arithmetic mean of xs (NaN when empty).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// StdDev is the sample standard deviation of xs, with n−1 in the
// denominator (NaN with fewer than two values).
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	if !math.IsInf(ss, 1) {
		return math.Sqrt(ss / float64(len(xs)-1))
	}
	// Deviations beyond 1e154 overflow when squared: scale them by the
	// largest (an infinite or NaN value stays NaN).
	var scale float64
	for _, x := range xs {
		scale = max(scale, math.Abs(x-m))
	}
	if math.IsInf(scale, 0) {
		return math.NaN()
	}
	ss = 0
	for _, x := range xs {
		d := (x - m) / scale
		ss += d * d
	}
	return scale * math.Sqrt(ss/float64(len(xs)-1))
}

// TCritical is the two-sided critical value of Student's t distribution with
// df degrees of freedom at the given confidence level: t.ppf(1 − α/2, df)
// with α = 1 − confidence. TCritical(0.95, 10) ≈ 2.228.
func TCritical(confidence, df float64) float64 {
	return TQuantile(1-(1-confidence)/2, df)
}

// WelchResult is the outcome of Welch's unequal-variance t-test.
type WelchResult struct {
	T  float64 `json:"t"`  // (mean b − mean a) / √(s²a/na + s²b/nb)
	DF float64 `json:"df"` // Welch–Satterthwaite degrees of freedom
	P  float64 `json:"p"`  // two-sided p-value
}

// Welch tests whether the means of two samples, summarized as Agg, differ
// (scipy.stats.ttest_ind(b, a, equal_var=False)). Both need N ≥ 2, else
// every field is NaN. When neither sample varies, equal means give P = 1 and
// different means give P = 0.
func Welch(a, b Agg) WelchResult {
	nan := math.NaN()
	if a.N < 2 || b.N < 2 {
		return WelchResult{T: nan, DF: nan, P: nan}
	}
	se, df := welchSE(a, b)
	diff := b.Mean - a.Mean
	if se == 0 {
		df := float64(a.N + b.N - 2)
		if diff == 0 {
			return WelchResult{T: 0, DF: df, P: 1}
		}
		return WelchResult{T: math.Copysign(math.Inf(1), diff), DF: df, P: 0}
	}
	t := diff / se
	return WelchResult{T: t, DF: df, P: tTwoSided(t, df)}
}

// welchSE is the standard error of the difference of a's and b's means,
// √(s²a/na + s²b/nb), and its Welch–Satterthwaite degrees of freedom.
// Where a square overflows (standard deviations beyond 1e154) they are
// computed from each side's share of the variance. Both need N ≥ 2.
func welchSE(a, b Agg) (se, df float64) {
	va, vb := a.Std*a.Std/float64(a.N), b.Std*b.Std/float64(b.N)
	if df = (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1)); !math.IsNaN(df) && !math.IsInf(va+vb, 0) {
		return math.Sqrt(va + vb), df
	}
	sa, sb := a.Std/math.Sqrt(float64(a.N)), b.Std/math.Sqrt(float64(b.N))
	se = math.Hypot(sa, sb)
	if se == 0 || math.IsInf(se, 0) || math.IsNaN(se) {
		return se, math.NaN()
	}
	ra, rb := sa/se, sb/se
	ra, rb = ra*ra, rb*rb // each side's share of the variance
	return se, 1 / (ra*ra/float64(a.N-1) + rb*rb/float64(b.N-1))
}
