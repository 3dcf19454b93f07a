package search

import (
	"fmt"
	"math"
	"slices"
	"sort"
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

// Bracket is the answer of a 1D SLA search, as AIPerf's history-derived
// boundary_summary reads it: the highest load that passed and the lowest
// that failed above it, each with its confidence, the loads between them
// that stayed ambiguous after their replicates, and the loads probed whose
// first trial never ended (an interrupted search). Failures at or below
// the highest pass (the SLA is not monotonic in the load: a throughput
// floor fails the low loads, say) are Below, lowest first; the lowest of
// all failures is boundary_summary's infeasible_min.
type Bracket struct {
	Param        Param
	Pass, Fail   *Bound
	Below        []Bound // failures at or below Pass, ascending
	Ambiguous    []float64
	Pending      []float64
	Unmeasured   []float64 // probes whose trials all failed
	NonMonotonic []int     // iteration indexes of the failures in Below
}

// InfeasibleMin is the lowest failing load (AIPerf's infeasible_min): the
// lowest of Below, else Fail; nil when nothing failed.
func (b *Bracket) InfeasibleMin() *Bound {
	if len(b.Below) > 0 {
		return &b.Below[0]
	}
	return b.Fail
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
	// Undriven is where the search stopped short of its space, the loads
	// above it not driven (nil: it did not): GridCells covers the loads
	// it could drive only.
	Undriven *Undriven

	space     Space
	objective Objective
	filtered  bool // the search has SLA filters: Best's verdict is told
	bestFirst bool // the answer is the best probe (Bayesian), the bracket after it
	bestToo   bool // the answer names the best probe after the bracket (grid, Starlark)
}

// Summarize sums up history h.
func (s *Search) Summarize(h History) Summary {
	obs := s.Observe(h)
	c := s.cfg
	sum := Summary{Probes: len(h.Probes), TrialsSpent: h.TrialsSpent(), Best: s.best(obs), space: c.Space,
		objective: c.Objective, filtered: len(c.Filters) > 0, bestFirst: c.Planner == PlannerBayesian, Undriven: s.undriven}
	sum.bestToo = !sum.bestFirst && c.Planner != PlannerMonotonic && c.Planner != PlannerSmoothIsotonic
	for _, o := range obs {
		if o.Verdict.Outcome == Pass {
			sum.Feasible++
		}
	}
	if len(c.Space) == 1 && len(obs) > 0 {
		sum.Bracket = s.bracket(obs)
	}
	sum.GridCells = s.gridCells(sum.Bracket)
	sum.GridTrials = sum.GridCells * c.Trials.Min
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

// bracket reads the answer of a 1D search off its probes, in any order
// (a grid's or a Bayesian search's probes need not come up the load).
func (s *Search) bracket(obs []Observation) *Bracket {
	out := &Bracket{Param: s.cfg.Space[0]}
	var pass *Observation
	for i := range obs {
		if o := &obs[i]; o.Verdict.Outcome == Pass && (pass == nil || o.Point[0] > pass.Point[0]) {
			pass = o
		}
	}
	if pass != nil {
		out.Pass = boundOf(pass)
	}
	fails := make([]*Observation, 0, len(obs))
	for i := range obs {
		if obs[i].Verdict.Outcome == Fail {
			fails = append(fails, &obs[i])
		}
	}
	sort.SliceStable(fails, func(i, j int) bool { return fails[i].Point[0] < fails[j].Point[0] })
	for _, o := range fails {
		switch {
		case pass != nil && o.Point[0] <= pass.Point[0]:
			out.Below = append(out.Below, *boundOf(o))
			out.NonMonotonic = append(out.NonMonotonic, o.Index)
		case out.Fail == nil:
			out.Fail = boundOf(o)
		}
	}
	sort.Ints(out.NonMonotonic)
	for _, o := range obs {
		x := o.Point[0]
		switch {
		case o.Verdict.Outcome == Pending:
			out.Pending = append(out.Pending, x)
		case o.Verdict.Outcome == Unmeasured:
			out.Unmeasured = append(out.Unmeasured, x)
		case o.Verdict.Outcome == Ambiguous && (out.Pass == nil || x > out.Pass.Value) && (out.Fail == nil || x < out.Fail.Value):
			out.Ambiguous = append(out.Ambiguous, x)
		}
	}
	slices.Sort(out.Ambiguous)
	return out
}

// boundOf is probe o as one end of a bracket.
func boundOf(o *Observation) *Bound {
	b := &Bound{Value: o.Point[0], Index: o.Index, Confidence: o.Verdict.Confidence, Objective: o.Objective, Trials: o.Trials}
	if o.Verdict.Breach != nil {
		br := *o.Verdict.Breach
		b.Breach = &br
	}
	return b
}

func (s *Search) gridCells(br *Bracket) int {
	space := s.cfg.Space
	if s.undriven != nil {
		space = s.undriven.Driven // the loads it could not drive are no part of the comparison
	}
	if s.cfg.Planner == PlannerGrid {
		n := 0
		for _, pt := range s.cfg.Grid {
			if space.within(pt) {
				n++
			}
		}
		return n
	}
	cells := 1.0
	for _, p := range space {
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
// "concurrency: 8 passed (97.5%), 9 failed (98.1%: time_to_first_token:p95:lt:80)";
// failures below the highest pass follow it, e.g. "; not monotonic: 1
// failed below 8 (output_token_throughput:avg:gt:500)".
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
	case len(b.Below) > 0:
		parts = append(parts, "nothing failed above it")
	default:
		parts = append(parts, "nothing failed")
	}
	if len(b.Unmeasured) > 0 {
		parts = append(parts, fmtValues(b.Unmeasured)+" unmeasured (every trial failed)")
	}
	if len(b.Pending) > 0 {
		parts = append(parts, fmtValues(b.Pending)+" pending (no trial ended)")
	}
	return b.Param.Name + ": " + strings.Join(parts, ", ") + b.below()
}

// below is the failures below the highest pass, e.g. "; not monotonic: 1,
// 2 failed below 8 (output_token_throughput:avg:gt:500)", or "".
func (b *Bracket) below() string {
	if len(b.Below) == 0 {
		return ""
	}
	xs := make([]float64, len(b.Below))
	var why []string
	for i, f := range b.Below {
		xs[i] = f.Value
		if f.Breach == nil {
			continue
		}
		w := f.Breach.Filter.String()
		if f.Breach.N == 0 {
			w += " unmeasured"
		}
		if !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	where := "below"
	if xs[len(xs)-1] == b.Pass.Value {
		where = "at or below"
	}
	s := fmt.Sprintf("; not monotonic: %s failed %s %s", fmtValues(xs), where, fmtValue(b.Pass.Value))
	if len(why) > 0 {
		s += " (" + strings.Join(why, ", ") + ")"
	}
	return s
}

// fmtValues is loads as a list, e.g. "8, 12".
func fmtValues(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmtValue(x)
	}
	return strings.Join(s, ", ")
}

// String is the summary's console line: the bracket of a 1D search with
// SLA filters and the best probe (a Bayesian search's first, a grid's or a
// Starlark planner's after the bracket; alone without a bracket), the loads
// it did not drive when it stopped short of its space, then the trials
// spent against the grid replaced.
func (s Summary) String() string {
	var heads []string
	bracket := s.Bracket != nil && (s.filtered || s.Best == nil)
	if bracket {
		heads = append(heads, s.Bracket.String())
	}
	if best := s.best(); best != "" && (!bracket || s.bestFirst || s.bestToo) {
		if s.bestFirst {
			heads = slices.Insert(heads, 0, best)
		} else {
			heads = append(heads, best)
		}
	}
	if len(heads) == 0 {
		heads = append(heads, "no probe yet")
	}
	if s.Undriven != nil {
		heads = append(heads, s.Undriven.String(s.space))
	}
	return fmt.Sprintf("%s; %s, %s against %d for a %d-cell grid", strings.Join(heads, "; "), plural(s.Probes, "probe"),
		plural(s.TrialsSpent, "trial"), s.GridTrials, s.GridCells)
}

// best is the best probe as the answer names it, e.g. "best feasible:
// concurrency 7 (output_token_throughput.avg 812.3)", or "" when no probe
// measured the objective.
func (s Summary) best() string {
	b := s.Best
	if b == nil {
		return ""
	}
	what := "best"
	switch {
	case !s.filtered:
	case b.Verdict.Outcome == Pass:
		what = "best feasible"
	case s.Feasible > 0:
		what = "best measured (no probe that passed measured the objective)"
	default:
		what = "best (nothing passed)"
	}
	vals := make([]string, len(b.Point))
	for i, x := range b.Point {
		vals[i] = s.space[i].Name + " " + fmtValue(x)
	}
	return fmt.Sprintf("%s: %s (%s %.4g)", what, strings.Join(vals, ", "), s.objective.Key(), b.Objective)
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
