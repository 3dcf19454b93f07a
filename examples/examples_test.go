package examples_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/starlark"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documented is what each example's header promises: its sweeps, in order,
// with their cell and trial counts.
var documented = map[string][]struct {
	name          string
	cells, trials int
}{
	"concurrency.star":  {{"concurrency", 4, 1}},
	"isl_osl_grid.star": {{"isl-osl", 8, 1}},
	"rate_scan.star":    {{"rate", 4, 3}},
	"prefix_cache.star": {{"prefix-cache", 2, 3}},
	"vllm.star":         {{"vllm", 4, 2}},
	"sglang.star":       {{"sglang", 3, 2}},
	"demo.star":         {{"demo", 6, 2}},
	"trace_replay.star": {{"trace-replay", 2, 3}},
	"multi_turn.star":   {{"multi-turn", 2, 1}},
	"vlm.star":          {{"vlm", 6, 1}},
	"sla_search.star":   nil, // a search: see TestSLASearchExample
}

func TestExamples(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.star") // lib/ holds modules, not sweeps
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			want, ok := documented[file]
			require.True(t, ok, "%s is not listed in documented", file)

			for _, tc := range []struct {
				name string
				vars map[string]string
				url  string
			}{
				{"defaults", nil, "http://127.0.0.1:8000"},
				{"url set", map[string]string{"url": "http://10.0.0.1:9000"}, "http://10.0.0.1:9000"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					script, err := starlark.LoadScript(context.Background(), file, starlark.Options{Vars: tc.vars})
					require.NoError(t, err)
					sweeps := script.Sweeps
					for _, s := range script.Searches {
						assert.Equal(t, []string{tc.url}, s.Base.URL, "search %s", s.Name)
						assert.NoError(t, s.Check(), "search %s", s.Name)
					}
					require.Len(t, sweeps, len(want))
					for i, s := range sweeps {
						assert.Equal(t, want[i].name, s.Name)
						assert.Len(t, s.Cells, want[i].cells)
						assert.Equal(t, want[i].trials, s.Trials)
						assert.Len(t, s.TrialList(), want[i].cells*want[i].trials)
						checkCells(t, s, tc.url)
					}
				})
			}
		})
	}
}

func checkCells(t *testing.T, s plan.Sweep, url string) {
	t.Helper()
	labels := map[string]bool{}
	ids := map[string]bool{}
	for i, c := range s.Cells {
		assert.NoError(t, c.Profile.Check(), "cell %s", c.Label)
		assert.False(t, labels[c.Label], "label %s repeats", c.Label)
		assert.False(t, ids[c.ID], "id %s repeats", c.ID)
		labels[c.Label], ids[c.ID] = true, true
		assert.Equal(t, i, c.Index)
		assert.Equal(t, []string{url}, c.Profile.URL, "cell %s", c.Label)
		assert.Equal(t, []string{"mock-model"}, c.Profile.Model, "cell %s", c.Label)
	}
}

// TestExampleDetails pins what the headers describe beyond the counts.
func TestExampleDetails(t *testing.T) {
	t.Parallel()
	load := func(t *testing.T, file string, vars map[string]string) plan.Sweep {
		t.Helper()
		sweeps, err := starlark.Load(context.Background(), file, starlark.Options{Vars: vars})
		require.NoError(t, err)
		return sweeps[0]
	}
	t.Run("concurrency scales requests with the level", func(t *testing.T) {
		s := load(t, "concurrency.star", nil)
		var got []int
		for _, c := range s.Cells {
			got = append(got, *c.Profile.Concurrency, *c.Profile.RequestCount)
			assert.Equal(t, *c.Profile.RequestCount+10, c.Profile.NumDatasetEntries, "a prompt for every request, warmup's included")
			assert.True(t, c.Profile.ResetKVCache)
			assert.True(t, c.Profile.Streaming)
		}
		assert.Equal(t, []int{1, 100, 4, 100, 16, 160, 64, 640}, got)
	})
	t.Run("grid skips the largest corner", func(t *testing.T) {
		s := load(t, "isl_osl_grid.star", nil)
		for _, c := range s.Cells {
			assert.False(t, c.Profile.SyntheticInputTokensMean == 4096 && *c.Profile.OutputTokensMean == 1024)
		}
		assert.Equal(t, "synthetic_input_tokens_mean_128__output_tokens_mean_64", s.Cells[0].Label)
	})
	t.Run("rate scan is poisson with a cooldown, scaled by seconds", func(t *testing.T) {
		s := load(t, "rate_scan.star", map[string]string{"seconds": "2", "cooldown": "0"})
		assert.Equal(t, 0.0, s.CooldownSeconds)
		for _, c := range s.Cells {
			assert.Equal(t, plan.RatePoisson, c.Profile.RequestRateMode)
			assert.Equal(t, int(*c.Profile.RequestRate*2), *c.Profile.RequestCount)
		}
		assert.Equal(t, 10.0, load(t, "rate_scan.star", nil).CooldownSeconds)
	})
	t.Run("prefix cache: cold has no warmup, both reset, same seed", func(t *testing.T) {
		s := load(t, "prefix_cache.star", nil)
		cold, warm := s.Cells[0], s.Cells[1]
		assert.Equal(t, "cold", cold.Label)
		assert.Equal(t, "warm", warm.Label)
		assert.Nil(t, cold.Profile.WarmupRequestCount)
		assert.Equal(t, plan.Ptr(100), warm.Profile.WarmupRequestCount)
		assert.True(t, cold.Profile.ResetKVCache && warm.Profile.ResetKVCache)
		assert.Equal(t, cold.Profile.RandomSeed, warm.Profile.RandomSeed)
		assert.Len(t, cold.Profile.PhaseList(), 1, "nothing runs between the reset and profiling")
		assert.Len(t, warm.Profile.PhaseList(), 2)
	})
	t.Run("trace replay: the example's own trace, cold and warm, on a fixed schedule", func(t *testing.T) {
		s := load(t, "trace_replay.star", nil)
		cold, warm := s.Cells[0], s.Cells[1]
		abs, err := filepath.Abs("data/chat_trace.jsonl")
		require.NoError(t, err)
		assert.Equal(t, abs, cold.Profile.InputFile, "relative to the script")
		assert.FileExists(t, cold.Profile.InputFile)
		assert.Len(t, cold.Profile.PhaseList(), 1)
		phases := warm.Profile.PhaseList()
		require.Len(t, phases, 2)
		assert.False(t, phases[0].Fixed)
		assert.Equal(t, 48, phases[0].Requests, "the warmup sends the whole trace once")
		assert.True(t, phases[1].Fixed)
	})
	t.Run("multi turn: sessions of five turns behind a shared system prompt", func(t *testing.T) {
		s := load(t, "multi_turn.star", nil)
		for _, c := range s.Cells {
			assert.Equal(t, 20, c.Profile.PhaseList()[0].Sessions)
			assert.True(t, c.Profile.Multi())
			assert.Equal(t, plan.Ptr(1000), c.Profile.SharedSystemPromptLength)
		}
	})
	for file, server := range map[string]string{"vllm.star": "vllm", "sglang.star": "sglang"} {
		t.Run(file+" preset", func(t *testing.T) {
			s := load(t, file, nil)
			for _, c := range s.Cells {
				assert.Equal(t, server, c.Profile.Server)
				assert.True(t, c.Profile.ResetHook().Enabled)
				assert.True(t, c.Profile.ProfilerHook().Enabled)
			}
			if server == "vllm" {
				assert.Equal(t, plan.Ptr(60.0), s.Cells[0].Profile.BenchmarkDuration)
			}
			off := load(t, file, map[string]string{"profiler": "off"})
			assert.False(t, off.Cells[0].Profile.ProfilerHook().Enabled)
			assert.True(t, off.Cells[0].Profile.ResetHook().Enabled)
		})
	}
	t.Run("vlm: image size by concurrency, one image per request, server-counted ISL", func(t *testing.T) {
		s := load(t, "vlm.star", nil)
		var got []string
		for _, c := range s.Cells {
			img := c.Profile.Images()
			require.True(t, img.Enabled())
			assert.Equal(t, img.WidthMean, img.HeightMean)
			assert.Equal(t, 1, img.Batch)
			assert.True(t, c.Profile.UseServerTokenCount)
			assert.True(t, c.Profile.ResetKVCache)
			got = append(got, c.Label)
		}
		assert.Equal(t, []string{"image_256_c1", "image_256_c8", "image_512_c1", "image_512_c8", "image_1024_c1", "image_1024_c8"}, got)
	})
	t.Run("demo is the 3x2 matrix with two trials against the mock", func(t *testing.T) {
		s := load(t, "demo.star", nil)
		assert.Len(t, s.TrialList(), 12)
		for _, c := range s.Cells {
			assert.True(t, c.Profile.ResetKVCache)
			assert.True(t, c.Profile.ServerProfiler)
			assert.LessOrEqual(t, *c.Profile.RequestCount, 50)
		}
	})
}

// TestSLASearchExample: sla_search.star declares one search whose planner is
// the script's next_point; against a server whose p99 TTFT meets the 80 ms
// SLA up to concurrency 8 (the mock of its header), it climbs by the
// headroom, bisects and answers 8 in 6 probes. (cmd/aiperf runs it against
// the mock, killed and resumed.)
func TestSLASearchExample(t *testing.T) {
	t.Parallel()
	script, err := starlark.LoadScript(context.Background(), "sla_search.star", starlark.Options{})
	require.NoError(t, err)
	require.Empty(t, script.Sweeps)
	require.Len(t, script.Searches, 1)
	s := script.Searches[0]
	assert.Equal(t, "sla", s.Name)
	assert.Equal(t, "starlark:next_point", s.Config.Planner)
	assert.True(t, s.Base.ResetKVCache, "every probe resets the cache before its load")
	assert.Equal(t, []search.Filter{{Metric: "time_to_first_token", Stat: "p99", Op: "lt", Threshold: 80}}, s.Config.Filters)
	srch, err := s.New()
	require.NoError(t, err)
	var h search.History
	for range 30 {
		step, err := srch.Next(h)
		require.NoError(t, err)
		if step.Stop {
			break
		}
		c := step.Point[0]
		ttft := 20.0 // the mock of the header: 20 ms up to 8 running, a 144 ms wait beyond
		if c > 8 {
			ttft = 164
		}
		h.Probes = append(h.Probes, search.Probe{Point: step.Point, Trials: []search.Trial{{OK: true,
			Values: map[string]float64{"time_to_first_token.p99": ttft, "output_token_throughput.avg": c}}}})
	}
	var probes []float64
	for _, p := range h.Probes {
		probes = append(probes, p.Point[0])
	}
	assert.Equal(t, []float64{1, 4, 16, 10, 7, 8, 9}, probes)
	sum := srch.Summarize(h)
	assert.Equal(t, 8.0, sum.Bracket.Pass.Value)
	assert.Equal(t, 9.0, sum.Bracket.Fail.Value)
}
