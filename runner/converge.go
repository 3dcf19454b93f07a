package runner

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
)

// convergedStore is the part of the store (store.DB has it) that records
// why a cell stopped before its planned trials.
type convergedStore interface {
	MarkConverged(ctx context.Context, sweepID int64, cellID string, after int, why string) error
}

// stopConverged tells whether t's cell needs no more trials under the
// sweep's convergence criterion (plan.Sweep.Convergence), judged on the
// trials of the cell that ended; if so it notes t as not run (the cell's
// aggregate is written when its last trial is passed over, as when it
// ends). The first time a cell converges, a line says on what and the
// store records it (a failure to is a warning: the trials are stored).
func (s *sweepRun) stopConverged(ctx context.Context, l int, t plan.Trial) bool {
	c := s.sw.Convergence
	if c == nil {
		return false
	}
	why, stopped, runs := s.cellSoFar(t.Cell.ID)
	if !stopped {
		ok, reason := s.converged(*c, t.Cell, runs)
		if !ok {
			return false
		}
		why = reason
		if cs, ok := s.o.Store.(convergedStore); ok {
			if err := cs.MarkConverged(context.WithoutCancel(ctx), s.o.SweepID, t.Cell.ID, len(runs), why); err != nil {
				s.o.warn("warning: sweep %q %s: %v (its missing trials will read as missing, not as not needed)\n", s.sw.Name, t.Cell.Label, err)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !stopped {
		s.stopped[t.Cell.ID] = why
		s.out.ConvergedCells = append(s.out.ConvergedCells, s.afterTrials(t.Cell, len(runs), why))
		s.progressLocked(t, fmt.Sprintf("not run: the cell converged after %d trials (%s)", len(runs), why))
	} else {
		s.progressLocked(t, "not run: the cell converged")
	}
	s.out.Converged++
	s.notRun[t.Cell.ID]++
	s.left[l]--
	s.cellEndedLocked(t)
	return true
}

// unconverged notes why t's cell did not converge, once t, its last trial,
// ended without its criterion having held before it: the criterion judged
// on all its trials (ended and stored runs are judged the same way).
func (s *sweepRun) unconverged(t plan.Trial) {
	c := s.sw.Convergence
	if c == nil || s.last[t.Cell.ID] != t.Number {
		return
	}
	_, stopped, runs := s.cellSoFar(t.Cell.ID)
	if stopped {
		return
	}
	ok, why := s.converged(*c, t.Cell, runs)
	if ok {
		return // it holds on the last trial: none was left to skip
	}
	if why == "" {
		why = fmt.Sprintf("convergence: %d trials ended, %d needed to judge", len(runs), min(3, s.sw.Trials))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Unconverged = append(s.out.Unconverged, s.afterTrials(t.Cell, len(runs), why))
}

// cellSoFar is a cell's convergence so far: why it converged (stopped
// says whether it did) and its ended trials (a copy).
func (s *sweepRun) cellSoFar(id string) (why string, stopped bool, runs []*result.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	why, stopped = s.stopped[id]
	return why, stopped, slices.Clone(s.results[id])
}

// afterTrials is a cell's convergence line: "<cell> after 3 of 6 trials
// (<why>)".
func (s *sweepRun) afterTrials(c plan.Cell, ended int, why string) string {
	return fmt.Sprintf("%s after %d of %d trials (%s)", c.Label, ended, s.sw.Trials, why)
}

// converged judges criterion c on a cell's ended trials, as AIPerf's
// AdaptiveStrategy does: not before min(3, Trials) of them; ci_width and cv
// on the successful trials' run-level statistic, distribution on their
// per-request values (the latest trial's against the earlier ones').
func (s *sweepRun) converged(c search.Convergence, cell plan.Cell, runs []*result.Run) (bool, string) {
	if len(runs) < min(3, s.sw.Trials) {
		return false, ""
	}
	slices.SortStableFunc(runs, func(a, b *result.Run) int { return cmp.Compare(a.Info.Trial, b.Info.Trial) })
	var ok []*result.Run
	for _, r := range runs {
		if r.Status == result.StatusComplete {
			ok = append(ok, r)
		}
	}
	if c.Mode != search.ModeDistribution {
		var values []float64
		for _, r := range ok {
			if v, found := runStat(r, c.Metric, cmp.Or(c.Stat, "avg")); found {
				values = append(values, v)
			}
		}
		return c.Converged(values, cmp.Or(s.o.Confidence, 0.95), s.sw.Trials)
	}
	if len(ok) < min(3, s.sw.Trials) {
		return false, ""
	}
	var prior, latest []float64
	for i, r := range ok {
		values, err := artifacts.RequestValues(filepath.Join(s.o.TrialDir(plan.Trial{Sweep: s.sw.Name, Cell: cell, Number: r.Info.Trial}),
			report.NamesOf(cell.Profile).JSONL))
		if err != nil {
			s.o.warn("warning: sweep %q %s: convergence: %v\n", s.sw.Name, cell.Label, err)
			return false, ""
		}
		if i == len(ok)-1 {
			latest = values[c.Metric]
		} else {
			prior = append(prior, values[c.Metric]...)
		}
	}
	return c.ConvergedDistribution(prior, latest)
}

// runStat is a run's run-level statistic stat of metric tag (avg, min,
// max, p50 ... as the aggregate names them; a scalar metric's value is its
// avg).
func runStat(r *result.Run, tag, stat string) (float64, bool) {
	for _, m := range r.Profiling.Metrics {
		if m.Tag == tag {
			v, ok := statValues(m)[stat]
			return v, ok
		}
	}
	return 0, false
}
