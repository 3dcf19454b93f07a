package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// AIPerf's YAML sweeps: a grid over a bare phase field and a dataset path,
// variables substituted with their types, multi_run read; zip pairs
// element-wise; scenarios deep-merge their overlay.
func TestYAMLSweeps(t *testing.T) {
	grid := strings.Join([]string{
		`schemaVersion: "2.0"`,
		"variables: {base: 8, url: 'http://127.0.0.1:9'}",
		"multi_run: {num_runs: 3, cooldown_seconds: 2, vary_seed_per_trial: true}",
		"benchmark:",
		"  model: m",
		"  endpoint: {url: '{{ url }}'}",
		"  dataset: {type: synthetic, prompts: {isl: 64, osl: 16}}",
		"  phases: [{name: warmup, concurrency: 2, requests: 4}, {name: profiling, concurrency: '{{ base }}', requests: 20}]",
		"sweep:",
		"  type: grid",
		"  parameters:",
		"    concurrency: ['{{ base }}', 16]",
		"    datasets.default.prompts.isl: [128, 512]",
	}, "\n")
	f, err := Parse("grid.yaml", []byte(grid))
	require.NoError(t, err)
	assert.Equal(t, MultiRun{NumRuns: 3, CooldownSeconds: 2, WarmupFirstTrialOnly: true, VarySeedPerTrial: true}, f.MultiRun)
	assert.Equal(t, 8, f.Profile.Phases[1].Concurrency, "the base body, variables applied")
	assert.Equal(t, []string{"http://127.0.0.1:9"}, f.Profile.URL)
	require.NotNil(t, f.Sweep)
	require.Len(t, f.Sweep.Variations, 4)
	var got [][2]int
	for _, v := range f.Sweep.Variations {
		got = append(got, [2]int{v.Profile.Phases[1].Concurrency, v.Profile.SyntheticInputTokensMean})
		assert.Equal(t, 2, v.Profile.Phases[0].Concurrency, "the warmup is untouched")
	}
	assert.Equal(t, [][2]int{{8, 128}, {8, 512}, {16, 128}, {16, 512}}, got)
	assert.Equal(t, []plan.Param{{Name: "concurrency", Value: int64(16)}, {Name: "datasets.default.prompts.isl", Value: int64(512)}},
		f.Sweep.Variations[3].Params)

	zip := strings.Replace(strings.Replace(grid, "type: grid", "type: zip", 1), "[128, 512]", "[128, 1024]", 1)
	f, err = Parse("zip.yaml", []byte(zip))
	require.NoError(t, err)
	require.Len(t, f.Sweep.Variations, 2)
	assert.Equal(t, 1024, f.Sweep.Variations[1].Profile.SyntheticInputTokensMean)

	scen := strings.Join([]string{
		"benchmark: {model: m, phases: {concurrency: 4, requests: 8}, dataset: {prompts: {isl: 64, osl: 16}}}",
		"sweep:",
		"  type: scenarios",
		"  runs:",
		"    - {name: chatty, dataset: {prompts: {isl: 32}}}",
		"    - {phases: {concurrency: 32}}",
	}, "\n")
	f, err = Parse("scen.yaml", []byte(scen))
	require.NoError(t, err)
	require.Len(t, f.Sweep.Variations, 2)
	a, b := f.Sweep.Variations[0], f.Sweep.Variations[1]
	assert.Equal(t, []plan.Param{{Name: "scenario", Value: "chatty"}}, a.Params)
	assert.Equal(t, 32, a.Profile.SyntheticInputTokensMean)
	assert.Equal(t, 16, *a.Profile.OutputTokensMean, "merged, not replaced")
	assert.Equal(t, 32, b.Profile.Phases[0].Concurrency)
	assert.Equal(t, 8, b.Profile.Phases[0].Requests)
}

// An unknown top-level key's message lists every valid top-level key,
// the envelope's (sweep, multi_run, variables) among them, and a near
// miss of an envelope key is suggested.
func TestUnknownTopLevelKeyListsEnvelope(t *testing.T) {
	_, err := parse("bogus: 1", "benchmark:", "  model: m")
	require.ErrorContains(t, err, `unknown key "bogus" (expected one of: schema_version, random_seed, benchmark, plot, `+
		`no_sweep_table, sweep, multi_run, variables)`)
	_, err = parse("multi_runs: {num_runs: 2}", "benchmark:", "  model: m")
	require.ErrorContains(t, err, `unknown key "multi_runs" (did you mean "multi_run"?)`)
}
