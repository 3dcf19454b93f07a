package search

import (
	"errors"
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// MultiRunStats are the statistics a multi-run criterion takes
// (--convergence-stat), AIPerf's.
var MultiRunStats = []string{"avg", "p50", "p90", "p95", "p99", "min", "max"}

// CheckMultiRun says what is wrong with c as the criterion of a run of
// trials (a cell's, not a search's probes'), naming the flag, whatever the
// cells: a cap of trials ≥ 2, a metric of ours, a statistic of
// MultiRunStats for ci_width and cv (avg for a metric with one value a
// run) and none for distribution, whose metric must have one value per
// successful request. CheckCell checks it against each cell.
func (c Convergence) CheckMultiRun(trials int) error {
	scalar := slices.Contains(metrics.ScalarTags(), c.Metric)
	switch {
	case trials < 2:
		return errors.New("--convergence-metric stops adding trials to a cell: give --num-profile-runs N (N ≥ 2) as the cap")
	case !metrics.Known(c.Metric):
		return fmt.Errorf("--convergence-metric %q is not a metric of ours: name one by its tag (time_to_first_token, "+
			"inter_token_latency, request_latency, output_token_throughput, ...)", c.Metric)
	case c.Stat != "" && !slices.Contains(MultiRunStats, c.Stat):
		return fmt.Errorf("--convergence-stat %q must be one of %v", c.Stat, MultiRunStats)
	case c.Mode == ModeDistribution && c.Stat != "":
		return errors.New("--convergence-stat applies to ci_width and cv: distribution compares every request's value")
	case c.Mode == ModeDistribution && !slices.Contains(metrics.GoodputTags(), c.Metric):
		return fmt.Errorf("--convergence-mode distribution compares the per-request values of a metric, and %s has "+
			"none (one value a run, or a list per request): name one of %v", c.Metric, metrics.GoodputTags())
	case scalar && c.Stat != "" && c.Stat != "avg":
		return fmt.Errorf("--convergence-stat %s: %s has one value a run, which is its avg: drop --convergence-stat", c.Stat, c.Metric)
	}
	return c.Check()
}

// CheckCell says what makes c unjudgeable on a cell's trials (its label
// in the error when a sweep has several): a streaming-only metric of a
// cell that does not stream, a goodput metric without --goodput's SLOs,
// the distribution mode without per-request records.
func (c Convergence) CheckCell(label string, streaming, goodput, records bool) error {
	in := ""
	if label != "" {
		in = " (cell " + label + ")"
	}
	switch {
	case !streaming && metrics.StreamingOnly(c.Metric):
		return fmt.Errorf("--convergence-metric %s is a streaming-only metric%s: add --streaming", c.Metric, in)
	case !goodput && slices.Contains([]string{metrics.TagGoodput, metrics.TagGoodRequestCount, metrics.TagGoodRequestFraction}, c.Metric):
		return fmt.Errorf("--convergence-metric %s needs --goodput's SLOs%s, without which a run reports none", c.Metric, in)
	case c.Mode == ModeDistribution && !records:
		return fmt.Errorf("--convergence-mode distribution reads each trial's per-request records%s: drop --export-level summary", in)
	}
	return nil
}
