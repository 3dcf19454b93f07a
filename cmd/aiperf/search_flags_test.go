package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// searchFromArgs parses a streaming profile command line and builds its
// search.
func searchFromArgs(t *testing.T, args ...string) (plan.Search, bool, error) {
	t.Helper()
	return searchFromProfile(t, append([]string{"--streaming"}, args...)...)
}

// searchFromProfile parses a profile command line and builds its search.
func searchFromProfile(t *testing.T, args ...string) (plan.Search, bool, error) {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	parsed, lists, err := takeSweepLists(append([]string{"profile", "-m", "m", "-u", "http://a:1"}, args...))
	require.NoError(t, err)
	_, err = parser.Parse(parsed)
	require.NoError(t, err)
	c := &cli.Profile
	return c.SearchArgs.Search(searchInput{name: "s", base: c.Profile, trials: c.NumProfileRuns,
		confidence: c.ConfidenceLevel, lists: lists})
}

// The flags build the search AIPerf's would: the explicit stack's space,
// objective, budget and seed; a recipe's config and fixed options; the
// trial rule from --num-profile-runs, --search-max-replicates and
// --convergence-*.
func TestSearchFlags(t *testing.T) {
	t.Run("explicit", func(t *testing.T) {
		s, ok, err := searchFromArgs(t, "--search-space", "concurrency:1,256:int:log", "--search-space", "isl:64,512:int",
			"--search-metric", "output_token_throughput", "--search-direction", "maximize", "--search-max-iterations", "12",
			"--search-initial-points", "4", "--search-random-seed", "9", "--search-sla", "time_to_first_token:p95:lt:200",
			"--num-profile-runs", "2", "--search-max-replicates", "5", "--confidence-level", "0.9")
		require.NoError(t, err)
		require.True(t, ok)
		c := s.Config
		assert.Equal(t, search.PlannerBayesian, c.Planner)
		assert.Equal(t, []string{"concurrency", "synthetic_input_tokens_mean"}, []string{c.Space[0].Name, c.Space[1].Name})
		assert.True(t, c.Space[0].Log)
		assert.Equal(t, search.Objective{Metric: "output_token_throughput", Stat: "avg", Direction: search.Maximize}, c.Objective)
		assert.Equal(t, 12, c.MaxIterations)
		assert.Equal(t, 4, c.InitialPoints)
		assert.Equal(t, int64(9), c.Seed)
		assert.Equal(t, search.TrialRule{Min: 2, Max: 5, Confidence: 0.9}, c.Trials)
		assert.Nil(t, s.Recipe)
	})
	t.Run("recipe", func(t *testing.T) {
		s, ok, err := searchFromArgs(t, "--search-recipe", "max-goodput-under-slo", "--ttft-sla-ms", "300", "--e2e-sla-ms", "900",
			"--num-profile-runs", "4", "--convergence-metric", "goodput", "--convergence-mode", "cv")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, search.RecipeMaxGoodput, s.Config.Recipe)
		assert.Equal(t, "time_to_first_token:300 request_latency:900", s.Base.Goodput, "the recipe's fixed option")
		assert.Equal(t, search.TrialRule{Min: 3, Max: 4, Confidence: 0.95,
			Convergence: &search.Convergence{Metric: "goodput", Mode: "cv"}}, s.Config.Trials)
		require.NotNil(t, s.Recipe)
	})
	t.Run("pareto takes a concurrency list", func(t *testing.T) {
		s, _, err := searchFromArgs(t, "--search-recipe", "pareto-sweep", "--isl-osl-pairs", "128/64,512/128", "--concurrency", "1,8")
		require.NoError(t, err)
		assert.Len(t, s.Config.Grid, 4)
	})
	t.Run("no search", func(t *testing.T) {
		_, ok, err := searchFromArgs(t, "--concurrency", "4")
		require.NoError(t, err)
		assert.False(t, ok)
	})
	t.Run("convergence needs a cap", func(t *testing.T) {
		_, _, err := searchFromArgs(t, "--search-recipe", "concurrency-ramp", "--convergence-metric", "request_latency")
		assert.EqualError(t, err, "--convergence-metric stops adding trials to a probe: give --num-profile-runs N (N ≥ 2) as the cap")
	})
}

// A search on a metric a run does not have, or under an SLA no metric can
// meet, is refused before any probe, naming the flag (and the nearest
// metric); before, every probe ran and came back unmeasured.
func TestSearchOnAnUnknownMetricRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--search-sla", "time_to_frist_token:p95:lt:60"},
			`--search-sla time_to_frist_token:p95:lt:60: time_to_frist_token.p95: unknown metric "time_to_frist_token" (did you mean "time_to_first_token"?)`},
		{[]string{"--search-space", "concurrency:1,10:int", "--search-metric", "throughput_x", "--search-direction", "maximize",
			"--search-max-iterations", "6"}, `--search-metric throughput_x: throughput_x.avg: unknown metric "throughput_x"`},
		{[]string{"--search-recipe", "max-concurrency-under-sla", "--search-sla", "time_to_first_token:p99:lt:0"},
			"time_to_first_token.p99 lt 0 can never be met"},
	} {
		_, ok, err := searchFromArgs(t, c.args...)
		assert.True(t, ok)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want)
	}
	for _, sla := range []string{"server.ttft:p99:lt:200", "ttft:p99:lt:200"} {
		_, _, err := searchFromArgs(t, "--search-recipe", "max-concurrency-under-sla", "--search-sla", sla)
		require.Error(t, err, "%s: a probe's verdict reads the client's metrics by their tags", sla)
		assert.Contains(t, err.Error(), "a search judges its probes by the client's metrics")
	}
	_, _, err := searchFromArgs(t, "--search-recipe", "max-concurrency-under-sla", "--search-sla", "time_to_first_token:p99:lt:200")
	assert.NoError(t, err)
}

// A search that reads a streaming-only metric without --streaming is
// refused before any probe, whichever flag reads it; before, only
// --search-sla was checked, and a --search-metric time_to_first_token
// search ran every probe unmeasured.
func TestSearchOnAStreamingOnlyMetricNeedsStreaming(t *testing.T) {
	space := []string{"--search-space", "concurrency:1,10:int", "--search-max-iterations", "6"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--search-metric", "time_to_first_token", "--search-direction", "minimize", "--search-initial-points", "2"},
			`search "s": --search-metric time_to_first_token reads a streaming-only metric: add --streaming`},
		{[]string{"--search-metric", "request_latency", "--search-direction", "minimize", "--search-sla", "inter_token_latency:p99:lt:80"},
			`search "s": --search-sla inter_token_latency:p99:lt:80 reads a streaming-only metric: add --streaming`},
		{[]string{"--search-metric", "request_latency", "--search-direction", "minimize", "--num-profile-runs", "3",
			"--convergence-metric", "output_token_throughput_per_user"},
			`search "s": --convergence-metric output_token_throughput_per_user reads a streaming-only metric: add --streaming`},
	} {
		_, ok, err := searchFromProfile(t, append(space, c.args...)...)
		assert.True(t, ok)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
		_, _, err = searchFromArgs(t, append(space, c.args...)...)
		assert.NoError(t, err, "with --streaming: %v", c.args)
	}
	_, _, err := searchFromProfile(t, append(space, "--search-metric", "request_latency", "--search-direction", "minimize")...)
	assert.NoError(t, err, "request_latency is measured without streaming")
}

// The budget: the default initial points fit any --search-max-iterations
// from 2 (before, 2 to 5 failed, blaming --search-initial-points 5, never
// given); 0 initial points and a negative seed are refused, naming the flag.
func TestSearchBudgetFlags(t *testing.T) {
	obj := []string{"--search-space", "concurrency:1,10:int", "--search-metric", "request_latency", "--search-direction", "minimize"}
	for _, n := range []int{2, 3, 5} {
		s, _, err := searchFromArgs(t, append(obj, "--search-max-iterations", strconv.Itoa(n))...)
		require.NoError(t, err, "%d iterations", n)
		srch, err := s.New()
		require.NoError(t, err)
		assert.Equal(t, min(5, n-1), srch.Config().InitialPoints)
	}
	for args, want := range map[string]string{
		"--search-initial-points 0 --search-max-iterations 3": "--search-initial-points must be at least 1 (got 0)",
		"--search-initial-points 4 --search-max-iterations 3": "--search-initial-points 4 must be below --search-max-iterations 3",
		"--search-random-seed=-1 --search-max-iterations 3":   "--search-random-seed must be ≥ 0 (got -1)",
		"--search-max-iterations 1":                           "--search-max-iterations must be between 2 and 200 (got 1)",
	} {
		_, _, err := searchFromArgs(t, append(obj, strings.Fields(args)...)...)
		assert.ErrorContains(t, err, want, args)
	}
	_, _, err := searchFromArgs(t, "--search-recipe", "max-throughput-ttft-sla", "--ttft-sla-ms", "80", "--search-max-iterations", "3")
	assert.NoError(t, err, "the recipe's 5 initial points are cut to fit 3 iterations")
}

// An SLA no value of its metric can meet is refused: a percentage above
// 100, a fraction above 1.
func TestSearchOnAnUnmeetableBoundRefused(t *testing.T) {
	for sla, want := range map[string]string{
		"request_error_rate:avg:gt:100":  "request_error_rate.avg gt 100 can never be met: request_error_rate is at most 100",
		"request_error_rate:avg:ge:101":  "request_error_rate.avg ge 101 can never be met",
		"good_request_fraction:avg:gt:1": "good_request_fraction.avg gt 1 can never be met: good_request_fraction is at most 1",
		"request_latency:p99:lt:0":       "request_latency.p99 lt 0 can never be met",
	} {
		_, _, err := searchFromArgs(t, "--search-recipe", "max-concurrency-under-sla", "--search-sla", sla)
		assert.ErrorContains(t, err, want, sla)
	}
	_, _, err := searchFromArgs(t, "--search-recipe", "max-concurrency-under-sla", "--search-sla", "request_error_rate:avg:ge:100")
	assert.NoError(t, err, "every request failing meets ge 100")
}
