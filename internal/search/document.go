package search

import (
	"math"
	"strings"
)

// HistoryDoc is search_history.json in AIPerf's schema (config,
// iterations, best_trials feasibility-first, boundary_summary, recipe,
// convergence_reason), rewritten after every iteration. The fields marked
// "ours" are extensions AIPerf's readers ignore: each iteration's noise-aware
// verdict, trials and SLA bounds, the confidence of the bracket's ends, and
// the trials spent against the grid the search replaced.
type HistoryDoc struct {
	Config            HistoryConfig  `json:"config"`
	Iterations        []IterationDoc `json:"iterations"`
	BestTrials        []BestTrialDoc `json:"best_trials"`
	BoundarySummary   *BoundaryDoc   `json:"boundary_summary"`
	Recipe            *string        `json:"recipe"`
	ConvergenceReason *string        `json:"convergence_reason"`
	TrialsSpent       int            `json:"trials_spent"`    // ours
	GridEquivalent    GridDoc        `json:"grid_equivalent"` // ours: of the loads driven (Undriven)
	// Undriven (ours) is where the search stopped short of its space, the
	// loads it could not drive (convergence_reason undriven_load).
	Undriven *UndrivenDoc `json:"undriven,omitempty"`
}

// HistoryConfig is the config block: AIPerf's AdaptiveSearchSweep fields,
// then ours.
type HistoryConfig struct {
	Planner             string         `json:"planner"`
	Objectives          []ObjectiveDoc `json:"objectives"`
	OutcomeConstraints  []any          `json:"outcome_constraints"`
	MaxIterations       int            `json:"max_iterations"`
	NInitialPoints      int            `json:"n_initial_points"`
	RandomSeed          int64          `json:"random_seed"`
	ImprovementPatience int            `json:"improvement_patience"`
	PlateauWindow       int            `json:"plateau_window"`
	PlateauThreshold    float64        `json:"plateau_threshold"`
	SearchSpace         []SpaceDoc     `json:"search_space"`
	SLAFilters          []Filter       `json:"sla_filters"`
	ConfidenceLevel     float64        `json:"confidence_level"`      // ours
	MinTrials           int            `json:"min_trials"`            // ours: trials a new probe runs
	MaxReplicates       int            `json:"max_replicates"`        // ours: cap on a probe's trials
	Precision           float64        `json:"precision"`             // ours: 1D bracket precision
	Convergence         *Convergence   `json:"convergence,omitempty"` // ours
}

// ObjectiveDoc is one objectives entry; direction is upper case as AIPerf
// writes its enum's name.
type ObjectiveDoc struct {
	Metric    string   `json:"metric"`
	Stat      string   `json:"stat"`
	Direction string   `json:"direction"`
	Threshold *float64 `json:"threshold"`
}

// SpaceDoc is one search_space entry.
type SpaceDoc struct {
	Path string  `json:"path"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	Kind Kind    `json:"kind"`
	Name string  `json:"name,omitempty"` // ours: the profile option
	Log  bool    `json:"log,omitempty"`  // ours
}

// IterationDoc is one probe.
type IterationDoc struct {
	IterationIdx        int            `json:"iteration_idx"`
	VariationValues     map[string]any `json:"variation_values"`
	ObjectiveValues     []float64      `json:"objective_values"`
	Feasible            bool           `json:"feasible"`
	NonMonotonicWarning bool           `json:"non_monotonic_warning"`
	Verdict             Outcome        `json:"verdict"`       // ours
	Confidence          *float64       `json:"confidence"`    // ours
	Trials              int            `json:"trials"`        // ours
	FailedTrials        int            `json:"failed_trials"` // ours
	SLA                 []FilterDoc    `json:"sla,omitempty"` // ours
}

// FilterDoc is one filter's verdict at a probe; its first four fields and
// observed (the mean) are AIPerf's first_breach shape.
type FilterDoc struct {
	Filter
	Observed   *float64 `json:"observed"`
	Lower      *float64 `json:"lower,omitempty"`
	Upper      *float64 `json:"upper,omitempty"`
	N          int      `json:"n"`
	Verdict    Outcome  `json:"verdict"`
	Confidence *float64 `json:"confidence"`
}

// BestTrialDoc is one best_trials entry.
type BestTrialDoc struct {
	IterationIdx    int            `json:"iteration_idx"`
	ObjectiveValues []float64      `json:"objective_values"`
	VariationValues map[string]any `json:"variation_values"`
	Feasible        bool           `json:"feasible"`
	FeasibleCount   int            `json:"feasible_count"`
	ParetoRank      int            `json:"pareto_rank"`
}

// BoundaryDoc is boundary_summary: the bracket of a 1D search, AIPerf's
// history-derived one: feasible_max the highest passing value,
// infeasible_min the lowest failing one.
type BoundaryDoc struct {
	SweptDimPath      string         `json:"swept_dim_path"`
	FeasibleMax       *FeasibleDoc   `json:"feasible_max"`
	InfeasibleMin     *InfeasibleDoc `json:"infeasible_min"`
	BindingConstraint string         `json:"binding_constraint,omitempty"`
	Ambiguous         []any          `json:"ambiguous,omitempty"` // ours: loads left ambiguous between the ends
	// InfeasibleAbove (ours) is the lowest failing value above feasible_max
	// when infeasible_min is at or below it (the SLA is not monotonic in
	// the load): the bracket's upper end.
	InfeasibleAbove *InfeasibleDoc `json:"infeasible_above,omitempty"`
}

// FeasibleDoc is the highest load that passed.
type FeasibleDoc struct {
	Value          any      `json:"value"`
	IterationIdx   int      `json:"iteration_idx"`
	ObjectiveValue *float64 `json:"objective_value"`
	Confidence     *float64 `json:"confidence"` // ours
	Trials         int      `json:"trials"`     // ours
}

// InfeasibleDoc is the lowest load that failed.
type InfeasibleDoc struct {
	Value        any        `json:"value"`
	IterationIdx int        `json:"iteration_idx"`
	FirstBreach  *FilterDoc `json:"first_breach"`
	Confidence   *float64   `json:"confidence"` // ours
	Trials       int        `json:"trials"`     // ours
}

// GridDoc is what the grid the search replaced would have cost.
type GridDoc struct {
	Cells  int `json:"cells"`
	Trials int `json:"trials"`
}

// num is x, or nil (JSON null) when it is not a finite number.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Document builds search_history.json for history h; reason is the
// convergence reason once the search stopped, "" while it runs.
func (s *Search) Document(h History, reason string) HistoryDoc {
	obs := s.Observe(h)
	sum := s.Summarize(h)
	doc := HistoryDoc{Config: s.configDoc(), Recipe: strOrNil(s.cfg.Recipe), ConvergenceReason: strOrNil(reason),
		TrialsSpent: sum.TrialsSpent, GridEquivalent: GridDoc{Cells: sum.GridCells, Trials: sum.GridTrials},
		Undriven: s.undriven.doc(s.cfg.Space)}
	var nonMono map[int]bool
	if sum.Bracket != nil {
		nonMono = map[int]bool{}
		for _, i := range sum.Bracket.NonMonotonic {
			nonMono[i] = true
		}
	}
	doc.Iterations = make([]IterationDoc, len(obs))
	for i, o := range obs {
		doc.Iterations[i] = IterationDoc{IterationIdx: i, VariationValues: s.cfg.Space.keyed(o.Point),
			ObjectiveValues: objectiveValues(o), Feasible: o.Verdict.Outcome == Pass, NonMonotonicWarning: nonMono[i],
			Verdict: o.Verdict.Outcome, Confidence: num(o.Verdict.Confidence), Trials: o.Trials,
			FailedTrials: failed(h.Probes[i]), SLA: filterDocs(o.Verdict.Filters)}
	}
	if sum.Best != nil {
		doc.BestTrials = []BestTrialDoc{{IterationIdx: sum.Best.Index, ObjectiveValues: objectiveValues(*sum.Best),
			VariationValues: s.cfg.Space.keyed(sum.Best.Point), Feasible: sum.Best.Verdict.Outcome == Pass, FeasibleCount: sum.Feasible}}
	}
	doc.BoundarySummary = s.boundaryDoc(sum.Bracket, obs)
	return doc
}

func objectiveValues(o Observation) []float64 {
	if math.IsNaN(o.Objective) || math.IsInf(o.Objective, 0) {
		return nil
	}
	return []float64{o.Objective}
}

func failed(p Probe) int {
	n := 0
	for _, t := range p.Trials {
		if !t.OK {
			n++
		}
	}
	return n
}

func filterDocs(fs []FilterVerdict) []FilterDoc {
	var out []FilterDoc
	for _, f := range fs {
		out = append(out, filterDoc(f))
	}
	return out
}

func filterDoc(f FilterVerdict) FilterDoc {
	return FilterDoc{Filter: f.Filter, Observed: num(f.Mean), Lower: num(f.Lower), Upper: num(f.Upper), N: f.N,
		Verdict: f.Outcome, Confidence: num(f.Confidence)}
}

func (s *Search) configDoc() HistoryConfig {
	c := s.cfg
	out := HistoryConfig{Planner: c.Planner, OutcomeConstraints: []any{}, MaxIterations: c.MaxIterations,
		NInitialPoints: c.InitialPoints, RandomSeed: c.Seed, ImprovementPatience: c.ImprovementPatience,
		PlateauWindow: c.PlateauWindow, PlateauThreshold: c.PlateauThreshold, SLAFilters: append([]Filter{}, c.Filters...),
		ConfidenceLevel: c.Trials.Confidence, MinTrials: c.Trials.Min, MaxReplicates: c.Trials.Max,
		Precision: c.Precision, Convergence: c.Trials.Convergence, Objectives: []ObjectiveDoc{}}
	if o := c.Objective; o.Metric != "" {
		out.Objectives = append(out.Objectives, ObjectiveDoc{Metric: o.Metric, Stat: o.Stat, Direction: strings.ToUpper(string(o.Direction))})
	}
	for _, p := range c.Space {
		out.SearchSpace = append(out.SearchSpace, SpaceDoc{Path: p.Key(), Lo: p.Lo, Hi: p.Hi, Kind: p.Kind, Name: p.Name, Log: p.Log})
	}
	return out
}

// boundaryDoc is boundary_summary: null unless the search is 1D and one
// end of the bracket exists.
func (s *Search) boundaryDoc(br *Bracket, obs []Observation) *BoundaryDoc {
	if br == nil || (br.Pass == nil && br.InfeasibleMin() == nil) {
		return nil
	}
	low := br.InfeasibleMin()
	p := br.Param
	out := &BoundaryDoc{SweptDimPath: p.Key()}
	if b := br.Pass; b != nil {
		out.FeasibleMax = &FeasibleDoc{Value: p.value(b.Value), IterationIdx: b.Index, ObjectiveValue: num(b.Objective),
			Confidence: num(b.Confidence), Trials: b.Trials}
	}
	if low != nil {
		out.InfeasibleMin = infeasibleDoc(p, low)
		if s.cfg.Planner == PlannerSmoothIsotonic {
			out.BindingConstraint = s.binding(obs[low.Index])
		}
	}
	if br.Fail != nil && br.Fail != low {
		out.InfeasibleAbove = infeasibleDoc(p, br.Fail)
	}
	for _, x := range br.Ambiguous {
		out.Ambiguous = append(out.Ambiguous, p.value(x))
	}
	return out
}

// infeasibleDoc is a failing end of the bracket with its first breach.
func infeasibleDoc(p Param, b *Bound) *InfeasibleDoc {
	out := &InfeasibleDoc{Value: p.value(b.Value), IterationIdx: b.Index, Confidence: num(b.Confidence), Trials: b.Trials}
	if b.Breach != nil {
		d := filterDoc(*b.Breach)
		out.FirstBreach = &d
	}
	return out
}

// binding is the filter with the largest margin at o, "metric_tag:stat".
func (s *Search) binding(o Observation) string {
	best, at := math.Inf(-1), -1
	for i, m := range o.Margins {
		if m > best {
			best, at = m, i
		}
	}
	if at < 0 {
		return ""
	}
	return s.cfg.Filters[at].Metric + ":" + s.cfg.Filters[at].Stat
}
