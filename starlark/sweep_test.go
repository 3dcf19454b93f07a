package starlark_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const matrixScript = `
base = profile(model = "mock-model", url = "http://127.0.0.1:8000", request_count = 100,
               warmup_request_count = 10, reset_kv_cache = True)
sweep(name = %q, base = base,
      matrix = {"concurrency": [1, 4, 16], "synthetic_input_tokens_mean": [128, 512]},
      trials = 2, cooldown_seconds = 1.5)
`

func TestMatrix(t *testing.T) {
	t.Parallel()
	sweeps := loadScript(t, fmt.Sprintf(matrixScript, "scan"), starlark.Options{})
	require.Len(t, sweeps, 1)
	s := sweeps[0]
	assert.Equal(t, "scan", s.Name)
	assert.Equal(t, 2, s.Trials)
	assert.Equal(t, 1.5, s.CooldownSeconds)
	assert.Equal(t, "sweeps.star:4", s.Source)
	assert.Equal(t, []string{
		"concurrency_1__synthetic_input_tokens_mean_128",
		"concurrency_1__synthetic_input_tokens_mean_512",
		"concurrency_4__synthetic_input_tokens_mean_128",
		"concurrency_4__synthetic_input_tokens_mean_512",
		"concurrency_16__synthetic_input_tokens_mean_128",
		"concurrency_16__synthetic_input_tokens_mean_512",
	}, labels(s))

	ids := map[string]bool{}
	for i, c := range s.Cells {
		assert.Equal(t, i, c.Index)
		assert.Equal(t, plan.CellID("scan", c.Params), c.ID)
		ids[c.ID] = true
		require.Len(t, c.Params, 2)
		assert.Equal(t, "concurrency", c.Params[0].Name)
		assert.Equal(t, "synthetic_input_tokens_mean", c.Params[1].Name)
		assert.Equal(t, c.Params[0].Value, *c.Profile.Concurrency)
		assert.Equal(t, c.Params[1].Value, c.Profile.SyntheticInputTokensMean)
		// The base carries through.
		assert.Equal(t, plan.Ptr(100), c.Profile.RequestCount)
		assert.Equal(t, plan.Ptr(10), c.Profile.WarmupRequestCount)
		assert.True(t, c.Profile.ResetKVCache)
		assert.NoError(t, c.Profile.Check())
	}
	assert.Len(t, ids, 6, "cell ids must be unique")
	assert.Equal(t, plan.Param{Name: "concurrency", Value: 4}, s.Cells[2].Params[0])
	assert.Len(t, s.TrialList(), 12)

	t.Run("ids are stable", func(t *testing.T) {
		again := loadScript(t, fmt.Sprintf(matrixScript, "scan"), starlark.Options{})[0]
		for i := range s.Cells {
			assert.Equal(t, s.Cells[i].ID, again.Cells[i].ID)
		}
	})
	t.Run("ids depend on the sweep name", func(t *testing.T) {
		other := loadScript(t, fmt.Sprintf(matrixScript, "scan2"), starlark.Options{})[0]
		for i := range s.Cells {
			assert.NotEqual(t, s.Cells[i].ID, other.Cells[i].ID)
			assert.Equal(t, s.Cells[i].Label, other.Cells[i].Label)
		}
	})
}

func TestMatrixOrderFollowsDeclaration(t *testing.T) {
	t.Parallel()
	s := loadScript(t, `
sweep(name = "m", base = profile(model = "m"),
      matrix = {"output_tokens_mean": [32, 64], "concurrency": [2, 1], "request_rate": [0.5]})
`, starlark.Options{})[0]
	assert.Equal(t, []string{
		"output_tokens_mean_32__concurrency_2__request_rate_0.5",
		"output_tokens_mean_32__concurrency_1__request_rate_0.5",
		"output_tokens_mean_64__concurrency_2__request_rate_0.5",
		"output_tokens_mean_64__concurrency_1__request_rate_0.5",
	}, labels(s))
}

func TestZip(t *testing.T) {
	t.Parallel()
	s := loadScript(t, `
base = profile(model = "m")
sweep(name = "paired", base = base, zip = {"concurrency": [1, 8], "request_rate": [5, 40]})
`, starlark.Options{})[0]
	assert.Equal(t, []string{"concurrency_1__request_rate_5", "concurrency_8__request_rate_40"}, labels(s))
	assert.Equal(t, plan.Ptr(8), s.Cells[1].Profile.Concurrency)
	assert.Equal(t, plan.Ptr(40.0), s.Cells[1].Profile.RequestRate)
	// Values are normalised to the option's type: an int rate is a float.
	assert.Equal(t, plan.Param{Name: "request_rate", Value: 5.0}, s.Cells[0].Params[1])
	assert.Equal(t, 1, s.Trials)
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	s := loadScript(t, `
base = profile(model = "m", warmup_request_count = 10)
sweep(name = "lengths", base = base, scenarios = [
    {"name": "short", "output_tokens_mean": 32},
    {"name": "long", "output_tokens_mean": 512, "concurrency": 4},
    {"name": "cold", "warmup_request_count": None},
])
`, starlark.Options{})[0]
	assert.Equal(t, []string{"short", "long", "cold"}, labels(s))
	assert.Equal(t, []plan.Param{{Name: "output_tokens_mean", Value: 32}}, s.Cells[0].Params)
	assert.Equal(t, []plan.Param{{Name: "output_tokens_mean", Value: 512}, {Name: "concurrency", Value: 4}}, s.Cells[1].Params)
	assert.Equal(t, plan.Ptr(512), s.Cells[1].Profile.OutputTokensMean)
	assert.Equal(t, plan.Ptr(4), s.Cells[1].Profile.Concurrency)
	assert.Equal(t, plan.Ptr(10), s.Cells[0].Profile.WarmupRequestCount)
	assert.Nil(t, s.Cells[2].Profile.WarmupRequestCount, "None unsets an option")
}

func TestBaseOnlyAndSeveralSweeps(t *testing.T) {
	t.Parallel()
	sweeps := loadScript(t, `
base = profile(model = "m", concurrency = 3)
sweep(name = "one", base = base)
sweep(name = "two", base = base.replace(concurrency = 5), trials = 4)
`, starlark.Options{})
	require.Len(t, sweeps, 2)
	assert.Equal(t, "one", sweeps[0].Name)
	assert.Equal(t, []string{"base"}, labels(sweeps[0]))
	assert.Empty(t, sweeps[0].Cells[0].Params)
	assert.Equal(t, plan.Ptr(3), sweeps[0].Cells[0].Profile.Concurrency)
	assert.Equal(t, plan.Ptr(5), sweeps[1].Cells[0].Profile.Concurrency)
	assert.Equal(t, 4, sweeps[1].Trials)
	assert.NotEqual(t, sweeps[0].Cells[0].ID, sweeps[1].Cells[0].ID)
}

func TestSkip(t *testing.T) {
	t.Parallel()
	s := loadScript(t, `
base = profile(model = "m", random_seed = 10)
sweep(name = "grid", base = base,
      matrix = {"concurrency": [1, 4, 16], "isl": [128, 512]},
      skip = lambda cell: (cell.concurrency == 4 and cell["synthetic_input_tokens_mean"] == 128) or
                          cell.label == "concurrency_16__synthetic_input_tokens_mean_512")
`, starlark.Options{})[0]
	assert.Equal(t, []string{
		"concurrency_1__synthetic_input_tokens_mean_128",
		"concurrency_1__synthetic_input_tokens_mean_512",
		"concurrency_4__synthetic_input_tokens_mean_512",
		"concurrency_16__synthetic_input_tokens_mean_128",
	}, labels(s))
	var seeds []int64
	for i, c := range s.Cells {
		assert.Equal(t, i, c.Index, "indexes count the cells that run")
		seeds = append(seeds, c.Profile.RandomSeed)
	}
	// Seeds follow the position before skip, so adding a skip never
	// changes another cell's workload.
	assert.Equal(t, []int64{10, 11, 13, 14}, seeds)
}

func TestSkipSeesProfileAndAliases(t *testing.T) {
	t.Parallel()
	s := loadScript(t, `
sweep(name = "s", base = profile(model = "m", request_count = 50),
      matrix = {"osl": [64, 1024]},
      skip = lambda c: "isl" in c or (c.osl > 512 and c.profile.request_count == 50))
`, starlark.Options{})[0]
	assert.Equal(t, []string{"output_tokens_mean_64"}, labels(s))
}

func TestSeeds(t *testing.T) {
	t.Parallel()
	seeds := func(s plan.Sweep) []int64 {
		var out []int64
		for _, c := range s.Cells {
			out = append(out, c.Profile.RandomSeed)
		}
		return out
	}
	sweeps := loadScript(t, `
base = profile(model = "m", random_seed = 100)
sweep(name = "per-cell", base = base, matrix = {"concurrency": [1, 2, 3]})
sweep(name = "same", base = base, matrix = {"concurrency": [1, 2, 3]}, same_seed = True)
sweep(name = "swept", base = base, matrix = {"random_seed": [7, 9]})
sweep(name = "scenario", base = base, scenarios = [{"name": "a", "random_seed": 5}, {"name": "b", "concurrency": 2}])
sweep(name = "default", base = profile(model = "m"), zip = {"concurrency": [1, 2]})
`, starlark.Options{})
	assert.Equal(t, []int64{100, 101, 102}, seeds(sweeps[0]))
	assert.Equal(t, []int64{100, 100, 100}, seeds(sweeps[1]))
	assert.Equal(t, []int64{7, 9}, seeds(sweeps[2]))
	assert.Equal(t, []int64{5, 101}, seeds(sweeps[3]))
	assert.Equal(t, []int64{0, 1}, seeds(sweeps[4]))
}

func TestProfile(t *testing.T) {
	t.Parallel()
	sweeps := loadScript(t, `
base = profile(model = "m", url = ["http://a:1", "http://b:2"], header = "X-Team:perf",
               isl = 256, osl = 64, request_rate = 5, concurrency = 4.0, streaming = True,
               server = "vllm", server_profiler = True)
warm = base.replace(warmup_request_count = base.concurrency * 2, concurrency = None)
sweep(name = "base", base = base)
sweep(name = "warm", base = warm)
sweep(name = "defaults", base = profile(model = "m"))
`, starlark.Options{})
	p := sweeps[0].Cells[0].Profile
	assert.Equal(t, []string{"http://a:1", "http://b:2"}, p.URL)
	assert.Equal(t, []string{"X-Team:perf"}, p.Header)
	assert.Equal(t, 256, p.SyntheticInputTokensMean)
	assert.Equal(t, plan.Ptr(64), p.OutputTokensMean)
	assert.Equal(t, plan.Ptr(5.0), p.RequestRate)
	assert.Equal(t, plan.Ptr(4), p.Concurrency)
	assert.True(t, p.Streaming)
	assert.Equal(t, "vllm", p.Server)
	assert.True(t, p.ServerProfiler)

	w := sweeps[1].Cells[0].Profile
	assert.Equal(t, plan.Ptr(8), w.WarmupRequestCount)
	assert.Nil(t, w.Concurrency)
	assert.Equal(t, p.URL, w.URL, "replace keeps everything else")

	want := plan.NewProfile()
	want.Model = []string{"m"}
	assert.Equal(t, want, sweeps[2].Cells[0].Profile, "unset options keep the aiperf profile defaults")
}

// TestValidationReportsEverything checks that every invalid cell of every
// sweep is reported at once, each at its sweep() call.
func TestValidationReportsEverything(t *testing.T) {
	t.Parallel()
	_, err := loadFiles(t, map[string]string{"sweeps.star": `
base = profile(model = "m")
sweep(name = "scan", base = base, matrix = {"concurrency": [0, 1, -1]})
sweep(name = "nomodel", base = profile(), zip = {"concurrency": [1, 2]})
sweep(name = "fine", base = base)
`}, starlark.Options{})
	errs := scriptErrors(t, err)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	assert.Equal(t, []string{
		`sweeps.star:3:6: sweep "scan" cell concurrency_0: --concurrency must be at least 1, got 0`,
		`sweeps.star:3:6: sweep "scan" cell concurrency_-1: --concurrency must be at least 1, got -1`,
		`sweeps.star:4:6: sweep "nomodel" (every cell): --model is required: name the served model, e.g. --model my-model`,
	}, got)
	assert.Equal(t, strings.Join(got, "\n"), err.Error())
}

func TestSecretsCannotBeSwept(t *testing.T) {
	for name, decl := range map[string]string{
		"api_key": `matrix = {"api_key": ["sk-a", "sk-b"]}`,
		"header":  `zip = {"header": [["Authorization: Bearer sk-a"], ["Authorization: Bearer sk-b"]]}`,
		"url":     `scenarios = [{"name": "a", "url": "http://u:sk-a@h:1"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadFiles(t, map[string]string{"sweeps.star": `sweep(name = "s", base = profile(model = "m"), ` + decl + `)`}, starlark.Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), name+" cannot be swept: its value is a secret")
			assert.NotContains(t, err.Error(), "sk-a")
		})
	}
	sweeps := loadScript(t, `sweep(name = "s", base = profile(model = "m"), zip = {"header": [["X-Tenant: a"], ["X-Tenant: b"]]})`, starlark.Options{})
	assert.Len(t, sweeps[0].Cells, 2, "a plain header may be swept")
}
