package starlark_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/starlark"
)

const searchBase = `base = profile(model = "mock-model", url = "http://127.0.0.1:8000", streaming = True, request_count = 9)
`

// loadSearches loads "sweeps.star" and returns its searches.
func loadSearches(t *testing.T, src string, o starlark.Options) ([]plan.Search, error) {
	t.Helper()
	o.ReadFile = memFS(map[string]string{"sweeps.star": src})
	s, err := starlark.LoadScript(context.Background(), "sweeps.star", o)
	return s.Searches, err
}

// drive runs a search against respond, as the runner would, and returns
// its history and its last step.
func drive(t *testing.T, s plan.Search, respond func(c float64) float64) (search.History, search.Step) {
	t.Helper()
	srch, err := s.New()
	require.NoError(t, err)
	var h search.History
	for range 100 {
		step, err := srch.Next(h)
		require.NoError(t, err)
		if step.Stop {
			return h, step
		}
		if step.Probe == len(h.Probes) {
			h.Probes = append(h.Probes, search.Probe{Point: step.Point})
		}
		p := &h.Probes[step.Probe]
		for range step.Trials {
			p.Trials = append(p.Trials, search.Trial{OK: true, Values: map[string]float64{
				"time_to_first_token.p99": respond(p.Point[0]), "output_token_throughput.avg": 10 * p.Point[0]}})
		}
	}
	t.Fatal("the search did not stop")
	return h, search.Step{}
}

func points(h search.History) []float64 {
	var out []float64
	for _, p := range h.Probes {
		out = append(out, p.Point[0])
	}
	return out
}

// boundary8 is a TTFT p99 that meets an 80 ms SLA up to concurrency 8.
func boundary8(c float64) float64 { return 80 * c / 8.5 }

// search() with a built-in planner declares the base, the space, the SLA,
// the objective and the trial rule; with an SLA over one parameter the
// planner is monotonic unless named.
func TestSearchBuiltin(t *testing.T) {
	t.Parallel()
	ss, err := loadSearches(t, searchBase+`
search(name = "sla", base = base.replace(reset_kv_cache = True), space = {"concurrency": [1, 1000]},
       sla = ["time_to_first_token:p99:lt:80"], objective = "output_token_throughput.avg",
       trials = 2, max_replicates = 4, confidence = 0.9, seed = 7, cooldown_seconds = 0.5)
search(name = "bo", base = base, space = ["concurrency:1,64:int:log", "osl:8,64:int"],
       objective = "output_token_throughput.avg", planner = "bo", max_iterations = 12, initial_points = 4)
search(name = "grid", base = base, space = {"request_rate": [1.0, 8.0]}, planner = "grid",
       grid = [{"request_rate": 1}, {"rate": 2.5}], stats = ["request_latency.p99"])
sweep(name = "plain", base = base)
`, starlark.Options{})
	require.NoError(t, err)
	require.Len(t, ss, 3)
	sla := ss[0]
	assert.Equal(t, "sla", sla.Name)
	assert.Equal(t, "sweeps.star:3", sla.Source)
	assert.True(t, sla.Base.ResetKVCache)
	c := sla.Config
	assert.Equal(t, search.PlannerMonotonic, c.Planner)
	assert.Equal(t, search.Space{{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: 1000, Kind: search.KindInt}}, c.Space)
	assert.Equal(t, []search.Filter{{Metric: "time_to_first_token", Stat: "p99", Op: "lt", Threshold: 80}}, c.Filters)
	assert.Equal(t, search.Objective{Metric: "output_token_throughput", Stat: "avg", Direction: search.Maximize}, c.Objective)
	assert.Equal(t, search.TrialRule{Min: 2, Max: 4, Confidence: 0.9}, c.Trials)
	assert.Equal(t, int64(7), c.Seed)
	assert.Equal(t, 0.5, sla.CooldownSeconds)
	assert.Nil(t, sla.Planner)

	bo := ss[1].Config
	assert.Equal(t, search.PlannerBayesian, bo.Planner)
	assert.Equal(t, []string{"concurrency", "output_tokens_mean"}, []string{bo.Space[0].Name, bo.Space[1].Name})
	assert.True(t, bo.Space[0].Log)
	assert.Equal(t, 12, bo.MaxIterations)
	assert.Equal(t, 4, bo.InitialPoints)

	grid := ss[2].Config
	assert.Equal(t, search.KindReal, grid.Space[0].Kind)
	assert.Equal(t, []search.Point{{1}, {2.5}}, grid.Grid)
	assert.Equal(t, []string{"request_latency.p99"}, grid.Extra)

	h, step := drive(t, sla, boundary8)
	assert.Equal(t, "monotonic_precision_reached", step.Reason)
	assert.Equal(t, []float64{1, 2, 4, 8, 16, 12, 10, 9}, points(h))

	sweeps, err := loadFiles(t, map[string]string{"sweeps.star": searchBase + `
search(name = "s", base = base, space = {"concurrency": [1, 8]}, sla = ["request_latency.p99:lt:9"])
sweep(name = "plain", base = base)`}, starlark.Options{})
	require.Error(t, err, "a broken search fails Load too")
	_ = sweeps
}

// bisect is a planner written in Starlark: double until a probe fails, then
// bisect between the highest pass and the lowest fail, reading each probe's
// verdict and stored statistics.
const bisect = searchBase + `
def next_point(history):
    passed = [p.point["concurrency"] for p in history if p.verdict == "pass"]
    failed = [p.point["concurrency"] for p in history if p.verdict == "fail"]
    for p in history:
        if p.stats["time_to_first_token.p99"] == None or len(p.values["time_to_first_token.p99"]) != p.trials:
            fail("probe %d has no statistics" % p.index)
    if not history:
        return {"concurrency": 1}
    if not failed:
        return {"concurrency": min(2 * max(passed), 1000)}
    lo, hi = max(passed) if passed else 0, min(failed)
    if hi - lo <= 1:
        return None
    return {"concurrency": (lo + hi) // 2}

search(name = "sla", base = base, space = {"concurrency": [1, 1000]},
       sla = ["time_to_first_token:p99:lt:80"], planner = next_point)
`

// A Starlark planner receives the history (each probe's point, verdict and
// statistics) and returns the next point or None; the search stops with
// planner_stopped. Its digest covers the script.
func TestSearchStarlarkPlanner(t *testing.T) {
	t.Parallel()
	ss, err := loadSearches(t, bisect, starlark.Options{})
	require.NoError(t, err)
	require.Len(t, ss, 1)
	s := ss[0]
	assert.Equal(t, "starlark:next_point", s.Config.Planner)
	assert.NotEmpty(t, s.PlannerDigest)
	h, step := drive(t, s, boundary8)
	assert.Equal(t, []float64{1, 2, 4, 8, 16, 12, 10, 9}, points(h))
	assert.Equal(t, starlark.ReasonPlannerStopped, step.Reason)
	assert.Equal(t, "next_point(history of 8) returned None", step.Why)

	other, err := loadSearches(t, bisect+"\n# edited\n", starlark.Options{})
	require.NoError(t, err)
	assert.NotEqual(t, s.Digest(), other[0].Digest(), "an edited planner is another search")
	again, err := loadSearches(t, bisect, starlark.Options{})
	require.NoError(t, err)
	assert.Equal(t, s.Digest(), again[0].Digest())
}

// Bad searches are refused at load, each at its line: the planner is asked
// for the first point before any traffic.
func TestSearchErrors(t *testing.T) {
	t.Parallel()
	def := func(body string) string {
		return searchBase + "def plan(history):\n" + body + `
search(name = "s", base = base, space = {"concurrency": [1, 100]}, sla = ["time_to_first_token:p99:lt:80"], planner = plan)
`
	}
	one := func(args string) string {
		return searchBase + "search(name = \"s\", base = base, " + args + ")\n"
	}
	tests := []struct {
		name, src string
		steps     uint64
		pos, msg  string
	}{
		{"outside the space", def(`    return {"concurrency": 500}`), 0, "sweeps.star:2:1",
			`search "s": planner plan returned {"concurrency": 500}: phases.profiling.concurrency = 500 is outside the space [1, 100]; return a point of the space as a dict, or None to stop`},
		{"not a dict", def(`    return 5`), 0, "sweeps.star:2:1", `search "s": planner plan returned 5: want a dict of concurrency, got int`},
		{"a missing parameter", def(`    return {}`), 0, "sweeps.star:2:1", `planner plan returned {}: concurrency is missing (the space is concurrency)`},
		{"an unknown parameter", def(`    return {"concurrency": 2, "isl": 5}`), 0, "sweeps.star:2:1",
			`isl is not a searched parameter (the space is concurrency)`},
		{"one option twice", def(`    return {"phases.profiling.concurrency": 2, "concurrency": 3}`), 0, "sweeps.star:2:1",
			`phases.profiling.concurrency and concurrency name one parameter, concurrency: give it once`},
		{"an alias beside the name", one(`space = {"osl": [8, 64]}, planner = "grid", grid = [{"osl": 8, "output_tokens_mean": 9}]`), 0, "sweeps.star:2:7",
			`grid[0]: osl and output_tokens_mean name one parameter, output_tokens_mean: give it once`},
		{"the step limit", def("    n = 0\n    for i in range(100000000):\n        n += i\n    return {\"concurrency\": 1}"), 100000,
			"sweeps.star:5:14", `search "s": planner plan exceeded the step limit of 100000 steps`},
		{"fail()", def(`    fail("no idea")`), 0, "sweeps.star:3:9", `search "s": planner plan: no idea`},
		{"None at once", def(`    return None`), 0, "sweeps.star:4:7", `search "s": the planner proposes no first point (plan(history of 0) returned None): a search needs one`},
		{"a planner declares", def(`    sweep(name = "x", base = base)`), 0, "sweeps.star:3:10", `sweeps are declared by the script itself`},
		{"an unknown planner", one(`space = {"concurrency": [1, 9]}, planner = "optuna"`), 0, "sweeps.star:2:7",
			`search: planner "optuna": use monotonic, smooth_isotonic, bo (bayesian), grid, or a function of the history`},
		{"an inverted space", one(`space = {"concurrency": [10, 1]}`), 0, "sweeps.star:2:7",
			`search: space: --search-space "concurrency:10,1:int": phases.profiling.concurrency: the space is empty or inverted (lo 10, hi 1): hi must be above lo`},
		{"an empty space", one(`space = {}`), 0, "sweeps.star:2:7", `search: space: the search space is empty`},
		{"not an option", one(`space = {"bogus": [1, 2]}`), 0, "sweeps.star:2:7", `search: space: unknown option "bogus"`},
		{"a string option", one(`space = {"model": [1, 2]}, objective = "request_latency.avg"`), 0, "sweeps.star:2:7", `--search-space model: the option is a string or list of strings; only numeric options can be searched`},
		{"monotonic without SLA", one(`space = {"concurrency": [1, 9]}, planner = "monotonic"`), 0, "sweeps.star:2:7",
			`the monotonic_sla planner needs at least one SLA filter`},
		{"a bad filter", one(`space = {"concurrency": [1, 9]}, sla = ["ttft:p99:lt"]`), 0, "sweeps.star:2:7", `sla[0]: --search-sla "ttft:p99:lt": want metric_tag:stat:op:threshold`},
		{"a name taken", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"]`) + "sweep(name = \"s\", base = base)\n", 0, "sweeps.star:3:6",
			`sweep: name "s" is already used by the sweep at sweeps.star:2:7`},
		{"no iterations", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], max_iterations = 0`), 0, "sweeps.star:2:7",
			`search: max_iterations must be between 2 and 200 (got 0)`},
		{"one iteration", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], max_iterations = 1`), 0, "sweeps.star:2:7",
			`search: max_iterations must be between 2 and 200 (got 1)`},
		{"negative iterations", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], max_iterations = -3`), 0, "sweeps.star:2:7",
			`search: max_iterations must be between 2 and 200 (got -3)`},
		{"no initial points", one(`space = {"concurrency": [1, 9]}, objective = "request_latency.avg", initial_points = 0`), 0, "sweeps.star:2:7",
			`search: initial_points must be at least 1 (got 0)`},
		{"initial points over the budget", one(`space = {"concurrency": [1, 9]}, objective = "request_latency.avg", initial_points = 4, max_iterations = 4`),
			0, "sweeps.star:2:7", `search: initial_points 4 must be below max_iterations 4`},
		{"a negative seed", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], seed = -1`), 0, "sweeps.star:2:7",
			`search: seed must be ≥ 0 (got -1)`},
		{"a string budget", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], max_iterations = "9"`), 0, "sweeps.star:2:7",
			`search: max_iterations: got string, want int`},
		{"a cooldown over a year", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = 1e10`), 0, "sweeps.star:2:7",
			`search: cooldown_seconds must be at most 31536000 seconds (one year), got 1e+10`},
		{"an infinite cooldown", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = float("inf")`), 0, "sweeps.star:2:7",
			`search: cooldown_seconds must be a finite number, got +Inf`},
		{"a NaN cooldown", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = float("nan")`), 0, "sweeps.star:2:7",
			`search: cooldown_seconds must be a finite number, got NaN`},
		{"a negative cooldown", one(`space = {"concurrency": [1, 9]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = -1`), 0, "sweeps.star:2:7",
			`search: cooldown_seconds must be 0 or more, got -1`},
		{"a bad probe profile", one(`space = {"warmup_request_count": [0, 9]}, objective = "request_latency.avg", direction = "minimize", max_iterations = 8`),
			0, "sweeps.star:2:7", `search "s": --warmup-request-count must be greater than 0, got 0 (omit it for no warmup) (in the search's probe with every parameter at its lower bound: warmup_request_count_0)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSearches(t, tc.src, starlark.Options{MaxSteps: tc.steps})
			errs := scriptErrors(t, err)
			require.Len(t, errs, 1, "%v", err)
			assert.Equal(t, tc.pos, errs[0].Pos, errs[0].Msg)
			assert.Contains(t, errs[0].Msg, tc.msg)
		})
	}
}

// search()'s budget follows the command line's rule: a Bayesian search of
// 2 to 5 iterations fits its default initial points to the budget.
func TestSearchBudgetFitsTheDefaults(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 5} {
		ss, err := loadSearches(t, searchBase+fmt.Sprintf(`
search(name = "s", base = base, space = {"concurrency": [1, 9]}, objective = "request_latency.avg", direction = "minimize", max_iterations = %d)
`, n), starlark.Options{})
		require.NoError(t, err, "%d iterations", n)
		srch, err := ss[0].New()
		require.NoError(t, err)
		assert.Equal(t, n, srch.Config().MaxIterations)
		assert.Equal(t, min(5, n-1), srch.Config().InitialPoints)
	}
}

// A search's probes count against --max-trials as max_iterations ×
// max_replicates.
func TestSearchCountsAgainstMaxTrials(t *testing.T) {
	t.Parallel()
	_, err := loadSearches(t, searchBase+fmt.Sprintf(`
search(name = "s", base = base, space = {"concurrency": [1, 9]}, sla = ["time_to_first_token:p99:lt:80"], trials = 2, max_replicates = %d)
`, 6), starlark.Options{MaxTrials: 100})
	errs := scriptErrors(t, err)
	assert.Contains(t, errs[0].Msg, "a search of at most 20 probes × 6 trials = 120 trials, over the limit of 100")
}
