package compare

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/stats"
	"github.com/aiperf-go/aiperf/store"
)

// Verdicts of a comparison against the baseline.
const (
	Better       = "better"
	Worse        = "worse"
	Higher       = "higher" // significant, on a metric with no better direction
	Lower        = "lower"
	NoDifference = "no significant difference"
	Unreplicated = "unreplicated" // a side has a single trial: no test possible
	NoData       = "n/a"          // a side has no value
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

// estimateOf aggregates k over the complete runs that have it.
func estimateOf(runs []store.RunRow, k Key, confidence float64) Estimate {
	var values []float64
	for i := range runs {
		if runs[i].Status != result.StatusComplete {
			continue
		}
		if v, ok := valueOf(&runs[i], k); ok {
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
	DeltaPct    Num    `json:"delta_pct"` // (this − baseline) / |baseline| × 100
	P           Num    `json:"p_value"`   // Welch's two-sided p; null when not tested
	Significant bool   `json:"significant"`
	Verdict     string `json:"verdict"`
}

// judge compares other against base for a statistic whose better direction
// is dir: a Welch t-test at the confidence level when both sides have at
// least two trials.
func judge(base, other Estimate, dir Direction, confidence float64) Versus {
	a, b := base.agg, other.agg
	v := Versus{DeltaPct: Num(deltaPct(a.Mean, b.Mean)), P: Num(math.NaN())}
	switch {
	case a.N == 0 || b.N == 0:
		v.Verdict = NoData
		return v
	case a.N < 2 || b.N < 2:
		v.Verdict = Unreplicated
		return v
	}
	w := stats.Welch(a, b)
	v.P = Num(w.P)
	if !(w.P < 1-confidence) {
		v.Verdict = NoDifference
		return v
	}
	v.Significant = true
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

func deltaPct(base, other float64) float64 {
	if base == 0 {
		if other == 0 {
			return 0
		}
		return math.NaN()
	}
	return (other - base) / math.Abs(base) * 100
}

// format renders the verdict with its p-value.
func (v Versus) format() string {
	p := float64(v.P)
	if math.IsNaN(p) {
		return v.Verdict
	}
	if p < 0.001 {
		return v.Verdict + " (p<0.001)"
	}
	return fmt.Sprintf("%s (p=%.3f)", v.Verdict, p)
}

func formatDelta(d Num) string {
	f := float64(d)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NoData
	}
	return fmt.Sprintf("%+.1f%%", f)
}

// formatFloat shows two decimals, as AIPerf's tables do.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NoData
	}
	return fmt.Sprintf("%.2f", f)
}
