package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bound is one end of a 1D search's bracket.
type Bound struct {
	Value      float64
	Index      int     // the probe's iteration index
	Confidence float64 // its verdict's confidence (NaN for a point verdict)
	Objective  float64 // its objective (NaN when unmeasured)
	Trials     int
	Breach     *FilterVerdict // the failing end's first breached filter
}

// Bracket is the answer of a 1D SLA search: the highest load that passed
// and the lowest that failed, each with its confidence, the loads
// between them that stayed ambiguous after their replicates, and the loads
// probed whose first trial never ended (an interrupted search).
type Bracket struct {
	Param        Param
	Pass, Fail   *Bound
	Ambiguous    []float64
	Pending      []float64
	NonMonotonic []int // iteration indexes whose verdict contradicted the bracket
}

// Summary is what a search has found and spent.
type Summary struct {
	Probes      int
	TrialsSpent int
	// GridCells is the size of the grid the search replaced: one with the
	// resolution the search reached (in 1D, a step the width of the final
	// bracket, 1 for int; else every int value and 1/Precision steps per
	// real parameter); GridTrials is that grid at TrialRule.Min trials a cell.
	GridCells  int
	GridTrials int
	Bracket    *Bracket     // 1D searches only
	Best       *Observation // feasibility first, then the objective
	Feasible   int          // probes that passed
}

// Summarize sums up history h.
func (s *Search) Summarize(h History) Summary {
	obs := s.Observe(h)
	sum := Summary{Probes: len(h.Probes), TrialsSpent: h.TrialsSpent(), Best: s.best(obs)}
	for _, o := range obs {
		if o.Verdict.Outcome == Pass {
			sum.Feasible++
		}
	}
	if len(s.cfg.Space) == 1 && len(obs) > 0 {
		sum.Bracket = s.bracket(obs)
	}
	sum.GridCells = s.gridCells(sum.Bracket)
	sum.GridTrials = sum.GridCells * s.cfg.Trials.Min
	return sum
}

// best is AIPerf's best_trials[0]: the best objective among probes that
// passed, or among all measured probes when none passed.
func (s *Search) best(obs []Observation) *Observation {
	var best, bestAny *Observation
	for i := range obs {
		o := &obs[i]
		if math.IsNaN(o.Objective) {
			continue
		}
		if bestAny == nil || s.cfg.Objective.better(o.Objective, bestAny.Objective) {
			bestAny = o
		}
		if o.Verdict.Outcome == Pass && (best == nil || s.cfg.Objective.better(o.Objective, best.Objective)) {
			best = o
		}
	}
	if best != nil {
		return best
	}
	return bestAny
}

func (s *Search) bracket(obs []Observation) *Bracket {
	br := latch(obs)
	out := &Bracket{Param: s.cfg.Space[0]}
	bound := func(o *Observation) *Bound {
		if o == nil {
			return nil
		}
		b := &Bound{Value: o.Point[0], Index: o.Index, Confidence: o.Verdict.Confidence, Objective: o.Objective, Trials: o.Trials}
		if o.Verdict.Breach != nil {
			br := *o.Verdict.Breach
			b.Breach = &br
		}
		return b
	}
	out.Pass, out.Fail = bound(br.pass), bound(br.fail)
	for _, o := range br.amb {
		out.Ambiguous = append(out.Ambiguous, o.Point[0])
	}
	for _, o := range obs {
		if br.nonMonotonic[o.Index] {
			out.NonMonotonic = append(out.NonMonotonic, o.Index)
		}
		if o.Verdict.Outcome == Pending {
			out.Pending = append(out.Pending, o.Point[0])
		}
	}
	return out
}

func (s *Search) gridCells(br *Bracket) int {
	if s.cfg.Planner == PlannerGrid {
		return len(s.cfg.Grid)
	}
	cells := 1.0
	for _, p := range s.cfg.Space {
		step := s.cfg.Precision * (p.Hi - p.Lo)
		if p.Kind == KindInt {
			step = 1
		}
		if br != nil && br.Pass != nil && br.Fail != nil {
			step = math.Max(step, br.Fail.Value-br.Pass.Value)
		}
		cells *= math.Floor((p.Hi-p.Lo)/step) + 1
	}
	return int(math.Min(cells, math.MaxInt32))
}

// String is the bracket as the console shows it, e.g.
// "concurrency: 8 passed (97.5%), 9 failed (98.1%: time_to_first_token:p95:lt:80)".
func (b *Bracket) String() string {
	var parts []string
	if b.Pass != nil {
		parts = append(parts, fmt.Sprintf("%s passed (%s)", fmtValue(b.Pass.Value), pct(b.Pass.Confidence)))
	} else {
		parts = append(parts, "nothing passed")
	}
	if len(b.Ambiguous) > 0 {
		parts = append(parts, fmtValues(b.Ambiguous)+" ambiguous")
	}
	switch f := b.Fail; {
	case f != nil && f.Breach != nil && f.Breach.N == 0:
		// an unmeasured statistic fails the probe, but says nothing of the server
		parts = append(parts, fmt.Sprintf("%s failed unmeasured (no successful trial of %s measured %s: see runs show)",
			fmtValue(f.Value), plural(f.Trials, "trial"), f.Breach.Filter.String()))
	case f != nil:
		why := pct(f.Confidence)
		if f.Breach != nil {
			why += ": " + f.Breach.Filter.String()
		}
		parts = append(parts, fmt.Sprintf("%s failed (%s)", fmtValue(f.Value), why))
	default:
		parts = append(parts, "nothing failed")
	}
	if len(b.Pending) > 0 {
		parts = append(parts, fmtValues(b.Pending)+" pending (no trial ended)")
	}
	return b.Param.Name + ": " + strings.Join(parts, ", ")
}

// fmtValues is loads as a list, e.g. "8, 12".
func fmtValues(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmtValue(x)
	}
	return strings.Join(s, ", ")
}

// String is the summary's console line: the bracket (1D) or the best
// probe, and the trials spent against the grid replaced.
func (s Summary) String() string {
	head := "no probe yet"
	switch {
	case s.Bracket != nil:
		head = s.Bracket.String()
	case s.Best != nil:
		head = fmt.Sprintf("best probe %d at %v", s.Best.Index, []float64(s.Best.Point))
	}
	return fmt.Sprintf("%s; %s, %s against %d for a %d-cell grid", head, plural(s.Probes, "probe"), plural(s.TrialsSpent, "trial"),
		s.GridTrials, s.GridCells)
}

// plural is "1 trial" or "n trials".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func fmtValue(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func pct(c float64) string {
	if math.IsNaN(c) {
		return "one trial"
	}
	return strconv.FormatFloat(100*c, 'f', 1, 64) + "%"
}

// TrialDir is where a probe's trial keeps its artifacts under the search's
// directory, AIPerf's layout: search_iter_NNNN/profile_runs/run_NNNN, the
// probe from 0 and the trial from 1.
func TrialDir(probe, trial int) string {
	return fmt.Sprintf("search_iter_%04d/profile_runs/run_%04d", probe, trial)
}
