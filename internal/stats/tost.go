package stats

import "math"

// TOSTResult is the outcome of Schuirmann's two one-sided tests (TOST) for
// equivalence of two means within ±margin, each a Welch t-test.
type TOSTResult struct {
	// TLower tests H0: mean b − mean a ≤ −margin, (diff + margin) / SE;
	// TUpper tests H0: mean b − mean a ≥ +margin, (diff − margin) / SE.
	TLower float64 `json:"t_lower"`
	TUpper float64 `json:"t_upper"`
	DF     float64 `json:"df"`      // Welch–Satterthwaite, as Welch's
	PLower float64 `json:"p_lower"` // P(T ≥ TLower)
	PUpper float64 `json:"p_upper"` // P(T ≤ TUpper)
	// P is the larger of the two one-sided p-values: the means are
	// equivalent within ±margin at level α when P < α (both tests reject),
	// which is the 1 − 2α confidence interval of the difference lying
	// inside (−margin, +margin).
	P float64 `json:"p"`
}

// TOST tests whether the mean of b lies within ±margin (margin ≥ 0, in the
// samples' unit) of the mean of a, with two one-sided Welch t-tests. Both
// samples need N ≥ 2, and margin must be a number ≥ 0, else every field is
// NaN. When neither sample varies the difference is exact: P is 0 when it
// lies strictly inside ±margin and 1 otherwise (so a zero margin never
// shows equivalence).
func TOST(a, b Agg, margin float64) TOSTResult {
	nan := math.NaN()
	if a.N < 2 || b.N < 2 || !(margin >= 0) || math.IsInf(margin, 0) {
		return TOSTResult{TLower: nan, TUpper: nan, DF: nan, PLower: nan, PUpper: nan, P: nan}
	}
	se, df := welchSE(a, b)
	diff := b.Mean - a.Mean
	if se == 0 {
		r := TOSTResult{TLower: math.Inf(1), TUpper: math.Inf(-1), DF: float64(a.N + b.N - 2)}
		if diff <= -margin {
			r.TLower, r.PLower = math.Inf(-1), 1
		}
		if diff >= margin {
			r.TUpper, r.PUpper = math.Inf(1), 1
		}
		r.P = max(r.PLower, r.PUpper)
		return r
	}
	r := TOSTResult{TLower: (diff + margin) / se, TUpper: (diff - margin) / se, DF: df}
	r.PLower = TCDF(-r.TLower, df) // = 1 − TCDF(TLower), without the cancellation
	r.PUpper = TCDF(r.TUpper, df)
	r.P = max(r.PLower, r.PUpper)
	return r
}
