package search

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

func TestExpandRecipes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      RecipeInputs
		planner string
		params  []string
		filters []string
		cells   int
		fixed   map[string]any
		file    string
	}{
		{RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(200.0), Streaming: true}, PlannerBayesian,
			[]string{"concurrency"}, []string{"time_to_first_token:p95:lt:200"}, 0, nil, ""},
		{RecipeMaxThroughputITL, RecipeInputs{TPOTSLAms: ptr(50.0), Streaming: true}, PlannerBayesian,
			[]string{"concurrency"}, []string{"inter_token_latency:p95:lt:50"}, 0, nil, ""},
		{RecipeMaxConcurrency, RecipeInputs{TTFTSLAms: ptr(200.0), ITLSLAms: ptr(25.0), E2ESLAms: ptr(2000.0), ErrorRateSLA: ptr(0.01),
			SearchSLA: []Filter{{Metric: "request_throughput", Stat: "avg", Op: "ge", Threshold: 1}}, Streaming: true}, PlannerMonotonic,
			[]string{"concurrency"}, []string{"time_to_first_token:p95:lt:200", "inter_token_latency:p95:lt:25",
				"request_latency:p99:lt:2000", "request_error_rate:avg:lt:1", "request_throughput:avg:ge:1"}, 0, nil, ""},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(900.0), Style: StyleSmoothIsotonic}, PlannerSmoothIsotonic,
			[]string{"concurrency"}, []string{"request_latency:p99:lt:900"}, 0, nil, ""},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(900.0), Style: StyleBO}, PlannerBayesian,
			[]string{"concurrency"}, []string{"request_latency:p99:lt:900"}, 0, nil, ""},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(900.0), Style: StyleGrid}, PlannerGrid,
			[]string{"concurrency"}, []string{"request_latency:p99:lt:900"}, 8, nil, "sla_breach.json"},
		{RecipeMaxGoodput, RecipeInputs{TTFTSLAms: ptr(500.0), TPOTSLAms: ptr(15.0), E2ESLAms: ptr(2000.0), Streaming: true}, PlannerBayesian,
			[]string{"concurrency"}, []string{"good_request_fraction:avg:ge:0.95"}, 0,
			map[string]any{"goodput": "time_to_first_token:500 inter_token_latency:15 request_latency:2000"}, ""},
		{RecipeConcurrencyRamp, RecipeInputs{DegradationThreshold: ptr(0.3)}, PlannerGrid,
			[]string{"concurrency"}, nil, 8, nil, "degradation_knee.json"},
		{RecipePrefillCurve, RecipeInputs{ISLMin: ptr(128), ISLMax: ptr(4096), ISLSteps: ptr(6), Streaming: true}, PlannerGrid,
			[]string{"synthetic_input_tokens_mean"}, nil, 6, map[string]any{"concurrency": 1}, "prefill_curve.json"},
		{RecipeDecodeCurve, RecipeInputs{Streaming: true}, PlannerGrid,
			[]string{"concurrency", "output_tokens_mean"}, nil, 24, nil, "decode_itl_surface.json"},
		{RecipeParetoSweep, RecipeInputs{ISLOSLPairs: "128/128, 512/256,2048/512", Concurrency: []int{1, 4, 16}, Streaming: true}, PlannerGrid,
			[]string{"synthetic_input_tokens_mean", "output_tokens_mean", "concurrency"}, nil, 9, map[string]any{}, "pareto_sweep.json"},
		{RecipeParetoSweep, RecipeInputs{ISLOSLPairs: "128/128", Concurrency: []int{1, 4}, Streaming: true}, PlannerGrid,
			[]string{"concurrency"}, nil, 2, map[string]any{"synthetic_input_tokens_mean": 128, "output_tokens_mean": 128}, "pareto_sweep.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.planner, func(t *testing.T) {
			r, err := ExpandRecipe(tc.name, tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.name, r.Config.Recipe)
			assert.Equal(t, tc.planner, r.Config.Planner)
			var params, filters []string
			for _, p := range r.Config.Space {
				params = append(params, p.Name)
			}
			for _, f := range r.Config.Filters {
				filters = append(filters, f.String())
			}
			assert.Equal(t, tc.params, params)
			assert.Equal(t, tc.filters, filters)
			assert.Len(t, r.Config.Grid, tc.cells)
			assert.Equal(t, tc.fixed, r.Fixed)
			if tc.file != "" {
				require.NotNil(t, r.PostProcess)
				assert.Equal(t, tc.file, r.PostProcess.File)
			}
			_, err = New(r.Config)
			require.NoError(t, err, "every expansion builds a search")
		})
	}
}

func TestRecipeDefaults(t *testing.T) {
	t.Parallel()
	r, err := ExpandRecipe(RecipeConcurrencyRamp, RecipeInputs{})
	require.NoError(t, err)
	assert.Equal(t, []Point{{1}, {3}, {7}, {19}, {52}, {139}, {373}, {1000}}, r.Config.Grid, "AIPerf's 8 log steps over [1, 1000]")
	r, err = ExpandRecipe(RecipePrefillCurve, RecipeInputs{Streaming: true})
	require.NoError(t, err)
	assert.Equal(t, []Point{{256}, {512}, {1024}, {2048}, {4096}, {8192}, {16384}, {32768}}, r.Config.Grid)
	r, err = ExpandRecipe(RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(1.0), Streaming: true, MaxIterations: ptr(12), Seed: ptr(int64(9))})
	require.NoError(t, err)
	assert.Equal(t, 12, r.Config.MaxIterations, "tunables override the recipe's 30")
	assert.Equal(t, int64(9), r.Config.Seed)
	assert.True(t, r.Config.Space[0].Log, "BO over concurrency is log-scaled")
	r, err = ExpandRecipe(RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), ConcurrencyMax: ptr(1024)})
	require.NoError(t, err)
	assert.Equal(t, 1024.0, r.Config.Space[0].Hi)
	assert.Equal(t, 20, r.Config.MaxIterations)
}

func TestRecipeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   RecipeInputs
		want string
	}{
		{"max-speed", RecipeInputs{}, `unknown --search-recipe "max-speed"`},
		{RecipeMaxThroughputTTFT, RecipeInputs{Streaming: true}, "requires --ttft-sla-ms"},
		{RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(200.0)}, "requires --streaming"},
		{RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(0.0), Streaming: true}, "--ttft-sla-ms must be a number > 0"},
		{RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(math.Inf(1)), Streaming: true}, "--ttft-sla-ms must be a finite number > 0, got +Inf"},
		{RecipeMaxThroughputTTFT, RecipeInputs{TTFTSLAms: ptr(math.NaN()), Streaming: true}, "--ttft-sla-ms must be a finite number > 0, got NaN"},
		{RecipeMaxThroughputITL, RecipeInputs{ITLSLAms: ptr(5.0), TPOTSLAms: ptr(5.0), Streaming: true}, "aliases; give one"},
		{RecipeMaxConcurrency, RecipeInputs{Streaming: true}, "requires at least one of --ttft-sla-ms"},
		{RecipeMaxConcurrency, RecipeInputs{ITLSLAms: ptr(20.0)}, "requires --streaming"},
		{RecipeMaxConcurrency, RecipeInputs{SearchSLA: []Filter{{Metric: tagTTFT, Stat: "p99", Op: "lt", Threshold: 9}}}, "requires --streaming"},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), Style: "optuna"}, "use bo"},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), Style: "sideways"}, `unknown --search-style "sideways"`},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), ConcurrencyMin: ptr(64), ConcurrencyMax: ptr(8)}, "empty or inverted"},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), ErrorRateSLA: ptr(5.0)}, "--error-rate-sla is a fraction"},
		{RecipeMaxConcurrency, RecipeInputs{E2ESLAms: ptr(1.0), Style: StyleGrid, MaxIterations: ptr(9)}, "runs a fixed grid"},
		{RecipeMaxGoodput, RecipeInputs{Streaming: true}, "requires per-request SLOs"},
		{RecipeMaxGoodput, RecipeInputs{E2ESLAms: ptr(1.0), SLOAttainmentFraction: ptr(1.5)}, "--slo-attainment-fraction"},
		{RecipeConcurrencyRamp, RecipeInputs{DegradationThreshold: ptr(1.5)}, "--degradation-threshold must be in (0, 1)"},
		{RecipeConcurrencyRamp, RecipeInputs{Seed: ptr(int64(1))}, "runs a fixed grid"},
		{RecipePrefillCurve, RecipeInputs{}, "requires --streaming"},
		{RecipePrefillCurve, RecipeInputs{Streaming: true, ISLSteps: ptr(1)}, "--isl-steps must be ≥ 2"},
		{RecipePrefillCurve, RecipeInputs{Streaming: true, ISLMin: ptr(0)}, "--isl-min must be ≥ 1"},
		{RecipeDecodeCurve, RecipeInputs{Streaming: true, OSLMin: ptr(900), OSLMax: ptr(100)}, "--osl-max (100) must be above --osl-min (900)"},
		{RecipeParetoSweep, RecipeInputs{Streaming: true}, "requires --isl-osl-pairs"},
		{RecipeParetoSweep, RecipeInputs{Streaming: true, ISLOSLPairs: "128"}, "'128' expected '<isl>/<osl>'"},
		{RecipeParetoSweep, RecipeInputs{Streaming: true, ISLOSLPairs: "0/128"}, "both sides must be a positive int"},
		{RecipeParetoSweep, RecipeInputs{Streaming: true, ISLOSLPairs: "128/128,128/128"}, "duplicate pair '128/128'"},
		{RecipeParetoSweep, RecipeInputs{Streaming: true, ISLOSLPairs: "128/128", Concurrency: []int{64}}, "single point is meaningless"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			_, err := ExpandRecipe(tc.name, tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := CheckExclusive(RecipeMaxThroughputTTFT, []string{"--search-space"})
	assert.ErrorContains(t, err, `--search-recipe "max-throughput-ttft-sla" is mutually exclusive with --search-space`)
	assert.NoError(t, CheckExclusive("", []string{"--search-space"}))
}

func TestParseSpaceAndFilters(t *testing.T) {
	t.Parallel()
	p, err := ParseParam("concurrency:1,1000:int")
	require.NoError(t, err)
	assert.Equal(t, Param{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: 1000, Kind: KindInt}, p)
	p, err = ParseParam("request_rate:0.5,64:real:log")
	require.NoError(t, err)
	assert.Equal(t, Param{Name: "request_rate", Path: "phases.profiling.rate", Lo: 0.5, Hi: 64, Kind: KindReal, Log: true}, p)
	p, err = ParseParam("temperature:0,1")
	require.NoError(t, err)
	assert.Equal(t, KindReal, p.Kind)
	for spec, want := range map[string]string{
		"concurrency":              "want PATH:LO,HI",
		"concurrency:1":            "not LO,HI numbers",
		"concurrency:x,9:int":      "not LO,HI numbers",
		"concurrency:9,1:int":      "empty or inverted",
		"concurrency:5,5:int":      "empty or inverted",
		"concurrency:1,9:bool":     `kind "bool"`,
		"concurrency:1.5,9:int":    "whole bounds",
		"rate:0,9:real:log":        "log scale needs lo > 0",
		"rate:1,9:real:sqrt":       `"sqrt" is not log`,
		"concurrency:1,NaN:int":    "finite",
		"a:1,2:int:log:extra:more": "want PATH:LO,HI",
	} {
		_, err := ParseParam(spec)
		assert.ErrorContains(t, err, want, spec)
	}
	assert.ErrorContains(t, Space{}.Validate(), "the search space is empty")
	assert.ErrorContains(t, Space{paramConcurrency, paramConcurrency}.Validate(), "empty or inverted")

	f, err := ParseFilter("time_to_first_token:p95:lt:200")
	require.NoError(t, err)
	assert.Equal(t, Filter{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: 200}, f)
	for spec, want := range map[string]string{
		"ttft:p95:lt":        "want metric_tag:stat:op:threshold",
		"ttft:p97:lt:1":      `stat "p97"`,
		"ttft:p95:below:1":   `op "below"`,
		"ttft:p95:lt:twenty": "not a number",
		"ttft:p95:lt:Inf":    "finite",
	} {
		_, err := ParseFilter(spec)
		assert.ErrorContains(t, err, want, spec)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	base := slaConfig(PlannerMonotonic, 1000, 80, TrialRule{})
	tests := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Planner = "" }, "no planner"},
		{func(c *Config) { c.Planner = "optuna" }, `unknown planner "optuna"`},
		{func(c *Config) { c.Filters = nil }, "needs at least one SLA filter"},
		{func(c *Config) { c.Space = append(c.Space, Param{Name: "b", Lo: 1, Hi: 2, Kind: KindInt}) }, "exactly one parameter"},
		{func(c *Config) { c.Space[0].Lo = 0 }, "lo, which must be > 0"},
		{func(c *Config) { c.Trials = TrialRule{Min: 3, Max: 2} }, "--search-max-replicates 2 is below"},
		{func(c *Config) { c.Trials.Confidence = 1.5 }, "--confidence-level"},
		{func(c *Config) { c.Planner, c.InitialPoints, c.MaxIterations = PlannerBayesian, 9, 9 }, "9 initial points must be at least 1 and below its 9 iterations"},
		{func(c *Config) { c.Planner, c.Objective = PlannerBayesian, Objective{} }, "no objective metric"},
		{func(c *Config) { c.Planner, c.Grid = PlannerGrid, []Point{{5000}} }, "grid point 0"},
	}
	for _, tc := range tests {
		cfg := base
		cfg.Space = append(Space{}, base.Space...)
		tc.edit(&cfg)
		_, err := New(cfg)
		assert.ErrorContains(t, err, tc.want)
	}
}

// A custom planner (a Starlark function, later) plugs in through the same
// interface; a point outside the space is refused with its name.
func TestCustomPlannerOutsideTheSpace(t *testing.T) {
	t.Parallel()
	cfg := slaConfig("starlark", 100, 80, TrialRule{})
	s, err := NewWith(cfg, plannerFunc(func([]Observation) Decision { return Decision{Point: Point{500}} }))
	require.NoError(t, err)
	_, err = s.Next(History{})
	assert.ErrorContains(t, err, "the starlark planner proposed a point outside the space: phases.profiling.concurrency = 500 is outside the space [1, 100]")
	_, err = NewWith(Config{}, plannerFunc(nil))
	assert.ErrorContains(t, err, "needs a name")
}

type plannerFunc func([]Observation) Decision

func (f plannerFunc) Next(obs []Observation) Decision { return f(obs) }

// historyPlanner reads the trials' statistics and may fail.
type historyPlanner func(History, []Observation) (Decision, error)

func (f historyPlanner) Next([]Observation) Decision                             { panic("Search.Next calls NextFrom") }
func (f historyPlanner) NextFrom(h History, obs []Observation) (Decision, error) { return f(h, obs) }

// A HistoryPlanner sees every trial's statistics, and its failure is
// Search.Next's error.
func TestHistoryPlanner(t *testing.T) {
	t.Parallel()
	cfg := slaConfig("starlark", 100, 80, TrialRule{})
	var seen []float64
	s, err := NewWith(cfg, historyPlanner(func(h History, obs []Observation) (Decision, error) {
		seen = nil
		for _, p := range h.Probes {
			seen = append(seen, p.Trials[0].Values["time_to_first_token.p95"])
		}
		if len(obs) == 2 {
			return Decision{}, errors.New("planner failed")
		}
		return Decision{Point: Point{float64(10 * (len(obs) + 1))}}, nil
	}))
	require.NoError(t, err)
	var h History
	for range 2 {
		step, err := s.Next(h)
		require.NoError(t, err)
		h.Probes = append(h.Probes, Probe{Point: step.Point, Trials: []Trial{{OK: true, Values: map[string]float64{"time_to_first_token.p95": step.Point[0] * 2}}}})
	}
	_, err = s.Next(h)
	assert.EqualError(t, err, "planner failed")
	assert.Equal(t, []float64{20, 40}, seen)
}
