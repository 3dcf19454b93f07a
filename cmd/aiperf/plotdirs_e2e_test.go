package main

import (
	"bufio"
	"bytes"
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plot"
)

// pngSize decodes a PNG's header: its width and height, or the test fails.
func pngSize(t *testing.T, path string) [2]int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err, path)
	return [2]int{cfg.Width, cfg.Height}
}

// figureNamed is the figure of figs with that name, or the test fails.
func figureNamed(t *testing.T, figs []plot.Figure, name string) plot.Figure {
	t.Helper()
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	require.Failf(t, "no such figure", "%s", name)
	return plot.Figure{}
}

// assertFigures checks that dir holds each figure as a PNG of the default
// size and an SVG.
func assertFigures(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		assert.Equal(t, [2]int{1024, 640}, pngSize(t, filepath.Join(dir, n+".png")), n)
		assert.FileExists(t, filepath.Join(dir, n+".svg"))
	}
}

// singleRunFigures are AIPerf's single-run figures (plot.md "Single-Run
// Analysis Mode", "GPU Telemetry Integration", "Timeslice Integration")
// and ours.
var singleRunFigures = []string{"ttft_over_time", "itl_over_time", "latency_over_time", "dispersed_throughput_over_time",
	"ttft_timeline", "timeslices_ttft", "timeslices_itl", "timeslices_throughput", "timeslices_latency",
	"gpu_utilization_and_throughput_over_time", "cdf", "timeline"}

// TestPlotDocSingleRun runs the single-run command lines of AIPerf's
// docs/tutorials/plot.md ("Quick Start": `aiperf plot <single_run_name>`,
// `aiperf plot <path> --output <output_directory>`, `aiperf plot <path>
// --theme dark`; "Output directory logic": no paths reads ./artifacts)
// unchanged against a run `aiperf profile` wrote against the mock with GPU
// telemetry and time slices: every figure decodes, in plots/ beside the
// run, and the figures' data is the exports'.
func TestPlotDocSingleRun(t *testing.T) {
	// Slow requests keep the figures small: about 30 in the second.
	m := startMock(t, mock.Config{TTFT: 20, ITL: 5, GPUMetrics: true, GPUs: 2})
	dir := t.TempDir()
	run := filepath.Join("artifacts", "single_run")
	inv := cli(t, dir, quick(m.URL, "--concurrency", "1", "--benchmark-duration", "1", "--slice-duration", "0.5",
		"--gpu-telemetry", m.URL+"/dcgm/metrics", "--server-metrics-formats", "json,csv,jsonl", "--artifact-dir", run)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	// aiperf plot <single_run_name>
	out := cliBinary(t, dir, "plot", run)
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Equal(t, "wrote 12 figures to "+filepath.Join(run, "plots")+" (png, svg)\n", out.stdout)
	assertFigures(t, filepath.Join(dir, run, "plots"), singleRunFigures...)

	// The figures' data is the run's exports.
	d, err := plot.LoadDirs([]string{filepath.Join(dir, run)})
	require.NoError(t, err)
	figs, _ := d.Figures()
	data := func(name string) any { return figureNamed(t, figs, name).Data }
	records := countLines(t, filepath.Join(dir, run, "profile_export.jsonl"))
	assert.Len(t, data("ttft_over_time").(*plot.OverTime).Points, records, "a point per request, all streamed")
	assert.Len(t, data("latency_over_time").(*plot.OverTime).Points, records)
	gpu := data("gpu_utilization_and_throughput_over_time").(*plot.OverTime)
	assert.Len(t, gpu.Lower.Lines[0].Points, countLines(t, filepath.Join(dir, run, "gpu_telemetry_export.jsonl"))/2,
		"a mean per scrape of the 2 GPUs")
	slices := data("timeslices_ttft").(*plot.Bars)
	assert.GreaterOrEqual(t, len(slices.Categories), 2, "1 s in slices of 0.5 s")
	assert.Equal(t, "0 s", slices.Categories[0])

	// aiperf plot <path> --output <output_directory>
	out = cliBinary(t, dir, "plot", run, "--output", "figs")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assertFigures(t, filepath.Join(dir, "figs"), singleRunFigures...)

	// aiperf plot <path> --theme dark: a dark background, light text.
	out = cliBinary(t, dir, "plot", run, "--theme", "dark")
	require.Equal(t, ExitOK, out.code, out.stderr)
	for _, n := range singleRunFigures {
		f, err := os.Open(filepath.Join(dir, run, "plots", n+".png"))
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err)
		r, g, b, _ := img.At(2, 2).RGBA()
		assert.Equal(t, [3]uint32{0x1a, 0x1a, 0x1a}, [3]uint32{r >> 8, g >> 8, b >> 8}, "%s is dark", n)
	}
	svg, err := os.ReadFile(filepath.Join(dir, run, "plots", "ttft_over_time.svg"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(svg), "fill:#E0E0E0\">TTFT per request over time</text>"), "light text in the SVG too")

	// aiperf plot: no paths reads ./artifacts and writes ./artifacts/plots.
	out = cliBinary(t, dir, "plot", "--only", "ttft_over_time", "--format", "png")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Equal(t, [2]int{1024, 640}, pngSize(t, filepath.Join(dir, "artifacts", "plots", "ttft_over_time.png")))
}

// TestPlotDocMultiRun runs the multi-run command lines of AIPerf's
// docs/tutorials/plot.md ("Quick Start": `aiperf plot <run_directory>`,
// `aiperf plot <dir1> <dir2> <dir3>`, `aiperf plot <run1> <run2> <run3>`)
// unchanged against a comma-list sweep and a single run that `aiperf
// profile` wrote against the mock with GPU telemetry: AIPerf's three
// comparisons (its per-GPU Pareto curves from the telemetry's GPU count)
// next to ours, a point per run.
func TestPlotDocMultiRun(t *testing.T) {
	subprocesses(t)
	// 10 ms per token, as in TestPlotTwoServers: interactivity has values.
	m := startMock(t, mock.Config{TTFT: 5, ITL: 10, GPUMetrics: true, GPUs: 2})
	dir := t.TempDir()
	tok := tinyTokenizer(t)
	gpu := []string{"--gpu-telemetry", m.URL + "/dcgm/metrics", "--tokenizer", tok, "--request-count", "8"}
	sweep, base := filepath.Join("artifacts", "sweep_qwen"), filepath.Join("artifacts", "baseline")
	inv := cli(t, dir, quick(m.URL, append(gpu, "--concurrency", "1,2", "--artifact-dir", sweep)...)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	inv = cli(t, dir, quick(m.URL, append(gpu, "--concurrency", "4", "--artifact-dir", base)...)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	aiperfs := []string{"pareto_curve_throughput_per_gpu_vs_latency", "pareto_curve_throughput_per_gpu_vs_interactivity", "ttft_vs_throughput"}
	ours := []string{"ttft_p99_vs_throughput", "pareto_curve_throughput_vs_latency", "pareto_curve_throughput_vs_interactivity",
		"bars_time_to_first_token_p99", "cells/concurrency_1/cdf", "cells/concurrency_2/timeline_sweep_qwen"}

	// aiperf plot <run_directory>
	out := cliBinary(t, dir, "plot", sweep)
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "to "+filepath.Join(sweep, "plots")+" (png, svg)")
	assertFigures(t, filepath.Join(dir, sweep, "plots"), append(aiperfs, ours...)...)

	// aiperf plot <dir1> <dir2> <dir3>: every run of each, a series each for
	// our views.
	out = cliBinary(t, dir, "plot", sweep, base, "--only", "ttft_vs_throughput", "--only", "ttft_p99_vs_throughput")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stdout, "wrote 2 figures")

	// aiperf plot <run1> <run2> <run3>
	runs := []string{filepath.Join(sweep, "concurrency_1"), filepath.Join(sweep, "concurrency_2"), base}
	out = cliBinary(t, dir, append([]string{"plot"}, runs...)...)
	require.Equal(t, ExitOK, out.code, out.stderr)
	assertFigures(t, filepath.Join(dir, runs[0], "plots"), aiperfs...)

	// aiperf plot --config my_plots.yaml (the CLI reference's example):
	// ./artifacts, AIPerf's figures as the config chooses.
	writeFile(t, dir, "my_plots.yaml", "visualization:\n  multi_run_defaults: [ttft_vs_throughput]\n")
	out = cliBinary(t, dir, "plot", "--config", "my_plots.yaml", "--only", "pareto_curve_throughput_per_gpu_*", "--only", "ttft_vs_throughput")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Equal(t, "wrote 1 figures to "+filepath.Join("artifacts", "plots")+" (png, svg)\n", out.stdout)

	// The per-GPU throughput is each run's output token throughput over the
	// 2 GPUs its telemetry saw; a point per run, labelled by concurrency.
	abs := make([]string, len(runs))
	for i, r := range runs {
		abs[i] = filepath.Join(dir, r)
	}
	d, err := plot.LoadDirs(abs)
	require.NoError(t, err)
	figs, notes := d.Figures()
	assert.Empty(t, notes)
	sc := figureNamed(t, figs, "pareto_curve_throughput_per_gpu_vs_latency").Data.(*plot.Scatter)
	require.Len(t, sc.Series, 1)
	assert.Equal(t, "mock-model", sc.Series[0].Name)
	require.Len(t, sc.Series[0].Points, 3)
	for i, p := range sc.Series[0].Points {
		export := readJSON(t, filepath.Join(abs[i], "profile_export_aiperf.json"))
		assert.InDelta(t, metricAvg(t, export, "output_token_throughput")/2, p.Y.Mean, 1e-9)
		assert.InDelta(t, metricAvg(t, export, "request_latency"), p.X.Mean, 1e-9)
	}
	assert.Equal(t, []string{"1", "2", "4"}, []string{sc.Series[0].Points[0].Label, sc.Series[0].Points[1].Label, sc.Series[0].Points[2].Label})
}

// TestPlotDirErrors: a directory without runs, a mix of directories and
// stored runs, and a broken export are refused before anything is drawn,
// naming what is wrong; a torn JSONL line is skipped with a note. AIPerf's
// plot config chooses its figures (--config, else ~/.aiperf/plot_config.yaml,
// set aside when broken; a broken --config is refused at its line).
func TestPlotDirErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	bad := cli(t, dir, "plot", "empty")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "empty holds no run: a run's directory has profile_export.jsonl and profile_export_aiperf.json")
	bad = cli(t, dir, "plot", "empty", "--sweep", "x")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "give artifact directories or stored runs (run ids, names, --sweep), not both: empty is a directory")
	bad = cli(t, dir, "plot", "empty", "--theme", "blue")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--theme")
	bad = cli(t, t.TempDir(), "plot")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "artifacts: no such directory")
	bad = cli(t, t.TempDir(), "plot", "nothere/run1")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "nothere/run1 is no directory here, so it was read as a stored run: no run store at")

	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--artifact-dir", "run", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	f, err := os.OpenFile(filepath.Join(dir, "run", "profile_export.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"metadata":{"request_start_ns":1`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	out := cliBinary(t, dir, "plot", "run", "--only", "cdf", "--format", "svg")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stderr, "note: profile_export.jsonl: skipped 1 line(s) that are not records (line 5:")

	// AIPerf's plot config: --config FILE, else its ~/.aiperf/plot_config.yaml.
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, ".aiperf"), "plot_config.yaml", "visualization:\n  single_run_defaults: [ttft_over_time]\n")
	out = cliBinary(t, dir, "plot", "run", "--format", "svg", "--verbose")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stderr, "note: using AIPerf's plot config "+filepath.Join(home, ".aiperf", "plot_config.yaml"))
	assert.Contains(t, out.stdout, "wrote 3 figures")
	assert.Contains(t, out.stderr, "drew ttft_over_time\ndrew cdf\ndrew timeline\n", "AIPerf's chosen figure, then ours")
	writeFile(t, filepath.Join(home, ".aiperf"), "plot_config.yaml", "visualization:\n  single_run_defaults: [nope]\n")
	out = cliBinary(t, dir, "plot", "run", "--only", "cdf", "--format", "svg")
	require.Equal(t, ExitOK, out.code, out.stderr)
	assert.Contains(t, out.stderr, "plot_config.yaml set aside (drawing every figure): plot config")
	writeFile(t, dir, "my_plots.yaml", "visualization:\n  multi_run_plots:\n    x:\n      type: bar\n")
	bad = cli(t, dir, "plot", "run", "--config", "my_plots.yaml")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, `plot config my_plots.yaml:4: visualization.multi_run_plots.x.type: "bar"`)
	bad = cli(t, dir, "plot", "--sweep", "s", "--config", "my_plots.yaml")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--config chooses AIPerf's figures of artifact directories")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "run", "profile_export_aiperf.json"), []byte("{"), 0o644))
	bad = cli(t, dir, "plot", "run")
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, filepath.Join("run", "profile_export_aiperf.json")+": unexpected end of JSON input")
}

// TestPlotDocDashboard runs plot.md's "Interactive Dashboard Mode" lines
// (`aiperf plot path/to/runs --dashboard`, `aiperf plot --dashboard --port
// 9000` on a free port, `--theme dark`): the page lists the run's figures,
// serves each as SVG, and Ctrl-C (the context) stops it with exit 0.
func TestPlotDocDashboard(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "6", "--artifact-dir", filepath.Join("path", "to", "runs"), "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stdout bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--store", filepath.Join(dir, "aiperf.db"), "plot", filepath.Join("path", "to", "runs"),
			"--dashboard", "--port", port, "--theme", "dark"}, &stdout, pw)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan(), "the dashboard says where it listens")
	url, ok := strings.CutPrefix(lines.Text(), "dashboard: ")
	require.True(t, ok, lines.Text())
	url = strings.TrimSuffix(url, " (Ctrl-C stops it)")
	assert.Equal(t, "http://127.0.0.1:"+port+"/", url)
	res, err := http.Get(url)
	require.NoError(t, err)
	page, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(page), `<img src="figure/ttft_over_time.svg?theme=dark"`)
	res, err = http.Get(url + "figure/ttft_over_time.svg?theme=dark")
	require.NoError(t, err)
	svg, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.True(t, strings.Contains(string(svg), "fill:#1A1A1A"), "dark")
	cancel()
	go io.Copy(io.Discard, pr) //nolint:errcheck // drain until run returns
	assert.Equal(t, ExitOK, <-code)
	assert.NoDirExists(t, filepath.Join(dir, "path", "to", "runs", "plots"), "the dashboard writes no file")
}
