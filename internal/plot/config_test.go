package plot

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plot/plottest"
)

// TestConfigDocSnippets reads the plot config snippets of AIPerf's
// docs/tutorials/plot.md ("Enable/Disable Plots", "Customize Plot
// Grouping", "Experiment Classification").
func TestConfigDocSnippets(t *testing.T) {
	c, err := parseConfig("p.yaml", []byte(`
visualization:
  single_run_defaults:
    - ttft_over_time
    - itl_over_time
    - dispersed_throughput_over_time
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"ttft_over_time", "itl_over_time", "dispersed_throughput_over_time"}, c.SingleRun)
	assert.Len(t, c.MultiRun, 3, "not given: all of AIPerf's")

	c, err = parseConfig("p.yaml", []byte(`
visualization:
  multi_run_defaults:
    - ttft_vs_throughput
  multi_run_plots:
    ttft_vs_throughput:
      groups: [run_name]
experiment_classification:
  baselines:
    - "*baseline*"
  default: treatment
`))
	require.NoError(t, err)
	cs := c.comparisons()
	require.Len(t, cs, 1)
	assert.Equal(t, "run_name", cs[0].groups, "the snippet's key")
	assert.Equal(t, "time_to_first_token.avg", cs[0].x.String(), "the rest is AIPerf's preset")
	assert.False(t, cs[0].pareto)
	assert.Equal(t, []string{"plot config: experiment_classification is not applied: a comparison's series are its models"}, c.Notes)
}

func TestConfigPresetsAndErrors(t *testing.T) {
	c, err := parseConfig("p.yaml", []byte(`
visualization:
  multi_run_defaults: [latency_by_concurrency]
  single_run_defaults: [ttft_over_time, server_queue]
  multi_run_plots:
    latency_by_concurrency:
      type: pareto
      x: concurrency
      y: request_latency_p99
      labels: [run_name]
  single_run_plots:
    server_queue:
      type: scatter
`))
	require.NoError(t, err)
	assert.Contains(t, c.Notes[0], "single_run_plots.server_queue is not drawn")
	p := c.comparisons()[0]
	assert.Equal(t, comparison{name: "latency_by_concurrency", title: "request latency p99 vs concurrency", pareto: true,
		x: p.x, y: p.y, groups: "model", labels: "run_name"}, p)
	assert.Equal(t, "request_latency.p99", p.y.String())

	// Drawn over runs: a point per run at its concurrency.
	root := t.TempDir()
	require.NoError(t, plottest.Export(root, plottest.Sweep{Name: "s", Cells: 3, Trials: 1, TTFTMs: 20, Seed: 1}))
	d, err := LoadDirs([]string{root})
	require.NoError(t, err)
	figs, _ := d.FiguresFor(c)
	sc := byName(t, figs, "latency_by_concurrency").Data.(*Scatter)
	require.Len(t, sc.Series, 1)
	var xs []float64
	var labels []string
	for _, pt := range sc.Series[0].Points {
		xs, labels = append(xs, pt.X.Mean), append(labels, pt.Label)
	}
	assert.Equal(t, []float64{1, 2, 3}, xs)
	assert.Equal(t, []string{"concurrency_1", "concurrency_2", "concurrency_3"}, labels)
	assert.NotContains(t, names(figs), "ttft_vs_throughput", "not among the defaults")

	for _, tc := range []struct{ yaml, want string }{
		{"other: 1\n", "no visualization: section"},
		{"visualization:\n  multi_run_defaults: [nope]\n", `p.yaml:2: visualization.multi_run_defaults: "nope" is not a plot`},
		{"visualization:\n  single_run_defaults: [a, nope]\n", `p.yaml:2: visualization.single_run_defaults: "a" is not a plot`},
		{"visualization:\n  multi_run_plots:\n    x:\n      type: bar\n", `p.yaml:4: visualization.multi_run_plots.x.type: "bar": the multi-run plot types are pareto and scatter_line`},
		{"visualization:\n  multi_run_plots:\n    x:\n      type: pareto\n      x: latency\n      y: request_count_avg\n",
			`visualization.multi_run_plots.x.x: "latency": want <metric>_<stat>`},
		{"visualization:\n  multi_run_plots:\n    x:\n      type: pareto\n      x: concurrency\n",
			"visualization.multi_run_plots.x.y: missing"},
		{"visualization:\n  multi_run_plots:\n    ttft_vs_throughput:\n      groups: [model, run_name]\n", "groups: one column only"},
		{"visualization: [\n", "plot config p.yaml: yaml:"},
	} {
		_, err := parseConfig("p.yaml", []byte(tc.yaml))
		assert.ErrorContains(t, err, tc.want, tc.yaml)
	}
	_, err = ReadConfig(filepath.Join(root, "none.yaml"))
	assert.ErrorContains(t, err, "read plot config: open")
}
