package main

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// SearchArgs are AIPerf's adaptive-search flags of `aiperf profile`: a
// recipe with its inputs, or the explicit --search-* stack (docs/search.md).
type SearchArgs struct {
	SearchRecipe string   `name:"search-recipe" group:"Search" placeholder:"NAME" help:"Search instead of running one cell: max-concurrency-under-sla, max-throughput-ttft-sla, max-throughput-itl-sla, max-goodput-under-slo, concurrency-ramp, prefill-ttft-curve, decode-itl-curve or pareto-sweep (docs/search.md)."`
	SearchStyle  string   `name:"search-style" group:"Search" placeholder:"STYLE" help:"max-concurrency-under-sla's planner: monotonic (default), smooth_isotonic, bo or grid."`
	TTFTSLAms    *float64 `name:"ttft-sla-ms" group:"Search" placeholder:"MS" help:"SLA: time_to_first_token p95 below MS (needs --streaming)."`
	ITLSLAms     *float64 `name:"itl-sla-ms" group:"Search" placeholder:"MS" help:"SLA: inter_token_latency p95 below MS (needs --streaming)."`
	TPOTSLAms    *float64 `name:"tpot-sla-ms" group:"Search" placeholder:"MS" help:"Alias of --itl-sla-ms."`
	E2ESLAms     *float64 `name:"e2e-sla-ms" group:"Search" placeholder:"MS" help:"SLA: request_latency p99 below MS."`
	ErrorRateSLA *float64 `name:"error-rate-sla" group:"Search" placeholder:"FRACTION" help:"SLA: request error rate below FRACTION, in (0, 1)."`
	SearchSLA    []string `name:"search-sla" sep:"none" group:"Search" placeholder:"TAG:STAT:OP:THR" help:"SLA filter, e.g. time_to_first_token:p99:lt:200 (repeatable; after the recipe's)."`
	SLOFraction  *float64 `name:"slo-attainment-fraction" group:"Search" placeholder:"F" help:"max-goodput-under-slo: share of requests meeting every SLO (default 0.95)."`

	ConcurrencyMin   *int `name:"concurrency-min" group:"Search" placeholder:"N" help:"Recipes' lowest concurrency (default 1)."`
	ConcurrencyMax   *int `name:"concurrency-max" group:"Search" placeholder:"N" help:"Recipes' highest concurrency (default 1000; 200 for decode-itl-curve)."`
	ConcurrencySteps *int `name:"concurrency-steps" group:"Search" placeholder:"N" help:"Grid recipes' concurrency steps (default 8; 6 for decode-itl-curve)."`
	ISLMin           *int `name:"isl-min" group:"Search" placeholder:"TOKENS" help:"prefill-ttft-curve's shortest prompt (default 256)."`
	ISLMax           *int `name:"isl-max" group:"Search" placeholder:"TOKENS" help:"prefill-ttft-curve's longest prompt (default 32768)."`
	ISLSteps         *int `name:"isl-steps" group:"Search" placeholder:"N" help:"prefill-ttft-curve's prompt lengths (default 8)."`
	OSLMin           *int `name:"osl-min" group:"Search" placeholder:"TOKENS" help:"decode-itl-curve's shortest output (default 64)."`
	OSLMax           *int `name:"osl-max" group:"Search" placeholder:"TOKENS" help:"decode-itl-curve's longest output (default 1024)."`
	OSLSteps         *int `name:"osl-steps" group:"Search" placeholder:"N" help:"decode-itl-curve's output lengths (default 4)."`

	DegradationThreshold *float64 `name:"degradation-threshold" group:"Search" placeholder:"F" help:"concurrency-ramp: the knee is the first concurrency whose statistic exceeds the lowest's by F (default 0.20)."`
	DegradationMetric    string   `name:"degradation-metric-tag" group:"Search" placeholder:"TAG" help:"concurrency-ramp's metric (default request_latency)."`
	DegradationStat      string   `name:"degradation-stat" group:"Search" placeholder:"STAT" help:"concurrency-ramp's statistic (default p99)."`
	ISLOSLPairs          string   `name:"isl-osl-pairs" group:"Search" placeholder:"I/O,..." help:"pareto-sweep's prompt/output length pairs, e.g. 128/128,512/256."`

	SearchSpace         []string `name:"search-space" sep:"none" group:"Search" placeholder:"PATH:LO,HI[:int|real[:log]]" help:"A searched parameter, e.g. concurrency:1,1000:int (repeatable)."`
	SearchMetric        string   `name:"search-metric" group:"Search" placeholder:"TAG" help:"The metric to optimise, e.g. output_token_throughput."`
	SearchStat          string   `name:"search-stat" group:"Search" placeholder:"STAT" help:"Its statistic (default avg)."`
	SearchDirection     string   `name:"search-direction" group:"Search" placeholder:"DIR" help:"maximize or minimize."`
	SearchMaxIterations *int     `name:"search-max-iterations" group:"Search" placeholder:"N" help:"Probes at most (2-200; required with --search-space)."`
	SearchInitialPoints *int     `name:"search-initial-points" group:"Search" placeholder:"N" help:"Bayesian optimisation: space-filling probes first, at least 1 (default 5, or --search-max-iterations - 1 when less)."`
	SearchRandomSeed    *int64   `name:"search-random-seed" group:"Search" placeholder:"N" help:"Seed of the planner, ≥ 0 (default 0): the same seed proposes the same probes."`
	SearchPlanner       string   `name:"search-planner" group:"Search" placeholder:"NAME" help:"With --search-space: bayesian (default), monotonic_sla or smooth_isotonic."`
	SearchMaxReplicates *int     `name:"search-max-replicates" group:"Search" placeholder:"N" help:"A probe whose SLA verdict is ambiguous takes more trials, up to N (default --num-profile-runs)."`

	ConvergenceMetric    string   `name:"convergence-metric" group:"Search" placeholder:"TAG" help:"Stop adding trials to a cell (or a search's probe) once this metric is stable, after at least min(3, N) of the --num-profile-runs N."`
	ConvergenceStat      string   `name:"convergence-stat" group:"Search" placeholder:"STAT" help:"Its statistic: avg (default), p50, p90, p95, p99, min or max (ci_width and cv)."`
	ConvergenceThreshold *float64 `name:"convergence-threshold" group:"Search" placeholder:"X" help:"ci_width: the interval's width over the mean (default 0.10); cv: std over mean (default 0.05); distribution: the KS p-value to exceed (default 0.05; higher is stricter)."`
	ConvergenceMode      string   `name:"convergence-mode" group:"Search" placeholder:"MODE" help:"ci_width (default), cv or distribution (the latest trial's requests against the earlier trials', by a Kolmogorov-Smirnov test; not for a search)."`
}

// recipeOnly are the flags that are recipe inputs, by flag name, with
// whether each was given.
func (a *SearchArgs) recipeOnly() []string {
	var out []string
	for _, f := range []struct {
		flag string
		set  bool
	}{
		{"--search-style", a.SearchStyle != ""}, {"--ttft-sla-ms", a.TTFTSLAms != nil}, {"--itl-sla-ms", a.ITLSLAms != nil},
		{"--tpot-sla-ms", a.TPOTSLAms != nil}, {"--e2e-sla-ms", a.E2ESLAms != nil}, {"--error-rate-sla", a.ErrorRateSLA != nil},
		{"--slo-attainment-fraction", a.SLOFraction != nil}, {"--concurrency-min", a.ConcurrencyMin != nil},
		{"--concurrency-max", a.ConcurrencyMax != nil}, {"--concurrency-steps", a.ConcurrencySteps != nil},
		{"--isl-min", a.ISLMin != nil}, {"--isl-max", a.ISLMax != nil}, {"--isl-steps", a.ISLSteps != nil},
		{"--osl-min", a.OSLMin != nil}, {"--osl-max", a.OSLMax != nil}, {"--osl-steps", a.OSLSteps != nil},
		{"--degradation-threshold", a.DegradationThreshold != nil}, {"--degradation-metric-tag", a.DegradationMetric != ""},
		{"--degradation-stat", a.DegradationStat != ""}, {"--isl-osl-pairs", a.ISLOSLPairs != ""},
	} {
		if f.set {
			out = append(out, f.flag)
		}
	}
	return out
}

// explicit are the defining flags of the explicit --search-* stack given.
func (a *SearchArgs) explicit() []string {
	var out []string
	for _, f := range []struct {
		flag string
		set  bool
	}{
		{"--search-space", len(a.SearchSpace) > 0}, {"--search-metric", a.SearchMetric != ""},
		{"--search-direction", a.SearchDirection != ""}, {"--search-stat", a.SearchStat != ""},
		{"--search-planner", a.SearchPlanner != ""},
	} {
		if f.set {
			out = append(out, f.flag)
		}
	}
	return out
}

// searching tells whether the command line asks for a search; any other
// search flag without one is an error naming it (see Search).
func (a *SearchArgs) searching() bool { return a.SearchRecipe != "" || len(a.SearchSpace) > 0 }

// stray lists the search flags given without a search.
func (a *SearchArgs) stray() []string {
	out := append(a.recipeOnly(), a.explicit()...)
	for _, f := range []struct {
		flag string
		set  bool
	}{
		{"--search-sla", len(a.SearchSLA) > 0}, {"--search-max-iterations", a.SearchMaxIterations != nil},
		{"--search-initial-points", a.SearchInitialPoints != nil}, {"--search-random-seed", a.SearchRandomSeed != nil},
		{"--search-max-replicates", a.SearchMaxReplicates != nil},
	} {
		if f.set {
			out = append(out, f.flag)
		}
	}
	return out
}

// searchInput is what a search takes from the rest of the command line.
type searchInput struct {
	name       string
	base       plan.Profile
	trials     int     // --num-profile-runs
	confidence float64 // --confidence-level
	lists      []sweepList
	cooldown   float64 // --profile-run-cooldown-seconds
}

// Search builds the search the flags ask for (ok false when they ask for
// none). Every error names the flag at fault; nothing has been sent.
func (a *SearchArgs) Search(in searchInput) (s plan.Search, ok bool, err error) {
	if !a.searching() {
		if stray := a.stray(); len(stray) > 0 {
			return s, false, fmt.Errorf("%s: search flags without a search: add --search-recipe NAME or --search-space PATH:LO,HI (docs/search.md)",
				strings.Join(stray, ", "))
		}
		return s, false, nil
	}
	filters, err := a.filters()
	if err != nil {
		return s, true, err
	}
	rule, err := a.trialRule(in)
	if err != nil {
		return s, true, err
	}
	if err := a.budget().Check(search.BudgetFlags); err != nil {
		return s, true, err
	}
	s = plan.Search{Name: in.name, Base: in.base, CooldownSeconds: in.cooldown}
	if a.SearchRecipe != "" {
		err = a.recipe(&s, in, filters, rule)
	} else {
		err = a.explicitSearch(&s, in, filters, rule)
	}
	if err != nil {
		return s, true, err
	}
	s.Base.WaitForAll()
	if err := errors.Join(s.Check(), checkSearchMetrics(s)); err != nil {
		return s, true, err
	}
	srch, err := s.New()
	if err != nil {
		return s, true, err
	}
	if _, err := srch.Next(search.History{}); err != nil {
		return s, true, err
	}
	return s, true, nil
}

func (a *SearchArgs) filters() ([]search.Filter, error) {
	var out []search.Filter
	for _, spec := range a.SearchSLA {
		f, err := search.ParseFilter(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// trialRule is how many trials a probe runs: --num-profile-runs, up to
// --search-max-replicates while ambiguous; under --convergence-metric at
// least min(3, N) and at most N (AIPerf's multi-run convergence).
func (a *SearchArgs) trialRule(in searchInput) (search.TrialRule, error) {
	rule := search.TrialRule{Min: in.trials, Max: in.trials, Confidence: in.confidence}
	if a.SearchMaxReplicates != nil {
		if *a.SearchMaxReplicates < in.trials {
			return rule, fmt.Errorf("--search-max-replicates %d is below --num-profile-runs %d, the trials every probe runs", *a.SearchMaxReplicates, in.trials)
		}
		rule.Max = *a.SearchMaxReplicates
	}
	if a.ConvergenceMetric == "" {
		if a.ConvergenceStat != "" || a.ConvergenceThreshold != nil || a.ConvergenceMode != "" {
			return rule, errors.New("--convergence-stat, --convergence-threshold and --convergence-mode need --convergence-metric")
		}
		return rule, nil
	}
	if in.trials < 2 {
		return rule, errors.New("--convergence-metric stops adding trials to a probe: give --num-profile-runs N (N ≥ 2) as the cap")
	}
	rule.Min = min(3, in.trials)
	rule.Convergence = &search.Convergence{Metric: a.ConvergenceMetric, Stat: a.ConvergenceStat, Mode: a.ConvergenceMode}
	if a.ConvergenceThreshold != nil {
		rule.Convergence.Threshold = *a.ConvergenceThreshold
	}
	return rule, nil
}

// recipe expands --search-recipe with its inputs.
func (a *SearchArgs) recipe(s *plan.Search, in searchInput, filters []search.Filter, rule search.TrialRule) error {
	if err := search.CheckExclusive(a.SearchRecipe, a.explicit()); err != nil {
		return err
	}
	ri := search.RecipeInputs{
		TTFTSLAms: a.TTFTSLAms, ITLSLAms: a.ITLSLAms, TPOTSLAms: a.TPOTSLAms, E2ESLAms: a.E2ESLAms, ErrorRateSLA: a.ErrorRateSLA,
		SearchSLA: filters, SLOAttainmentFraction: a.SLOFraction, Style: a.SearchStyle,
		ConcurrencyMin: a.ConcurrencyMin, ConcurrencyMax: a.ConcurrencyMax, ConcurrencySteps: a.ConcurrencySteps,
		ISLMin: a.ISLMin, ISLMax: a.ISLMax, ISLSteps: a.ISLSteps, OSLMin: a.OSLMin, OSLMax: a.OSLMax, OSLSteps: a.OSLSteps,
		DegradationThreshold: a.DegradationThreshold, DegradationMetric: a.DegradationMetric, DegradationStat: a.DegradationStat,
		ISLOSLPairs: a.ISLOSLPairs, Streaming: in.base.Streaming,
		MaxIterations: a.SearchMaxIterations, InitialPoints: a.SearchInitialPoints, Seed: a.SearchRandomSeed, Trials: rule,
	}
	for _, l := range in.lists {
		if l.option.Name != "concurrency" || a.SearchRecipe != search.RecipeParetoSweep {
			return fmt.Errorf("%s lists values to sweep, and recipe %q chooses its own points: drop the list (pareto-sweep alone takes a --concurrency list)",
				l.flag, a.SearchRecipe)
		}
		for _, v := range l.values {
			ri.Concurrency = append(ri.Concurrency, int(v.(int64)))
		}
	}
	r, err := search.ExpandRecipe(a.SearchRecipe, ri)
	if err != nil {
		return err
	}
	if err := plan.ApplyOptions(&s.Base, r.Fixed); err != nil {
		return fmt.Errorf("recipe %q: %w", a.SearchRecipe, err)
	}
	s.Config, s.Recipe = r.Config, r
	return nil
}

// explicitSearch is the --search-* stack.
func (a *SearchArgs) explicitSearch(s *plan.Search, in searchInput, filters []search.Filter, rule search.TrialRule) error {
	if only := a.recipeOnly(); len(only) > 0 {
		return fmt.Errorf("%s are inputs of --search-recipe; with --search-space give SLA filters as --search-sla TAG:STAT:OP:THR (e.g. time_to_first_token:p95:lt:200)",
			strings.Join(only, ", "))
	}
	if len(in.lists) > 0 {
		return fmt.Errorf("%s lists values to sweep, and --search-space lets the planner choose: drop the list", in.lists[0].flag)
	}
	if a.SearchMaxIterations == nil {
		return errors.New("--search-space needs --search-max-iterations N (2-200): how many probes the search may run")
	}
	if strings.EqualFold(a.SearchPlanner, "optuna") {
		return errors.New("--search-planner optuna needs AIPerf's Optuna stack, which aiperf-go does not have; use bayesian (constrained BO on a Gaussian process)")
	}
	c := search.Config{Planner: cmp.Or(a.SearchPlanner, search.PlannerBayesian), Filters: filters,
		MaxIterations: *a.SearchMaxIterations, Trials: rule}
	for _, spec := range a.SearchSpace {
		p, err := search.ParseParam(spec)
		if err != nil {
			return err
		}
		c.Space = append(c.Space, p)
	}
	if a.SearchMetric != "" || a.SearchDirection != "" {
		c.Objective = search.Objective{Metric: a.SearchMetric, Stat: cmp.Or(a.SearchStat, "avg"), Direction: search.Direction(a.SearchDirection)}
		if a.SearchMetric == "" {
			return errors.New("--search-direction needs --search-metric (e.g. output_token_throughput)")
		}
		if a.SearchDirection == "" {
			return fmt.Errorf("--search-metric %s needs --search-direction maximize or minimize", a.SearchMetric)
		}
	}
	a.budget().Apply(&c)
	if err := c.Validate(); err != nil {
		return err
	}
	s.Config = c
	return nil
}

// budget is the search's budget as the flags give it.
func (a *SearchArgs) budget() search.Budget {
	return search.Budget{MaxIterations: a.SearchMaxIterations, InitialPoints: a.SearchInitialPoints, Seed: a.SearchRandomSeed}
}
