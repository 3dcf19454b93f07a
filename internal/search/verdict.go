package search

import (
	"fmt"
	"math"
	"slices"

	"github.com/aiperf-go/aiperf/internal/stats"
)

// Outcome is a probe's (or one filter's) verdict on the SLA.
type Outcome string

// Outcomes.
const (
	Pass      Outcome = "pass"
	Fail      Outcome = "fail"
	Ambiguous Outcome = "ambiguous"
	// Pending is a probe none of whose trials has run yet (the search was
	// interrupted before its first ended): it says nothing of the server.
	Pending Outcome = "pending"
	// Unmeasured is a probe whose trials ended and all failed (no request
	// succeeded, or the server could not be reached): it says nothing of
	// the SLA either, and a search stops there.
	Unmeasured Outcome = "unmeasured"
)

// FilterVerdict is the verdict on one SLA filter at one probe.
type FilterVerdict struct {
	Filter
	Outcome Outcome
	N       int     // successful trials that measured the statistic
	Mean    float64 // their mean (NaN when none)
	// Lower and Upper are the one-sided t confidence bounds of the mean at
	// the level of this look (NaN with fewer than two values).
	Lower, Upper float64
	// Confidence is how sure the outcome is: one minus the one-sided
	// p-value of the mean being on the other side of the threshold,
	// Bonferroni-adjusted for the looks a probe may take. NaN for an
	// ambiguous outcome and for a single-trial (point) verdict.
	Confidence float64
}

// Verdict is the verdict on a probe: Pass when every filter passes, Fail
// when one fails (Breach is the first, in filter order), Ambiguous
// otherwise. Without filters every probe passes.
type Verdict struct {
	Outcome    Outcome
	Filters    []FilterVerdict
	Breach     *FilterVerdict
	Confidence float64 // pass: the least sure filter's; fail: the breach's; else NaN
}

// Judge gives the verdict on probe p. With n ≥ 2 successful values of a
// filtered statistic, the filter passes when the one-sided confidence bound
// on the good side's far end is inside the threshold (for lt: mean +
// t·s/√n < threshold) and fails when the near end is already past it (for
// lt: mean − t·s/√n ≥ threshold); t is Student's one-sided quantile at
// 1 − α/looks, α = 1 − rule.Confidence, looks the number of times a probe
// may be judged between rule.Min and rule.Max trials, so that the chance of
// a wrong pass or fail stays below α however many replicates a probe takes.
// A statistic no successful trial measured fails (AIPerf: unmeasurable is
// infeasible). With one value, the filter is ambiguous while the probe may
// still take another trial, and a point verdict (AIPerf's) once it may not.
// A probe with no trial yet is Pending, one whose trials all failed
// Unmeasured, with or without filters.
func Judge(p Probe, filters []Filter, rule TrialRule) Verdict {
	rule = rule.withDefaults()
	v := Verdict{Outcome: Pass, Confidence: math.NaN()}
	if len(p.Trials) == 0 {
		v.Outcome = Pending
		return v
	}
	if !slices.ContainsFunc(p.Trials, func(t Trial) bool { return t.OK }) {
		v.Outcome = Unmeasured
		return v
	}
	if len(filters) == 0 {
		return v
	}
	final := len(p.Trials) >= rule.Max
	conf := math.Inf(1)
	for _, f := range filters {
		fv := judgeFilter(f, p.values(f.Key()), rule, final)
		v.Filters = append(v.Filters, fv)
		switch {
		case fv.Outcome == Fail:
			v.Outcome = Fail
		case fv.Outcome == Ambiguous && v.Outcome == Pass:
			v.Outcome = Ambiguous
		case fv.Outcome == Pass:
			conf = math.Min(conf, fv.Confidence)
		}
	}
	switch {
	case v.Outcome == Fail:
		v.Breach = &v.Filters[indexOfBreach(v.Filters)]
		v.Confidence = v.Breach.Confidence
	case v.Outcome == Pass:
		v.Confidence = conf
	}
	return v
}

func indexOfBreach(fs []FilterVerdict) int {
	for i, f := range fs {
		if f.Outcome == Fail {
			return i
		}
	}
	return -1
}

// judgeFilter is the verdict on one filter from its values at a probe.
func judgeFilter(f Filter, xs []float64, rule TrialRule, final bool) FilterVerdict {
	nan := math.NaN()
	fv := FilterVerdict{Filter: f, N: len(xs), Mean: stats.Mean(xs), Lower: nan, Upper: nan, Confidence: nan}
	switch {
	case len(xs) == 0:
		fv.Outcome = Fail
		return fv
	case len(xs) == 1:
		fv.Outcome = Ambiguous
		if final && f.holds(fv.Mean) {
			fv.Outcome = Pass
		} else if final {
			fv.Outcome = Fail
		}
		return fv
	}
	n := float64(len(xs))
	se := stats.StdDev(xs) / math.Sqrt(n)
	looks := float64(rule.looks())
	alpha := (1 - rule.Confidence) / looks
	q := stats.TQuantile(1-alpha, n-1)
	fv.Lower, fv.Upper = fv.Mean-q*se, fv.Mean+q*se
	good, bad := fv.Upper, fv.Lower // the far and near ends, seen from the good side
	if !f.upper() {
		good, bad = fv.Lower, fv.Upper
	}
	switch {
	case f.holds(good):
		fv.Outcome = Pass
	case !f.holds(bad):
		fv.Outcome = Fail
	default:
		fv.Outcome = Ambiguous
		return fv
	}
	fv.Confidence = 1
	if se > 0 {
		t := math.Abs(fv.Mean-f.Threshold) / se
		p := 1 - stats.TCDF(t, n-1)
		fv.Confidence = 1 - math.Min(1, p*looks)
	}
	return fv
}

// describe says in a line why a verdict is ambiguous: the first ambiguous
// filter, its interval and threshold.
func (v Verdict) describe() string {
	for _, f := range v.Filters {
		if f.Outcome != Ambiguous {
			continue
		}
		if f.N < 2 {
			return fmt.Sprintf("%s: one value (%.4g) cannot settle %s %g", f.Key(), f.Mean, f.Op, f.Threshold)
		}
		return fmt.Sprintf("%s: mean %.4g, bounds [%.4g, %.4g] straddle %s %g", f.Key(), f.Mean, f.Lower, f.Upper, f.Op, f.Threshold)
	}
	return string(v.Outcome)
}
