package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// convergenceStats are the statistics --convergence-stat takes, AIPerf's.
var convergenceStats = []string{"avg", "p50", "p90", "p95", "p99", "min", "max"}

// multiRunConvergence is the criterion the --convergence-* flags set for a
// run of several trials without a search (AIPerf's adaptive multi-run:
// each cell stops adding trials once it holds; nil when none is set). It
// needs --num-profile-runs N ≥ 2, the cap; distribution reads each trial's
// per-request records, so not under --export-level summary. Every error
// names its flag; nothing has been sent.
func (a *SearchArgs) multiRunConvergence(trials int, base plan.Profile) (*search.Convergence, error) {
	if a.ConvergenceMetric == "" {
		if a.ConvergenceStat != "" || a.ConvergenceThreshold != nil || a.ConvergenceMode != "" {
			return nil, errors.New("--convergence-stat, --convergence-threshold and --convergence-mode need --convergence-metric")
		}
		return nil, nil
	}
	c := &search.Convergence{Metric: a.ConvergenceMetric, Stat: a.ConvergenceStat, Mode: a.ConvergenceMode}
	if a.ConvergenceThreshold != nil {
		c.Threshold = *a.ConvergenceThreshold
		if c.Threshold == 0 {
			return nil, errors.New("--convergence-threshold 0 must be between 0 and 1 (exclusive)")
		}
	}
	switch {
	case trials < 2:
		return nil, errors.New("--convergence-metric stops adding trials to a cell: give --num-profile-runs N (N ≥ 2) as the cap")
	case !metrics.Known(c.Metric):
		return nil, fmt.Errorf("--convergence-metric %q is not a metric of ours: name one by its tag (time_to_first_token, "+
			"inter_token_latency, request_latency, output_token_throughput, ...)", c.Metric)
	case !base.Streaming && metrics.StreamingOnly(c.Metric):
		return nil, fmt.Errorf("--convergence-metric %s is a streaming-only metric: add --streaming", c.Metric)
	case c.Stat != "" && !slices.Contains(convergenceStats, c.Stat):
		return nil, fmt.Errorf("--convergence-stat %q must be one of %v", c.Stat, convergenceStats)
	case c.Mode == search.ModeDistribution && c.Stat != "":
		return nil, errors.New("--convergence-stat applies to ci_width and cv: distribution compares every request's value")
	case c.Mode == search.ModeDistribution && base.ExportLevel == "summary":
		return nil, errors.New("--convergence-mode distribution reads each trial's per-request records: drop --export-level summary")
	}
	return c, c.Check()
}
