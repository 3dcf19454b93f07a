package search

import (
	"cmp"
	"fmt"
	"math"

	"github.com/aiperf-go/aiperf/internal/stats"
)

// TrialRule says how many trials a probe runs: Min at once when it is new
// (AIPerf's --num-profile-runs; min(3, N) under --convergence-metric), then
// one more at a time while its SLA verdict is ambiguous or its Convergence
// criterion is unmet, up to Max (--search-max-replicates; --num-profile-runs
// under --convergence-metric). Confidence is the level of SLA verdicts and
// of convergence intervals (--confidence-level).
type TrialRule struct {
	Min         int          // ≥ 1; 1 when 0
	Max         int          // ≥ Min; Min when below it
	Confidence  float64      // in (0, 1); 0.95 when 0
	Convergence *Convergence // nil: no convergence criterion
}

func (r TrialRule) withDefaults() TrialRule {
	r.Min = max(r.Min, 1)
	r.Max = max(r.Max, r.Min)
	if r.Confidence == 0 {
		r.Confidence = 0.95
	}
	return r
}

func (r TrialRule) check() error {
	switch {
	case r.Min < 0 || r.Max < 0:
		return fmt.Errorf("trial counts must be ≥ 1 (min %d, max %d)", r.Min, r.Max)
	case r.Max != 0 && r.Max < r.Min:
		return fmt.Errorf("--search-max-replicates %d is below the %d trials each probe runs (--num-profile-runs)", r.Max, r.Min)
	case r.Confidence != 0 && !(r.Confidence > 0 && r.Confidence < 1):
		return fmt.Errorf("--confidence-level %g must be between 0 and 1 (exclusive)", r.Confidence)
	}
	if c := r.Convergence; c != nil {
		if c.Mode == ModeDistribution {
			return fmt.Errorf("--convergence-mode distribution needs per-request records, which a search does not read: use ci_width or cv")
		}
		return c.Check()
	}
	return nil
}

// looks is how many times a probe's SLA verdict may be taken with at least
// two values: at every trial count from max(Min, 2) to Max.
func (r TrialRule) looks() int { return max(1, r.Max-max(r.Min, 2)+1) }

// More tells how many more trials probe p needs before the planner moves
// (0: none), and why: its first Min trials, an unmet convergence criterion,
// or an ambiguous SLA verdict while it has fewer than Max trials.
func (r TrialRule) More(p Probe, filters []Filter) (int, string) {
	r = r.withDefaults()
	have := len(p.Trials)
	switch {
	case have < r.Min:
		return r.Min - have, fmt.Sprintf("%d of %d trials run", have, r.Min)
	case have >= r.Max:
		return 0, ""
	}
	if c := r.Convergence; c != nil {
		if ok, why := c.Converged(p.values(c.Key()), r.Confidence, r.Max); !ok {
			return 1, why
		}
	}
	if len(filters) > 0 {
		if v := Judge(p, filters, r); v.Outcome == Ambiguous {
			return 1, "ambiguous: " + v.describe()
		}
	}
	return 0, ""
}

// Convergence is AIPerf's multi-run adaptive stop (--convergence-metric,
// -stat, -threshold, -mode): trials stop once the statistic is stable.
type Convergence struct {
	Metric    string
	Stat      string  // avg when empty
	Threshold float64 // the mode's default when 0: ci_width 0.10, cv 0.05, distribution 0.05
	Mode      string  // ci_width (default), cv or distribution (a plain multi-run's only)
}

// Convergence modes.
const (
	ModeCIWidth      = "ci_width"
	ModeCV           = "cv"
	ModeDistribution = "distribution"
)

// mode is c's mode and threshold, defaults applied.
func (c Convergence) mode() (string, float64) {
	mode := cmp.Or(c.Mode, ModeCIWidth)
	if c.Threshold != 0 {
		return mode, c.Threshold
	}
	return mode, map[string]float64{ModeCIWidth: 0.10, ModeCV: 0.05, ModeDistribution: 0.05}[mode]
}

// Key is the "metric.stat" name of the watched statistic.
func (c Convergence) Key() string {
	if c.Stat == "" {
		return c.Metric + ".avg"
	}
	return c.Metric + "." + c.Stat
}

// Describe is c in a few words: "request_latency.avg ci_width < 0.1",
// "request_latency distribution KS p > 0.05".
func (c Convergence) Describe() string {
	mode, thr := c.mode()
	if mode == ModeDistribution {
		return fmt.Sprintf("%s distribution KS p > %g", c.Metric, thr)
	}
	return fmt.Sprintf("%s %s < %g", c.Key(), mode, thr)
}

// Check says what is wrong with c, naming the flag.
func (c Convergence) Check() error {
	switch {
	case c.Metric == "":
		return fmt.Errorf("--convergence-metric is empty")
	case c.Mode != "" && c.Mode != ModeCIWidth && c.Mode != ModeCV && c.Mode != ModeDistribution:
		return fmt.Errorf("--convergence-mode %q is not ci_width, cv or distribution", c.Mode)
	case c.Threshold != 0 && !(c.Threshold > 0 && c.Threshold < 1):
		return fmt.Errorf("--convergence-threshold %g must be between 0 and 1 (exclusive)", c.Threshold)
	}
	return nil
}

// Converged tells whether values (one per successful trial) are stable,
// with what was measured (or why nothing was): after at least min(3, cap)
// values, ci_width holds when the two-sided Student-t interval's full width
// is below Threshold × |mean| (AIPerf's CIWidthConvergence), cv when
// std/|mean| is below Threshold. A distribution criterion is judged by
// ConvergedDistribution instead.
func (c Convergence) Converged(values []float64, confidence float64, cap int) (bool, string) {
	need := min(3, max(cap, 1))
	if len(values) < need {
		return false, fmt.Sprintf("convergence: %d of at least %d values of %s", len(values), need, c.Key())
	}
	if len(values) < 2 {
		return true, "convergence: one trial allowed"
	}
	a := stats.Aggregate(values, confidence)
	if a.Mean == 0 {
		return false, fmt.Sprintf("convergence: the mean of %s is 0", c.Key())
	}
	mode, thr := c.mode()
	ratio := 2 * a.HalfWidth() / math.Abs(a.Mean)
	if mode == ModeCV {
		ratio = a.CV
	}
	if ratio < thr {
		return true, fmt.Sprintf("convergence: %s %s %.3g < %g over %d trials", c.Key(), mode, ratio, thr, len(values))
	}
	return false, fmt.Sprintf("convergence: %s %s %.3g ≥ %g", c.Key(), mode, ratio, thr)
}

// ConvergedDistribution judges a distribution criterion as AIPerf's
// DistributionConvergence does: the latest trial's per-request values of
// the metric against those of the trials before it, pooled, by a
// two-sample Kolmogorov-Smirnov test, converged when its p-value is above
// Threshold (a higher threshold is stricter). Fewer than two values on
// either side is not converged.
func (c Convergence) ConvergedDistribution(prior, latest []float64) (bool, string) {
	if len(prior) < 2 || len(latest) < 2 {
		return false, fmt.Sprintf("convergence: %d and %d per-request values of %s (2 a side needed)", len(prior), len(latest), c.Metric)
	}
	_, thr := c.mode()
	ks := stats.KSTwoSample(prior, latest)
	if ks.P > thr {
		return true, fmt.Sprintf("convergence: %s distribution KS p %.3g > %g (D %.3g, %d against %d requests)",
			c.Metric, ks.P, thr, ks.D, len(latest), len(prior))
	}
	return false, fmt.Sprintf("convergence: %s distribution KS p %.3g ≤ %g (D %.3g)", c.Metric, ks.P, thr, ks.D)
}
