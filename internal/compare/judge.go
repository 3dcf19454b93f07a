package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/numfmt"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/stats"
	"github.com/aiperf-go/aiperf/store"
)

// Verdicts of a comparison against the baseline (see judge).
const (
	Better       = "better" // significant, and beyond the threshold
	Worse        = "worse"
	Higher       = "higher" // Better or Worse, on a metric with no better direction
	Lower        = "lower"
	Equivalent   = "equivalent"                // within ±threshold by two one-sided tests (TOST)
	Inconclusive = "inconclusive"              // neither beyond the threshold nor shown within it
	NoDifference = "no significant difference" // threshold 0: not significant
	Unreplicated = "unreplicated"              // a side has a single trial: no test possible
	NoData       = "n/a"                       // a side has no value
	// Identical and Differs: neither side's trials spread (each side's
	// agree exactly: a count, a token length), so there is no variance to
	// test against and no p-value; the means are equal, or not.
	Identical = "identical, no spread"
	Differs   = "differs, no spread"
)

// Num is a float64 that marshals NaN and ±Inf as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Estimate is one statistic over a group's complete trials: mean, sample
// standard deviation and the t confidence interval (null with one trial).
type Estimate struct {
	N      int `json:"n"`
	Mean   Num `json:"mean"`
	Std    Num `json:"std"`
	CILow  Num `json:"ci_low"`
	CIHigh Num `json:"ci_high"`

	agg stats.Agg
}

func newEstimate(values []float64, confidence float64) Estimate {
	a := stats.Aggregate(values, confidence)
	return Estimate{N: a.N, Mean: Num(a.Mean), Std: Num(a.Std), CILow: Num(a.CILow), CIHigh: Num(a.CIHigh), agg: a}
}

// estimateOf aggregates k over the complete runs that have it, but for
// those whose value the comparison leaves out (runValue; leftOutNotes
// says which), and for a count of requests' outcomes over the failed runs
// that stored it too (counted).
func estimateOf(runs []store.RunRow, k Key, confidence float64) Estimate {
	var values []float64
	for i := range runs {
		if !counted(&runs[i], k) {
			continue
		}
		if v, why, ok := runValue(&runs[i], k); ok && why == "" {
			values = append(values, v)
		}
	}
	return newEstimate(values, confidence)
}

// valueOf is a run's value of k: a statistic of the run, or of the server
// metrics it scraped.
func valueOf(r *store.RunRow, k Key) (float64, bool) {
	if isServerKey(k) {
		return serverValue(r.Server, k)
	}
	return r.Stat(k.Metric, k.Stat)
}

func completeRuns(runs []store.RunRow) int {
	n := 0
	for i := range runs {
		if runs[i].Status == result.StatusComplete {
			n++
		}
	}
	return n
}

// format renders mean ± CI half width, or the mean alone with one trial.
func (e Estimate) format() string {
	switch {
	case e.N == 0:
		return NoData
	case e.N == 1:
		return formatFloat(e.agg.Mean)
	}
	return formatFloat(e.agg.Mean) + " ± " + formatFloat(e.agg.HalfWidth())
}

// Versus is one statistic of a group against the baseline's.
type Versus struct {
	DeltaPct Num `json:"delta_pct"` // (this − baseline) / |baseline| × 100
	P        Num `json:"p_value"`   // Welch's two-sided p; null when not tested
	// Significant is Welch's test rejecting equal means: a change inside
	// the threshold can be significant and still equivalent.
	Significant bool   `json:"significant"`
	Verdict     string `json:"verdict"`
	// ThresholdPct is the practical-effect threshold, in % of the baseline
	// mean; TOSTP the p-value of the two one-sided tests against ±it, null
	// when not tested (threshold 0, baseline mean 0, fewer than 2 trials).
	ThresholdPct Num `json:"threshold_pct"`
	TOSTP        Num `json:"tost_p_value"`

	held bool // judgeKey made an interpolated quantile's equivalence, or exact agreement, inconclusive
}

// judgeKey is judge for statistic k. A server's quantile is interpolated
// inside a histogram bucket, so a run's value does not move until the
// quantile crosses into another bucket, and its trials may agree to the
// digit: equivalence shown from that spread is the interpolation's, not the
// server's, and is called inconclusive, as trials that agree exactly on
// both sides are (a difference beyond the threshold still stands).
func judgeKey(k Key, base, other Estimate, dir Direction, confidence, thresholdPct float64) Versus {
	v := judge(base, other, dir, confidence, thresholdPct)
	if (v.Verdict == Equivalent || v.Verdict == Identical) && interpolated(k) {
		v.Verdict, v.held = Inconclusive, true
	}
	return v
}

// histogramQuantiles are the statistics a server's histogram gives by
// interpolation.
var histogramQuantiles = []string{"p50", "p90", "p95", "p99"}

// interpolated reports whether k is a quantile interpolated inside a
// histogram's bucket: of a latency alias (server.ttft, itl, e2e_latency),
// or of a family named as Prometheus names a histogram of durations
// (..._seconds). A gauge's percentiles are taken over its samples, exactly.
func interpolated(k Key) bool {
	source, name, ok := serverSource(k.Metric)
	if !ok || !slices.Contains(histogramQuantiles, k.Stat) {
		return false
	}
	if a := findAlias(source, name); a != nil {
		return slices.Equal(a.stats, latencyStats)
	}
	return strings.HasSuffix(name, "_seconds")
}

// judge compares other against base for a statistic whose better direction
// is dir, when both sides have at least two trials, at α = 1 − confidence
// with a practical-effect threshold of thresholdPct % of the baseline mean
// (the margin δ):
//
//   - better or worse (higher or lower without a direction): Welch's t-test
//     is significant and the difference of the means exceeds δ;
//   - equivalent: the two one-sided Welch tests (TOST) against −δ and +δ
//     are both significant, the difference lies within ±δ;
//   - inconclusive: neither, e.g. too noisy, or a significant change of
//     less than δ whose interval reaches past δ.
//
// A threshold of 0, or a baseline mean of 0 (no relative margin), gives
// the plain test: better or worse when significant, else no significant
// difference. When neither side's trials spread at all, the t model has no
// variance: no test is run and no p-value is claimed (identical, or
// differs, no spread), where Welch's limit would be p = 0 or 1.
func judge(base, other Estimate, dir Direction, confidence, thresholdPct float64) Versus {
	a, b := base.agg, other.agg
	v := Versus{DeltaPct: Num(deltaPct(a.Mean, b.Mean)), P: Num(math.NaN()), ThresholdPct: Num(thresholdPct), TOSTP: Num(math.NaN())}
	switch {
	case a.N == 0 || b.N == 0:
		v.Verdict = NoData
		return v
	case a.N < 2 || b.N < 2:
		v.Verdict = Unreplicated
		return v
	case a.Std == 0 && b.Std == 0:
		v.Verdict = Differs
		if a.Mean == b.Mean {
			v.Verdict = Identical
		}
		return v
	}
	alpha := 1 - confidence
	w := stats.Welch(a, b)
	if math.IsNaN(w.P) { // a spread past float64's range: nothing to judge
		v.Verdict = NoData
		return v
	}
	v.P, v.Significant = Num(w.P), w.P < alpha
	margin := thresholdPct / 100 * math.Abs(a.Mean)
	if margin > 0 {
		tost := stats.TOST(a, b, margin)
		v.TOSTP = Num(tost.P)
		switch {
		case tost.P < alpha:
			v.Verdict = Equivalent
			return v
		case !v.Significant || math.Abs(b.Mean-a.Mean) <= margin:
			v.Verdict = Inconclusive
			return v
		}
	} else if !v.Significant {
		v.Verdict = NoDifference
		return v
	}
	up := b.Mean > a.Mean
	switch {
	case dir == Neutral && up:
		v.Verdict = Higher
	case dir == Neutral:
		v.Verdict = Lower
	case up == (dir == HigherIsBetter):
		v.Verdict = Better
	default:
		v.Verdict = Worse
	}
	return v
}

// heldBack reports whether v is a server histogram quantile's verdict that
// TOST showed equivalent (its TOST p below α, which for any other statistic
// is equivalent), or whose trials agreed exactly, and judgeKey made
// inconclusive.
func (v Versus) heldBack() bool { return v.held }

// shown is what a table's verdicts need explained beyond the legend.
type shown struct {
	heldBack bool // a server histogram quantile TOST put within the threshold, held inconclusive
	noSpread bool // a comparison of two sides whose trials do not spread
}

// see notes v, a verdict of the table.
func (s *shown) see(v Versus) {
	s.heldBack = s.heldBack || v.heldBack()
	s.noSpread = s.noSpread || v.Verdict == Identical || v.Verdict == Differs
}

// verdictNotes explain the verdicts under a table of judged statistics
// (metric.stat and its threshold, in order): what each verdict means, and
// the thresholds; why a server histogram quantile is inconclusive where
// TOST put it within the threshold, and what no spread means, when some row
// is so. None when nothing was judged.
func verdictNotes(metrics []string, pcts []float64, s shown) []string {
	if len(metrics) == 0 {
		return nil
	}
	legend := "better/worse: Welch's t-test significant (its p shown) and |Δ| beyond the threshold; " +
		"equivalent ±T%: two one-sided tests (TOST) put the difference within ±T%; " +
		"inconclusive: neither (for both, the TOST p is shown); threshold 0: the plain test (better/worse or no significant difference)."
	if s.noSpread {
		legend += " identical / differs, no spread: every trial of each side has the same value, so there is no " +
			"variance to test against and no p-value; Δ is the difference."
	}
	if s.heldBack {
		legend += " A server histogram quantile (server.ttft.p50, …) is never called equivalent: it is interpolated " +
			"inside one bucket, so its trials can agree to the digit while the server moved by up to the bucket's width; " +
			"it is inconclusive even with a small TOST p, or trials that agree exactly."
	}
	return []string{legend, thresholdNote(metrics, pcts)}
}

func deltaPct(base, other float64) float64 {
	if base == 0 {
		if other == 0 {
			return 0
		}
		return math.NaN()
	}
	return (other - base) / math.Abs(base) * 100
}

// format renders the verdict with the p-value it rests on: Welch's, or for
// equivalent and inconclusive the TOST's, after the threshold and named as
// such ("equivalent ±2% (TOST p=0.004)"): an inconclusive verdict's large
// TOST p says equivalence is not shown, not that nothing changed.
func (v Versus) format() string {
	verdict, p, name := v.Verdict, float64(v.P), "p"
	if v.Verdict == Equivalent || v.Verdict == Inconclusive {
		verdict, p, name = v.Verdict+" ±"+formatPct(float64(v.ThresholdPct)), float64(v.TOSTP), "TOST p"
	}
	switch {
	case math.IsNaN(p):
		return verdict
	case p < 0.001:
		return verdict + " (" + name + "<0.001)"
	}
	return fmt.Sprintf("%s (%s=%.3f)", verdict, name, p)
}

func formatDelta(d Num) string {
	f := float64(d)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NoData
	}
	return fmt.Sprintf("%+.1f%%", f)
}

// formatFloat shows two decimals, as AIPerf's tables do, and a value
// below 1 with two significant digits, so that a small value (a KV-cache
// usage of 0.0025) does not print as 0.00 beside a delta of +300%.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NoData
	}
	a := math.Abs(f)
	if a == 0 || a >= 0.995 {
		return numfmt.Fixed(f, 2) // 1.00e+300 for a huge value, not 300 digits
	}
	if a < 1e-9 {
		return fmt.Sprintf("%.2g", f)
	}
	return fmt.Sprintf("%.*f", max(2, 1-int(math.Floor(math.Log10(a)))), f)
}
