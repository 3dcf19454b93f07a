package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A threshold is the smallest change of a statistic that matters in
// practice, in % of the baseline's mean: a statistically significant change
// within it is not called better or worse (see judge). --threshold sets one
// for every statistic; otherwise each takes the first matching row of
// DefaultThresholds.

// ThresholdRule is one row of the default thresholds.
type ThresholdRule struct {
	What  string  // the statistics it covers, as docs/compare.md's table says
	Pct   float64 // % of the baseline mean
	match func(Key) bool
}

// DefaultThresholds are the practical-effect thresholds per statistic, the
// first matching row applying:
//
//   - error counts, and the server's preemptions: 0, any significant change
//     counts (a baseline of 0 errors makes a relative margin meaningless,
//     and one more failure is worth a look);
//   - other server and GPU keys: 5%, as they are sampled at the scrape
//     interval and a histogram's quantiles are interpolated within buckets;
//   - every other client statistic (latencies, throughputs, token lengths,
//     request counts): 2%.
var DefaultThresholds = []ThresholdRule{
	{What: "error counts (error_request_count, ...)", Pct: 0, match: func(k Key) bool {
		return !isServerKey(k) && strings.Contains(k.Metric, "error")
	}},
	{What: "server preemptions (server.preemptions, server.vllm:num_preemptions)", Pct: 0, match: func(k Key) bool {
		return isServerKey(k) && strings.Contains(k.Metric, "preemption")
	}},
	{What: "other server.* and gpu.* keys", Pct: 5, match: isServerKey},
	{What: "other client statistics: latencies, throughputs, token lengths, counts", Pct: 2, match: func(Key) bool { return true }},
}

// DefaultThreshold is k's practical-effect threshold in % when --threshold
// is not given.
func DefaultThreshold(k Key) float64 {
	for _, r := range DefaultThresholds {
		if r.match(k) {
			return r.Pct
		}
	}
	return 0
}

// thresholdOf is k's threshold under opt: --threshold, else the default.
func (o Options) thresholdOf(k Key) float64 {
	if o.Threshold != nil {
		return *o.Threshold
	}
	return DefaultThreshold(k)
}

// maxThreshold bounds a threshold, in % of the baseline mean: a change
// worth acting on is not ten times the baseline, and beyond it the margin
// of a large mean leaves float64's range (1e308 % of a mean of 200 did,
// and two metrics with one Δ got different verdicts).
const maxThreshold = 1000

// checkThreshold refuses a threshold that is not a finite number from 0
// to maxThreshold, as a *plan.FieldError naming --threshold.
func checkThreshold(x float64) error {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return &plan.FieldError{Field: "threshold", Msg: fmt.Sprintf("must be a finite number, got %g", x)}
	case x < 0:
		return &plan.FieldError{Field: "threshold", Msg: fmt.Sprintf("must be 0 or more (a %% of the baseline mean), got %g", x)}
	case x > maxThreshold:
		return &plan.FieldError{Field: "threshold", Msg: fmt.Sprintf("must be at most %d (a %% of the baseline mean: ten times it), got %g", maxThreshold, x)}
	}
	return nil
}

// formatPct renders a threshold: "2%", "0.5%".
func formatPct(pct float64) string { return fmt.Sprintf("%g%%", pct) }

// thresholdNote words the thresholds of the judged statistics (metric.stat
// and its threshold, in order; at least one) for the notes under a table:
// the most common, then the others with their statistics.
func thresholdNote(metrics []string, pcts []float64) string {
	var (
		values []float64
		byPct  = map[float64][]string{}
	)
	for i, m := range metrics {
		p := pcts[i]
		if _, seen := byPct[p]; !seen {
			values = append(values, p)
		}
		if !slices.Contains(byPct[p], m) {
			byPct[p] = append(byPct[p], m)
		}
	}
	common := values[0]
	for _, p := range values[1:] {
		if len(byPct[p]) > len(byPct[common]) {
			common = p
		}
	}
	word := func(p float64) string {
		if p == 0 {
			return "0"
		}
		return "±" + formatPct(p)
	}
	note := "threshold: " + word(common) + " of the baseline mean"
	if common == 0 {
		note = "threshold: 0 (Welch alone)"
	}
	for _, p := range values {
		if p != common {
			note += "; " + word(p) + " for " + strings.Join(byPct[p], ", ")
		}
	}
	return note
}
