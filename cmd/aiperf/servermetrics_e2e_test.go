package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// vllmTTFTBuckets are vLLM's time_to_first_token_seconds bucket edges.
var vllmTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}

// bucketOf is the index of the bucket holding seconds.
func bucketOf(seconds float64) int {
	for i, le := range vllmTTFTBuckets {
		if seconds <= le {
			return i
		}
	}
	return len(vllmTTFTBuckets)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return f
}

// serverExport is what these tests read of server_metrics_export.json.
type serverExport struct {
	Metrics map[string]struct {
		Type   string `json:"type"`
		Series []struct {
			Stats map[string]float64 `json:"stats"`
		} `json:"series"`
	} `json:"metrics"`
}

// TestServerMetricsBesideTheClient: the server's own account of a run at
// concurrency 1, scraped from the mock: its TTFT histogram's median is in
// the client's bucket or below (the server starts each request later and
// writes before the client reads) and no earlier than its own 25 ms, its
// prompt-token counter over the
// profiling phase equals the prompt tokens it reported for the profiling
// requests (warmup excluded), GPU telemetry is collected, and compare says
// what the network and the client add to TTFT.
func TestServerMetricsBesideTheClient(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 25, ITL: 2, GPUMetrics: true, GPUs: 2})
	dir := t.TempDir()
	run := func(name string) {
		inv := cli(t, dir, quick(m.URL, "--concurrency", "1", "--request-count", "20", "--warmup-request-count", "5",
			"--gpu-telemetry", m.URL+"/dcgm/metrics", "--name", name, "--artifact-dir", name)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stdout, "Server (scraped during the profiling phases)")
		assert.Contains(t, inv.stdout, "Server TTFT")
		assert.Contains(t, inv.stdout, "GPU (scraped during the profiling phases)")
		assert.Contains(t, inv.stdout, "gpu 1", "both GPUs")
	}
	run("a")
	run("b")

	b, err := os.ReadFile(filepath.Join(dir, "a", "server_metrics_export.json"))
	require.NoError(t, err)
	var exp serverExport
	require.NoError(t, json.Unmarshal(b, &exp))
	prompt := exp.Metrics["vllm:prompt_tokens"]
	require.Len(t, prompt.Series, 1)
	for name, m := range exp.Metrics {
		if m.Type == "counter" {
			assert.False(t, strings.HasSuffix(name, "_total"), "%s: a counter is keyed by AIPerf's name, without _total", name)
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, "a", "server_metrics_export.csv"))
	require.NoError(t, err)
	assert.Contains(t, string(csv), ",counter,vllm:prompt_tokens,tokens,")
	assert.NotContains(t, string(csv), "_total,", "the CSV names counters as AIPerf's does")
	client := readJSON(t, filepath.Join(dir, "a", "profile_export_aiperf.json"))
	usage := client["usage_prompt_tokens"].(map[string]any)
	assert.Equal(t, usage["sum"], prompt.Series[0].Stats["total"],
		"the server's prompt tokens over the profiling phase are the profiling requests' usage, warmup excluded")

	ttft := exp.Metrics["vllm:time_to_first_token_seconds"]
	require.Len(t, ttft.Series, 1)
	serverP50 := ttft.Series[0].Stats["p50_estimate"]
	clientP50 := client["time_to_first_token"].(map[string]any)["p50"].(float64) / 1000
	assert.LessOrEqual(t, bucketOf(serverP50), bucketOf(clientP50),
		"server TTFT p50 %.4f s in the client's bucket or below (%.4f s)", serverP50, clientP50)
	assert.GreaterOrEqual(t, bucketOf(serverP50), bucketOf(0.025), "never before the mock's 25 ms")
	assert.Contains(t, client, "telemetry_data", "GPU telemetry in the profile export, as AIPerf")
	assertGPUTimeSeries(t, filepath.Join(dir, "a"), m.URL+"/dcgm/metrics", client["telemetry_data"].(map[string]any))
	assert.NoFileExists(t, filepath.Join(dir, "a", "server_metrics_export.jsonl"), "the server's time series only with jsonl")

	cmp := cli(t, dir, "compare", "a", "b")
	require.Equal(t, ExitOK, cmp.code, cmp.stderr)
	assert.Contains(t, cmp.stdout, "client TTFT − server TTFT p50")
	bucket := regexp.MustCompile(`the server's p50 is interpolated inside its histogram bucket, ([\d.]+)–([\d.]+) ms \(a\)`).
		FindStringSubmatch(cmp.stdout)
	require.NotNil(t, bucket, "the gap's resolution is given: %s", cmp.stdout)
	low, high := bucketOf(mustFloat(t, bucket[1])/1000), bucketOf(mustFloat(t, bucket[2])/1000)
	assert.Equal(t, []int{bucketOf(serverP50) - 1, bucketOf(serverP50)}, []int{low, high}, "the bucket of a's server p50")
	assert.Contains(t, cmp.stdout, "server.ttft.p50")

	// a counter asked for by its exposition name is shown by AIPerf's
	byRaw := cli(t, dir, "--wide", "compare", "a", "b", "--metric", "server.vllm:prompt_tokens_total.delta")
	require.Equal(t, ExitOK, byRaw.code, byRaw.stderr)
	assert.Contains(t, byRaw.stdout, "server.vllm:prompt_tokens.delta")
	assert.NotContains(t, byRaw.stdout, "_total")
}

// TestScrapeFailuresDoNotStopTheRun: an endpoint that answers garbage or
// nothing gives one warning, and the run goes on.
func TestScrapeFailuresDoNotStopTheRun(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--server-metrics", m.URL+"/v1/models",
		"--server-metrics", "http://127.0.0.1:9/metrics", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "Server TTFT", "the good endpoint is reported")
	assert.Contains(t, inv.stderr+inv.stdout, "127.0.0.1:9/metrics")
	assert.Contains(t, inv.stderr+inv.stdout, "/v1/models")

	off := cli(t, dir, quick(m.URL, "--request-count", "4", "--no-server-metrics", "--no-store")...)
	require.Equal(t, ExitOK, off.code, off.stderr)
	assert.NotContains(t, off.stdout, "Server (scraped")
}

// TestSlicedServerMetrics: --slice-duration adds AIPerf's time slices to the
// server-metrics JSON export, and jsonl writes the scraped time series.
func TestSlicedServerMetrics(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--benchmark-duration", "2", "--slice-duration", "0.5",
		"--server-metrics-formats", "json,jsonl", "--no-store", "--artifact-dir", "a")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var exp struct {
		Metrics map[string]struct {
			Series []struct {
				Timeslices []map[string]any `json:"timeslices"`
			} `json:"series"`
		} `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "a", "server_metrics_export.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &exp))
	gen := exp.Metrics["vllm:generation_tokens"]
	require.Len(t, gen.Series, 1)
	ts := gen.Series[0].Timeslices
	require.GreaterOrEqual(t, len(ts), 3, "a 2 s phase in 0.5 s slices")
	total := 0.0
	for _, s := range ts {
		assert.Contains(t, s, "start_ns")
		total += s["total"].(float64)
	}
	assert.Positive(t, total, "the slices count the generated tokens")
	assert.FileExists(t, filepath.Join(dir, "a", "server_metrics_export.jsonl"))
	assert.NoFileExists(t, filepath.Join(dir, "a", "server_metrics_export.csv"), "csv was not asked for")

	bad := cli(t, dir, quick(m.URL, "--slice-duration", "0.1", "--no-store")...)
	assert.Equal(t, ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--slice-duration must be at least the scrape interval")
}

// TestColdAndWarmCellsShowTheirHitRates: examples/prefix_cache.star's cold
// cell finds nothing in the server's prefix cache, its warm cell almost
// everything, and compare --sweep shows it from the server's counters.
func TestColdAndWarmCellsShowTheirHitRates(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "prefix_cache.star"))
	require.NoError(t, err)
	dir := t.TempDir()
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "prompts=12", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	sw := cli(t, dir, "compare", "--sweep", "prefix-cache", "--format", "json")
	require.Equal(t, ExitOK, sw.code, sw.stderr)
	var rep struct {
		Metrics []struct {
			Metric string `json:"metric"`
		} `json:"metrics"`
		Cells []struct {
			Label  string `json:"label"`
			Values []struct {
				Mean *float64 `json:"mean"`
			} `json:"values"`
		} `json:"cells"`
	}
	require.NoError(t, json.Unmarshal([]byte(sw.stdout), &rep), sw.stdout)
	col := slices.IndexFunc(rep.Metrics, func(m struct {
		Metric string `json:"metric"`
	}) bool {
		return m.Metric == "server.prefix_cache_hit_rate.avg"
	})
	require.GreaterOrEqual(t, col, 0, "the sweep view has the server's hit rate: %s", sw.stdout)
	rates := map[string]float64{}
	for _, c := range rep.Cells {
		if v := c.Values[col].Mean; v != nil {
			rates[c.Label] = *v
		}
	}
	require.Contains(t, rates, "cold", sw.stdout)
	require.Contains(t, rates, "warm")
	assert.Less(t, rates["cold"], 5.0, "cold: the reset left nothing to hit")
	assert.Greater(t, rates["warm"], 80.0, "warm: the warmup cached every prompt")
	table := cli(t, dir, "compare", "--sweep", "prefix-cache")
	assert.Contains(t, table.stdout, "prefix cache hit %")
}

// TestServerMetricsMaxSeries: --server-metrics-max-series keeps the first
// series of each scrape of the server's /metrics and says, in one line as
// it happens and one at the end, that the others were dropped; a bound of
// 0 is refused before anything is sent.
func TestServerMetricsMaxSeries(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "4", "--server-metrics-max-series", "3", "--ui", "simple", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 1, strings.Count(inv.stderr, "more than 3 series (--server-metrics-max-series): the first are kept, the others dropped"), inv.stderr)
	assert.Contains(t, inv.stdout+inv.stderr, "series, more than the 3 kept (--server-metrics-max-series): the others were dropped")

	b, err := os.ReadFile(filepath.Join(dir, "out", "server_metrics_export.json"))
	require.NoError(t, err)
	var exp serverExport
	require.NoError(t, json.Unmarshal(b, &exp))
	series := 0
	for _, m := range exp.Metrics {
		series += len(m.Series)
	}
	assert.Equal(t, 3, series, "%v", exp.Metrics)

	inv = cli(t, dir, quick(m.URL, "--request-count", "4", "--server-metrics-max-series", "0")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--server-metrics-max-series must be at least 1, got 0")
}

// assertGPUTimeSeries: gpu_telemetry_export.jsonl is written whenever GPU
// telemetry is on (as AIPerf, whatever --server-metrics-formats says): a
// line per GPU per scrape of dcgmURL, naming the GPUs the summary does,
// each GPU's power draw over the run spanning the summary's over the
// profiling phase (a subset of the same scrapes).
func assertGPUTimeSeries(t *testing.T, dir, dcgmURL string, telemetry map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "gpu_telemetry_export.jsonl"))
	require.NoError(t, err)
	type span struct{ min, max float64 }
	power := map[string]*span{}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range lines {
		var l struct {
			GPUUUID       string             `json:"gpu_uuid"`
			DCGMURL       string             `json:"dcgm_url"`
			TimestampNs   int64              `json:"timestamp_ns"`
			TelemetryData map[string]float64 `json:"telemetry_data"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &l))
		assert.Equal(t, dcgmURL, l.DCGMURL)
		assert.Positive(t, l.TimestampNs)
		w, ok := l.TelemetryData["nvidia_power_usage"]
		require.True(t, ok, "power in every line: %s", line)
		if p := power[l.GPUUUID]; p == nil {
			power[l.GPUUUID] = &span{w, w}
		} else {
			p.min, p.max = min(p.min, w), max(p.max, w)
		}
	}
	require.Len(t, power, 2, "both GPUs")
	assert.Len(t, lines, 2*(len(lines)/2), "a line per GPU per scrape")
	var summarized int
	for _, ep := range telemetry["endpoints"].(map[string]any) {
		for _, g := range ep.(map[string]any)["gpus"].(map[string]any) {
			gpu := g.(map[string]any)
			p := power[gpu["gpu_uuid"].(string)]
			require.NotNil(t, p, "the summary's GPU %v is in the time series", gpu["gpu_uuid"])
			st := gpu["metrics"].(map[string]any)["nvidia_power_usage"].(map[string]any)
			assert.GreaterOrEqual(t, st["min"].(float64), p.min)
			assert.LessOrEqual(t, st["max"].(float64), p.max)
			summarized++
		}
	}
	assert.Equal(t, 2, summarized)
}
