package search

import (
	"fmt"
	"math"
	"slices"
)

// Planner names: AIPerf's --search-planner values (search_history.json's
// config.planner), plus grid for the recipes that enumerate a fixed grid.
const (
	PlannerMonotonic      = "monotonic_sla"
	PlannerSmoothIsotonic = "smooth_isotonic"
	PlannerBayesian       = "bayesian"
	PlannerGrid           = "grid"
)

// Convergence reasons besides the planners' own.
const (
	ReasonMaxIterations = "max_iterations"
	ReasonGridComplete  = "grid_complete"
)

// Config is a whole search: the space, what is optimised and filtered, the
// planner and its budget, and the trial rule.
type Config struct {
	Recipe    string // AIPerf's recipe name; "" for the explicit --search-* stack
	Planner   string // one of the Planner* names, or a custom planner's (NewWith)
	Space     Space
	Objective Objective // may be empty for a grid without one
	Filters   []Filter  // SLA filters, in order (recipe flags first, then --search-sla)
	// MaxIterations caps the probes (not the trials); 0 takes the planner's
	// default: 20 monotonic, len(Grid) grid, else 30.
	MaxIterations int
	InitialPoints int   // bayesian: space-filling points before the GP (0: DefaultInitialPoints)
	Seed          int64 // --search-random-seed: every planner is deterministic given it
	// Precision is the 1D planners' relative bracket precision: they stop
	// when (fail − pass)/fail is below it, or the gap is 1 for int (0.05).
	Precision           float64
	ImprovementPatience int     // bayesian: stop after this many probes without a better one (10)
	PlateauWindow       int     // bayesian: probes the plateau test looks at (8)
	PlateauThreshold    float64 // bayesian: stop when their objective's CV is below this (0.01)
	Grid                []Point // grid: the points, in order
	Trials              TrialRule
	// Extra are more "metric.stat" statistics to read from each trial (a
	// post-process axis that is neither objective nor filter).
	Extra []string
}

// withDefaults fills the zero knobs with AIPerf's defaults.
func (c Config) withDefaults() Config {
	if c.MaxIterations == 0 {
		switch c.Planner {
		case PlannerGrid:
			c.MaxIterations = len(c.Grid)
		case PlannerMonotonic:
			c.MaxIterations = 20
		default:
			c.MaxIterations = 30
		}
	}
	if c.InitialPoints == 0 {
		c.InitialPoints = DefaultInitialPoints(c.MaxIterations)
	}
	if c.Precision == 0 {
		c.Precision = 0.05
	}
	if c.ImprovementPatience == 0 {
		c.ImprovementPatience = 10
	}
	if c.PlateauWindow == 0 {
		c.PlateauWindow = 8
	}
	if c.PlateauThreshold == 0 {
		c.PlateauThreshold = 0.01
	}
	c.Trials = c.Trials.withDefaults()
	return c
}

// Validate checks the config as a whole; every message names the flag or
// field at fault.
func (c Config) Validate() error {
	if err := c.Space.Validate(); err != nil {
		return err
	}
	for _, f := range c.Filters {
		if err := f.check(); err != nil {
			return fmt.Errorf("SLA filter %s: %w", f, err)
		}
	}
	if c.Objective != (Objective{}) || c.Planner == PlannerBayesian {
		if err := c.Objective.check(); err != nil {
			return err
		}
	}
	if err := c.Trials.check(); err != nil {
		return err
	}
	d := c.withDefaults()
	if err := c.validatePlanner(d); err != nil {
		return err
	}
	switch {
	case d.MaxIterations < 1 || d.MaxIterations > 10000:
		return fmt.Errorf("--search-max-iterations %d must be between 1 and 10000", d.MaxIterations)
	case !(d.Precision > 0 && d.Precision < 1):
		return fmt.Errorf("precision %g must be between 0 and 1 (exclusive)", d.Precision)
	}
	return nil
}

func (c Config) validatePlanner(d Config) error {
	switch c.Planner {
	case PlannerMonotonic, PlannerSmoothIsotonic:
		return checkOneDim(c)
	case PlannerBayesian:
		if d.InitialPoints < 1 || d.InitialPoints >= d.MaxIterations {
			return fmt.Errorf("the bayesian planner's %d initial points must be at least 1 and below its %d iterations", d.InitialPoints, d.MaxIterations)
		}
	case PlannerGrid:
		if len(c.Grid) == 0 {
			return fmt.Errorf("a grid search has no points")
		}
		for i, pt := range c.Grid {
			if err := c.Space.Check(pt); err != nil {
				return fmt.Errorf("grid point %d: %w", i, err)
			}
		}
	case "":
		return fmt.Errorf("no planner: use %s, %s, %s or %s", PlannerBayesian, PlannerMonotonic, PlannerSmoothIsotonic, PlannerGrid)
	}
	return nil
}

// checkOneDim is what the 1D SLA planners need: one parameter above 0
// (the exponential probe doubles from lo) and at least one SLA filter.
func checkOneDim(c Config) error {
	switch {
	case len(c.Space) != 1:
		return fmt.Errorf("the %s planner searches exactly one parameter (got %d): use %s for more", c.Planner, len(c.Space), PlannerBayesian)
	case c.Space[0].Lo <= 0:
		return fmt.Errorf("the %s planner doubles from lo, which must be > 0 (%s lo is %g)", c.Planner, c.Space[0].Key(), c.Space[0].Lo)
	case len(c.Filters) == 0:
		return fmt.Errorf("the %s planner needs at least one SLA filter (--ttft-sla-ms, --search-sla, ...)", c.Planner)
	}
	return nil
}

// Keys lists the "metric.stat" statistics a search reads from each trial:
// the objective's, the filters', the convergence criterion's and Extra.
func (c Config) Keys() []string {
	var keys []string
	add := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if c.Objective.Metric != "" {
		add(c.Objective.Key())
	}
	for _, f := range c.Filters {
		add(f.Key())
	}
	if c.Trials.Convergence != nil {
		add(c.Trials.Convergence.Key())
	}
	for _, k := range c.Extra {
		add(k)
	}
	return keys
}

// Observation is a settled probe as a planner sees it.
type Observation struct {
	Index     int     // iteration index
	Point     Point   //
	Trials    int     // trials run, failed ones included
	Verdict   Verdict // on the SLA filters (Pass without filters)
	Objective float64 // mean objective over successful trials; NaN when unmeasured
	// Margins are the filters' relative margins at their means (> 0 breaks
	// the filter; NaN when unmeasured), Margin the largest of them (NaN
	// when one is unmeasured or there are no filters).
	Margins []float64
	Margin  float64
}

// Decision is a planner's answer: the next point, or stop and why.
type Decision struct {
	Point  Point
	Stop   bool
	Reason string // convergence_reason when Stop
	Why    string // one line for the console, e.g. "bisect [8, 16]"
}

// Planner proposes the next point from the settled observations so far.
// Next must be a pure function of its configuration and obs, so that
// replaying a stored history reaches the same decisions.
type Planner interface {
	Next(obs []Observation) Decision
}

// HistoryPlanner is a Planner that also reads every trial's statistics,
// and may fail: a planner written in Starlark, say. Search.Next calls
// NextFrom instead of Next and returns its error. NextFrom must be a pure
// function of h and obs, as Next is.
type HistoryPlanner interface {
	Planner
	NextFrom(h History, obs []Observation) (Decision, error)
}

// Step is what a Search asks the runner to do next.
type Step struct {
	Stop   bool
	Reason string // convergence_reason when Stop
	// Probe is the iteration the trials belong to: len(History.Probes) for
	// a new probe, or an earlier index for more trials of that probe.
	Probe  int
	Point  Point
	Trials int    // how many trials to run now
	Why    string // one line for the console and the store's decision log
}

// Search drives a planner under a config.
type Search struct {
	cfg      Config
	planner  Planner
	undriven *Undriven // where it stopped short of its space (StopUndriven)
}

// New validates cfg and builds its planner.
func New(cfg Config) (*Search, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.withDefaults()
	var p Planner
	switch cfg.Planner {
	case PlannerMonotonic, PlannerSmoothIsotonic:
		p = bisector{cfg: d, smooth: cfg.Planner == PlannerSmoothIsotonic}
	case PlannerBayesian:
		p = bo{cfg: d}
	case PlannerGrid:
		p = grid{points: d.Grid}
	default:
		return nil, fmt.Errorf("unknown planner %q: use %s, %s, %s or %s", cfg.Planner, PlannerBayesian, PlannerMonotonic, PlannerSmoothIsotonic, PlannerGrid)
	}
	return &Search{cfg: d, planner: p}, nil
}

// NewWith drives a custom planner (a Starlark function, say) under cfg;
// cfg.Planner names it in search_history.json.
func NewWith(cfg Config, p Planner) (*Search, error) {
	if cfg.Planner == "" {
		return nil, fmt.Errorf("a custom planner needs a name (Config.Planner)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Search{cfg: cfg.withDefaults(), planner: p}, nil
}

// Config is the search's config with its defaults filled in.
func (s *Search) Config() Config { return s.cfg }

// Next says what to run after history h: more trials of the last probe
// while the trial rule wants them, else the planner's next point, else
// stop. It is a pure function of the config and h. A point the planner
// proposes outside the space is an error naming it, as is a HistoryPlanner's
// failure.
func (s *Search) Next(h History) (Step, error) {
	for i, p := range h.Probes {
		if err := s.cfg.Space.Check(p.Point); err != nil {
			return Step{}, fmt.Errorf("stored probe %d does not fit this search's space: %w", i, err)
		}
	}
	if n := len(h.Probes); n > 0 {
		last := h.Probes[n-1]
		if k, why := s.cfg.Trials.More(last, s.cfg.Filters); k > 0 {
			return Step{Probe: n - 1, Point: last.Point, Trials: k, Why: why}, nil
		}
	}
	obs := s.Observe(h)
	if len(obs) >= s.cfg.MaxIterations {
		reason := ReasonMaxIterations
		if s.cfg.Planner == PlannerGrid && len(obs) >= len(s.cfg.Grid) {
			reason = ReasonGridComplete
		}
		return Step{Stop: true, Reason: reason, Why: fmt.Sprintf("%d probes run", len(obs))}, nil
	}
	var d Decision
	if hp, ok := s.planner.(HistoryPlanner); ok {
		var err error
		if d, err = hp.NextFrom(h, obs); err != nil {
			return Step{}, err
		}
	} else {
		d = s.planner.Next(obs)
	}
	if d.Stop {
		return Step{Stop: true, Reason: d.Reason, Why: d.Why}, nil
	}
	if err := s.cfg.Space.Check(d.Point); err != nil {
		return Step{}, fmt.Errorf("the %s planner proposed a point outside the space: %w", s.cfg.Planner, err)
	}
	return Step{Probe: len(h.Probes), Point: d.Point, Trials: s.cfg.Trials.Min, Why: d.Why}, nil
}

// Observe judges every probe of h.
func (s *Search) Observe(h History) []Observation {
	obs := make([]Observation, len(h.Probes))
	for i, p := range h.Probes {
		o := Observation{Index: i, Point: p.Point, Trials: len(p.Trials), Verdict: Judge(p, s.cfg.Filters, s.cfg.Trials), Margin: math.NaN()}
		o.Objective = math.NaN()
		if s.cfg.Objective.Metric != "" {
			o.Objective = p.mean(s.cfg.Objective.Key())
		}
		worst := math.Inf(-1)
		for _, f := range s.cfg.Filters {
			m := f.margin(p.mean(f.Key()))
			o.Margins = append(o.Margins, m)
			worst = math.Max(worst, m) // NaN propagates
		}
		if len(s.cfg.Filters) > 0 {
			o.Margin = worst
		}
		obs[i] = o
	}
	return obs
}
