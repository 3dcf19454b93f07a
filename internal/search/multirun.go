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
// trials (a cell's, not a search's probes'), naming the flag: a cap of
// trials ≥ 2, a metric of ours (streamed when streamingOnly), a statistic
// of MultiRunStats for ci_width and cv and none for distribution, which
// reads per-request records (not without them: records false).
func (c Convergence) CheckMultiRun(trials int, streaming, records bool) error {
	switch {
	case trials < 2:
		return errors.New("--convergence-metric stops adding trials to a cell: give --num-profile-runs N (N ≥ 2) as the cap")
	case !metrics.Known(c.Metric):
		return fmt.Errorf("--convergence-metric %q is not a metric of ours: name one by its tag (time_to_first_token, "+
			"inter_token_latency, request_latency, output_token_throughput, ...)", c.Metric)
	case !streaming && metrics.StreamingOnly(c.Metric):
		return fmt.Errorf("--convergence-metric %s is a streaming-only metric: add --streaming", c.Metric)
	case c.Stat != "" && !slices.Contains(MultiRunStats, c.Stat):
		return fmt.Errorf("--convergence-stat %q must be one of %v", c.Stat, MultiRunStats)
	case c.Mode == ModeDistribution && c.Stat != "":
		return errors.New("--convergence-stat applies to ci_width and cv: distribution compares every request's value")
	case c.Mode == ModeDistribution && !records:
		return errors.New("--convergence-mode distribution reads each trial's per-request records: drop --export-level summary")
	}
	return c.Check()
}
