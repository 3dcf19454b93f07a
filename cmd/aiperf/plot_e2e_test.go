package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plot"
)

// pairScript is one sweep per server: the same cells against a fast and a
// slow mock, two trials each.
const pairScript = `
def base(url):
    return profile(model = "mock-model", url = url, tokenizer = vars["tok"], streaming = True, request_count = 6,
                   synthetic_input_tokens_mean = 16, output_tokens_mean = 3, num_dataset_entries = 4,
                   reset_kv_cache = True, server_profiler = True)

sweep(name = "fast", base = base(vars["fast"]), trials = 2, matrix = {"concurrency": [1, 2]})
sweep(name = "slow", base = base(vars["slow"]), trials = 2, matrix = {"concurrency": [1, 2]})
`

// TestPlotTwoServers: sweeps against a mock at --ttft 20 and one at --ttft
// 60, overlaid, give a Pareto view with a series per sweep, each point its
// cell's trial means with whiskers, the slower frontier at 60 ms or beyond;
// the PNGs decode at the requested size; --auto-plot draws a sweep as it
// ends.
func TestPlotTwoServers(t *testing.T) {
	subprocesses(t)
	// 10 ms per token: each stream is read token by token even on a busy
	// machine, so interactivity (tokens/s per user) has values.
	fast := startMock(t, mock.Config{TTFT: 20, ITL: 10})
	slow := startMock(t, mock.Config{TTFT: 60, ITL: 10})
	dir := t.TempDir()
	tok := tinyTokenizer(t)
	script := writeFile(t, dir, "pair.star", pairScript)
	vars := []string{"--set", "fast=" + fast.URL, "--set", "slow=" + slow.URL, "--set", "tok=" + tok, "--ui", "none"}
	inv := cli(t, dir, append([]string{"sweep", script, "--only", "fast"}, vars...)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "auto-plot")
	inv = cli(t, dir, append([]string{"sweep", script, "--only", "slow", "--auto-plot"}, vars...)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "auto-plot: wrote 3 figures to "+filepath.Join("artifacts", "slow", "plots"))
	for _, name := range []string{"ttft_vs_throughput", "pareto_curve_throughput_vs_latency", "pareto_curve_throughput_vs_interactivity"} {
		assert.FileExists(t, filepath.Join(dir, "artifacts", "slow", "plots", name+".png"))
	}
	// A sweep refused before it starts (its trial directories hold the
	// earlier sweep's) draws nothing: no figures of the earlier sweep.
	again := cli(t, dir, append([]string{"sweep", script, "--only", "slow", "--auto-plot"}, vars...)...)
	require.Equal(t, ExitUsage, again.code, again.stderr)
	assert.NotContains(t, again.stderr, "auto-plot")

	// PNG rendering is slow under the race detector: a few figures of each
	// kind, in both formats.
	out := cliBinary(t, dir, "plot", "--sweep", "fast", "--sweep", "slow", "-o", "figs", "--width", "800", "--height", "450",
		"--only", "ttft_vs_throughput", "--only", "bars_*_p99", "--only", "cells/concurrency_2/cdf", "--only", "cells/*/timeline_slow")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "wrote 6 figures to figs (png, svg)")
	for _, name := range []string{"ttft_vs_throughput", "bars_time_to_first_token_p99", "bars_request_latency_p99",
		"cells/concurrency_2/cdf", "cells/concurrency_1/timeline_slow", "cells/concurrency_2/timeline_slow"} {
		f, err := os.Open(filepath.Join(dir, "figs", name+".png"))
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(f)
		f.Close()
		require.NoError(t, err, name)
		assert.Equal(t, [2]int{800, 450}, [2]int{cfg.Width, cfg.Height}, name)
		assert.FileExists(t, filepath.Join(dir, "figs", name+".svg"))
	}

	db := openStore(t, dir)
	d, err := plot.Load(context.Background(), db, plot.Selection{Sweeps: []string{"fast", "slow"}}, 0.95)
	require.NoError(t, err)
	figs, _ := d.Figures()
	sc := figureNamed(t, figs, "ttft_vs_throughput").Data.(*plot.Scatter)
	require.Len(t, sc.Series, 2)
	// Each series is its sweep's cells, each point at the means of its
	// trials' stored statistics; the slow mock cannot answer within 60 ms,
	// so its whole frontier lies there or beyond. (Where the fast one's
	// lies moves with the load of the machine: the layout of frontiers is
	// tested on fixed data in internal/plot.)
	for i, name := range []string{"fast", "slow"} {
		s := sc.Series[i]
		require.Len(t, s.Points, 2, name)
		require.NotEmpty(t, s.Frontier, name)
		stored, err := db.SweepRuns(context.Background(), name, []string{"time_to_first_token.p99"})
		require.NoError(t, err)
		require.Len(t, stored.Cells, 2)
		for j, p := range s.Points {
			assert.Equal(t, 2, p.Trials)
			assert.True(t, p.X.HasCI() && p.Y.HasCI(), "%s %s has whiskers", name, p.Label)
			var sum float64
			for _, r := range stored.Cells[j].Runs {
				sum += r.Stats["time_to_first_token.p99"]
			}
			assert.InDelta(t, sum/float64(len(stored.Cells[j].Runs)), p.X.Mean, 1e-9, "%s %s: its trials' TTFT p99", name, p.Label)
		}
	}
	assert.GreaterOrEqual(t, sc.Series[1].Frontier[0].X.Mean, 60.0)

	rep := cli(t, dir, "report", "--sweep", "fast", "--sweep", "slow", "-o", "out/report.html")
	require.Equal(t, ExitOK, rep.code, rep.stderr)
	assert.Contains(t, rep.stdout, "wrote out/report.html")
	html, err := os.ReadFile(filepath.Join(dir, "out", "report.html"))
	require.NoError(t, err)
	for _, c := range []string{"concurrency_1", "concurrency_2"} {
		assert.Contains(t, string(html), `<td>`+c+`</td><td>2 vs 2</td><td>time_to_first_token.avg</td>`,
			"the verdicts compare %s's TTFT", c)
	}
	assert.Contains(t, string(html), `id="fig-ttft_vs_throughput"`)

	bad := cli(t, dir, "plot", "--sweep", "nope")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `"nope"`)
	bad = cli(t, dir, "plot", "--sweep", "fast", "--only", "[")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `--only "[": syntax error in pattern`)
	bad = cli(t, dir, "plot", "--sweep", "fast", "--format", "gif")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `--format "gif": want png or svg`)
}
