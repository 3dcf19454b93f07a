package main

import (
	"testing"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
)

// searchFromArgs parses a profile command line and builds its search.
func searchFromArgs(t *testing.T, args ...string) (plan.Search, bool, error) {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, append(parserOptions(), kong.Exit(func(int) { t.Fatal("kong exited") }))...)
	require.NoError(t, err)
	parsed, lists, err := takeSweepLists(append([]string{"profile", "-m", "m", "-u", "http://a:1", "--streaming"}, args...))
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
