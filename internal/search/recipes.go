package search

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Recipe names (AIPerf's --search-recipe values).
const (
	RecipeMaxConcurrency    = "max-concurrency-under-sla"
	RecipeMaxThroughputTTFT = "max-throughput-ttft-sla"
	RecipeMaxThroughputITL  = "max-throughput-itl-sla"
	RecipeMaxGoodput        = "max-goodput-under-slo"
	RecipeConcurrencyRamp   = "concurrency-ramp"
	RecipePrefillCurve      = "prefill-ttft-curve"
	RecipeDecodeCurve       = "decode-itl-curve"
	RecipeParetoSweep       = "pareto-sweep"
)

// Recipes lists every recipe name.
func Recipes() []string {
	return []string{RecipeMaxThroughputTTFT, RecipeMaxThroughputITL, RecipeMaxConcurrency, RecipeMaxGoodput,
		RecipeConcurrencyRamp, RecipePrefillCurve, RecipeDecodeCurve, RecipeParetoSweep}
}

// Styles of max-concurrency-under-sla (--search-style).
const (
	StyleMonotonic      = "monotonic"
	StyleSmoothIsotonic = "smooth_isotonic"
	StyleBO             = "bo"
	StyleGrid           = "grid"
)

// Metric tags the recipes name (AIPerf's).
const (
	tagTTFT       = "time_to_first_token"
	tagITL        = "inter_token_latency"
	tagE2E        = "request_latency"
	tagErrorRate  = "request_error_rate"
	tagThroughput = "output_token_throughput"
	tagGoodput    = "goodput"
	tagGoodFrac   = "good_request_fraction"
)

// Swept parameters: the profile option a probe sets and AIPerf's path.
var (
	paramConcurrency = Param{Name: "concurrency", Path: "phases.profiling.concurrency", Kind: KindInt}
	paramISL         = Param{Name: "synthetic_input_tokens_mean", Path: "datasets.main.prompts.isl", Kind: KindInt}
	paramOSL         = Param{Name: "output_tokens_mean", Path: "datasets.main.prompts.osl", Kind: KindInt}
)

// RecipeInputs are the recipe flags of `aiperf profile`; nil or empty is
// "not given".
type RecipeInputs struct {
	TTFTSLAms    *float64 // --ttft-sla-ms
	ITLSLAms     *float64 // --itl-sla-ms
	TPOTSLAms    *float64 // --tpot-sla-ms (alias of --itl-sla-ms)
	E2ESLAms     *float64 // --e2e-sla-ms
	ErrorRateSLA *float64 // --error-rate-sla, a fraction in (0, 1)
	SearchSLA    []Filter // --search-sla, in CLI order
	// SLOAttainmentFraction is --slo-attainment-fraction (0.95 when nil).
	SLOAttainmentFraction *float64
	Style                 string // --search-style (monotonic when empty)

	ConcurrencyMin, ConcurrencyMax, ConcurrencySteps *int
	ISLMin, ISLMax, ISLSteps                         *int
	OSLMin, OSLMax, OSLSteps                         *int

	DegradationThreshold *float64 // --degradation-threshold (0.20 when nil)
	DegradationMetric    string   // --degradation-metric-tag (request_latency)
	DegradationStat      string   // --degradation-stat (p99)

	ISLOSLPairs string // --isl-osl-pairs
	Concurrency []int  // --concurrency list (pareto-sweep)
	Streaming   bool   // --streaming

	// Tunables of the adaptive recipes (rejected on grid ones).
	MaxIterations *int   // --search-max-iterations
	InitialPoints *int   // --search-initial-points
	Seed          *int64 // --search-random-seed
	Trials        TrialRule
}

// Recipe is an expanded recipe: the search, the profile options every
// probe sets on top of the base profile, and the post-process artifact.
type Recipe struct {
	Name        string
	Config      Config
	Fixed       map[string]any
	PostProcess *PostProcess
}

// ExpandRecipe expands recipe name with its flags. Every error names the
// recipe and the flag at fault.
func ExpandRecipe(name string, in RecipeInputs) (*Recipe, error) {
	var (
		r   *Recipe
		err error
	)
	switch name {
	case RecipeMaxThroughputTTFT, RecipeMaxThroughputITL:
		r, err = maxThroughput(name, in)
	case RecipeMaxConcurrency:
		r, err = maxConcurrency(in)
	case RecipeMaxGoodput:
		r, err = maxGoodput(in)
	case RecipeConcurrencyRamp:
		r, err = concurrencyRamp(in)
	case RecipePrefillCurve:
		r, err = prefillCurve(in)
	case RecipeDecodeCurve:
		r, err = decodeCurve(in)
	case RecipeParetoSweep:
		r, err = paretoSweep(in)
	default:
		return nil, fmt.Errorf("unknown --search-recipe %q: use one of %s", name, strings.Join(Recipes(), ", "))
	}
	if err != nil {
		return nil, err
	}
	r.Name, r.Config.Recipe = name, name
	r.Config.Trials = in.Trials
	if err := r.tune(in); err != nil {
		return nil, err
	}
	if err := r.Config.Validate(); err != nil {
		return nil, fmt.Errorf("recipe %q: %w", name, err)
	}
	return r, nil
}

// tune applies --search-max-iterations, -initial-points and -random-seed,
// which only adaptive recipes accept (AIPerf's rule).
func (r *Recipe) tune(in RecipeInputs) error {
	if r.Config.Planner == PlannerGrid {
		if in.MaxIterations != nil || in.InitialPoints != nil || in.Seed != nil {
			return fmt.Errorf("recipe %q runs a fixed grid: --search-max-iterations, --search-initial-points and --search-random-seed do not apply", r.Name)
		}
		return nil
	}
	b := Budget{MaxIterations: in.MaxIterations, InitialPoints: in.InitialPoints, Seed: in.Seed}
	if err := b.Check(BudgetFlags); err != nil {
		return fmt.Errorf("recipe %q: %w", r.Name, err)
	}
	b.Apply(&r.Config)
	return nil
}

// CheckExclusive refuses a recipe together with explicit --search-* flags
// (the defining ones; the tunables are checked by ExpandRecipe), naming both.
func CheckExclusive(recipe string, explicit []string) error {
	if recipe == "" || len(explicit) == 0 {
		return nil
	}
	return fmt.Errorf("--search-recipe %q is mutually exclusive with %s: drop the explicit flags and let the recipe expand them, or drop --search-recipe and configure --search-* by hand",
		recipe, strings.Join(explicit, ", "))
}

func requireStreaming(name, why string, in RecipeInputs) error {
	if !in.Streaming {
		return fmt.Errorf("recipe %q requires --streaming (%s); enable streaming or pick another recipe", name, why)
	}
	return nil
}

// itlSLA is --itl-sla-ms or its alias --tpot-sla-ms; both is a conflict.
func itlSLA(name string, in RecipeInputs) (*float64, error) {
	if in.ITLSLAms != nil && in.TPOTSLAms != nil {
		return nil, fmt.Errorf("recipe %q: --itl-sla-ms and --tpot-sla-ms are aliases; give one", name)
	}
	if in.ITLSLAms != nil {
		return in.ITLSLAms, nil
	}
	return in.TPOTSLAms, nil
}

func positive(flag string, x *float64) error {
	switch {
	case x == nil:
	case math.IsNaN(*x) || math.IsInf(*x, 0):
		return fmt.Errorf("%s must be a finite number > 0, got %g", flag, *x)
	case *x <= 0:
		return fmt.Errorf("%s must be a number > 0 (got %g): a threshold ≤ 0 can never be met", flag, *x)
	}
	return nil
}

// slaFilters composes the recipe SLA flags into AIPerf's filters, in its
// order: TTFT p95, ITL p95, E2E p99, error rate (percentage points), then
// --search-sla.
func slaFilters(name string, in RecipeInputs) ([]Filter, error) {
	itl, err := itlSLA(name, in)
	if err != nil {
		return nil, err
	}
	var out []Filter
	for _, s := range []struct {
		flag string
		x    *float64
		f    Filter
	}{
		{"--ttft-sla-ms", in.TTFTSLAms, Filter{Metric: tagTTFT, Stat: "p95", Op: "lt"}},
		{"--itl-sla-ms", itl, Filter{Metric: tagITL, Stat: "p95", Op: "lt"}},
		{"--e2e-sla-ms", in.E2ESLAms, Filter{Metric: tagE2E, Stat: "p99", Op: "lt"}},
	} {
		if err := positive(s.flag, s.x); err != nil {
			return nil, err
		}
		if s.x != nil {
			s.f.Threshold = *s.x
			out = append(out, s.f)
		}
	}
	if e := in.ErrorRateSLA; e != nil {
		if !(*e > 0 && *e < 1) {
			return nil, fmt.Errorf("--error-rate-sla is a fraction in (0, 1), e.g. 0.01 for 1%% (got %g)", *e)
		}
		out = append(out, Filter{Metric: tagErrorRate, Stat: "avg", Op: "lt", Threshold: *e * 100})
	}
	return append(out, in.SearchSLA...), nil
}

// streamingOnly tells whether a filter reads a streaming-only metric.
func streamingOnly(fs []Filter) bool {
	return slices.ContainsFunc(fs, func(f Filter) bool { return metrics.StreamingOnly(f.Metric) })
}

// intBounds resolves a --X-min/--X-max pair against defaults.
func intBounds(flag string, lo, hi *int, dlo, dhi int) (float64, float64, error) {
	l, h := dlo, dhi
	if lo != nil {
		l = *lo
	}
	if hi != nil {
		h = *hi
	}
	switch {
	case l < 1:
		return 0, 0, fmt.Errorf("--%s-min must be ≥ 1 (got %d)", flag, l)
	case h <= l:
		return 0, 0, fmt.Errorf("--%s-max (%d) must be above --%s-min (%d): the range is empty or inverted", flag, h, flag, l)
	}
	return float64(l), float64(h), nil
}

// logAxis is the recipe's log-spaced grid over [--X-min, --X-max] in
// --X-steps steps.
func logAxis(flag string, lo, hi, steps *int, dlo, dhi, dsteps int) ([]float64, error) {
	l, h, err := intBounds(flag, lo, hi, dlo, dhi)
	if err != nil {
		return nil, err
	}
	n := dsteps
	if steps != nil {
		n = *steps
	}
	if n < 2 {
		return nil, fmt.Errorf("--%s-steps must be ≥ 2 (got %d): one point is no curve", flag, n)
	}
	return LogSteps(l, h, n)
}

// concurrencySpace is concurrency over the recipe's bounds (1..1000 by default).
func concurrencySpace(in RecipeInputs, log bool) (Space, error) {
	lo, hi, err := intBounds("concurrency", in.ConcurrencyMin, in.ConcurrencyMax, 1, 1000)
	if err != nil {
		return nil, err
	}
	p := paramConcurrency
	p.Lo, p.Hi, p.Log = lo, hi, log
	return Space{p}, nil
}

// axisSpace is the space of a grid: each parameter bounded by its values.
func axisSpace(params []Param, axes [][]float64) Space {
	s := make(Space, len(params))
	for i, p := range params {
		p.Lo, p.Hi = slices.Min(axes[i]), slices.Max(axes[i])
		s[i] = p
	}
	return s
}

var throughputObjective = Objective{Metric: tagThroughput, Stat: "avg", Direction: Maximize}
