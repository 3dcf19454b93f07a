package main

import (
	"errors"

	"github.com/aiperf-go/aiperf/internal/search"
)

// multiRunConvergence is the criterion the --convergence-* flags set for a
// run of several trials without a search (AIPerf's adaptive multi-run:
// each cell stops adding trials once it holds; nil when none is set),
// checked by search.Convergence.CheckMultiRun (and against each cell by
// plan.Sweep.CheckConvergence, once the cells are known). Every error
// names its flag; nothing has been sent.
func (a *SearchArgs) multiRunConvergence(trials int) (*search.Convergence, error) {
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
	return c, c.CheckMultiRun(trials)
}
