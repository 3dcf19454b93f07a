package search

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Stats a filter or an objective may name (AIPerf's SLAFilter stat set).
var knownStats = []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}

// boundedTags are the metrics that cannot exceed a bound: a percentage of
// the requests, and a fraction of them.
var boundedTags = map[string]float64{metrics.TagRequestErrorRate: 100, metrics.TagGoodRequestFraction: 1}

// Filter is one SLA filter (AIPerf's SLAFilter): the statistic Stat of
// metric Metric must satisfy Op (lt, le, gt, ge) against Threshold, in the
// metric's unit (ms for latencies, percentage points for request_error_rate).
type Filter struct {
	Metric    string  `json:"metric_tag"`
	Stat      string  `json:"stat"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
}

// Key is the "metric.stat" name of the filtered statistic, the key of
// Trial.Values.
func (f Filter) Key() string { return f.Metric + "." + f.Stat }

// String is the filter in --search-sla syntax.
func (f Filter) String() string {
	return fmt.Sprintf("%s:%s:%s:%s", f.Metric, f.Stat, f.Op, strconv.FormatFloat(f.Threshold, 'g', -1, 64))
}

// ParseFilter reads AIPerf's --search-sla syntax metric_tag:stat:op:threshold,
// e.g. "time_to_first_token:p95:lt:200".
func ParseFilter(spec string) (Filter, error) {
	parts := strings.Split(strings.TrimSpace(spec), ":")
	if len(parts) != 4 {
		return Filter{}, fmt.Errorf("--search-sla %q: want metric_tag:stat:op:threshold, e.g. time_to_first_token:p95:lt:200", spec)
	}
	x, err := strconv.ParseFloat(parts[3], 64)
	if err != nil {
		return Filter{}, fmt.Errorf("--search-sla %q: threshold %q is not a number", spec, parts[3])
	}
	f := Filter{Metric: parts[0], Stat: parts[1], Op: parts[2], Threshold: x}
	if err := f.check(); err != nil {
		return Filter{}, fmt.Errorf("--search-sla %q: %w", spec, err)
	}
	return f, nil
}

func (f Filter) check() error {
	switch {
	case f.Metric == "":
		return fmt.Errorf("an SLA filter names no metric")
	case !slices.Contains(knownStats, f.Stat):
		return fmt.Errorf("stat %q of %s is not one of %s", f.Stat, f.Metric, strings.Join(knownStats, ", "))
	case !slices.Contains([]string{"lt", "le", "gt", "ge"}, f.Op):
		return fmt.Errorf("op %q of %s is not lt, le, gt or ge", f.Op, f.Key())
	case math.IsNaN(f.Threshold) || math.IsInf(f.Threshold, 0):
		return fmt.Errorf("the threshold of %s is not a finite number", f.Key())
	case f.Op == "lt" && f.Threshold <= 0 || f.Op == "le" && f.Threshold < 0:
		return fmt.Errorf("%s %s %g can never be met: the metrics are at least 0", f.Key(), f.Op, f.Threshold)
	}
	if hi, ok := boundedTags[f.Metric]; ok && (f.Op == "gt" && f.Threshold >= hi || f.Op == "ge" && f.Threshold > hi) {
		return fmt.Errorf("%s %s %g can never be met: %s is at most %g", f.Key(), f.Op, f.Threshold, f.Metric, hi)
	}
	return nil
}

// upper tells whether the filter bounds the statistic from above (lt, le):
// lower values are the good side.
func (f Filter) upper() bool { return f.Op == "lt" || f.Op == "le" }

// holds tells whether the value v satisfies the filter.
func (f Filter) holds(v float64) bool {
	switch f.Op {
	case "lt":
		return v < f.Threshold
	case "le":
		return v <= f.Threshold
	case "gt":
		return v > f.Threshold
	}
	return v >= f.Threshold
}

// margin is how far v is past the threshold on the bad side, relative to
// the threshold (raw when the threshold is 0): > 0 breaks the filter,
// < 0 is slack.
func (f Filter) margin(v float64) float64 {
	d := v - f.Threshold
	if !f.upper() {
		d = -d
	}
	if f.Threshold != 0 {
		d /= math.Abs(f.Threshold)
	}
	return d
}

// Direction says which way an objective is better.
type Direction string

// Directions (AIPerf's --search-direction).
const (
	Maximize Direction = "maximize"
	Minimize Direction = "minimize"
)

// Objective is the statistic a search optimises (AIPerf's objectives[0]).
type Objective struct {
	Metric    string
	Stat      string
	Direction Direction
}

// Key is the "metric.stat" name of the objective statistic.
func (o Objective) Key() string { return o.Metric + "." + o.Stat }

func (o Objective) check() error {
	switch {
	case o.Metric == "":
		return fmt.Errorf("no objective metric: give --search-metric (e.g. output_token_throughput)")
	case !slices.Contains(knownStats, o.Stat):
		return fmt.Errorf("--search-stat %q is not one of %s", o.Stat, strings.Join(knownStats, ", "))
	case o.Direction != Maximize && o.Direction != Minimize:
		return fmt.Errorf("--search-direction %q is not maximize or minimize", o.Direction)
	}
	return nil
}

// better tells whether a beats b in the objective's direction.
func (o Objective) better(a, b float64) bool {
	if o.Direction == Minimize {
		return a < b
	}
	return a > b
}
