package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

// scrapedRun is storedRun with what a vLLM server's /metrics said over
// its profiling phase: a TTFT p50 of serverTTFTMs and the given prefix-cache
// hits out of 1,000 queried tokens.
func scrapedRun(name string, ttftMs, serverTTFTMs, hits float64) *result.Run {
	r := storedRun(name, ttftMs)
	const url = "http://127.0.0.1:8000/metrics"
	series := func(metric, typ string, stats map[string]float64) servermetrics.Series {
		return servermetrics.Series{Source: "server", Endpoint: url, Metric: metric, Labels: map[string]string{"model_name": "mock-model"},
			Type: typ, Phase: "profiling", Stats: stats}
	}
	r.Server = &servermetrics.Result{
		Endpoints: []servermetrics.Endpoint{{URL: url, Source: "server", Scrapes: 5, Interval: 333 * time.Millisecond},
			{URL: "http://127.0.0.1:9400/metrics", Source: "gpu", Scrapes: 5, Failures: 5, Interval: 333 * time.Millisecond, LastError: "404 Not Found"}},
		Warnings: []string{"http://127.0.0.1:9400/metrics: 404 Not Found; no GPU telemetry"},
		Series: []servermetrics.Series{
			// a gauge's avg is AIPerf's mean of the samples; the console and compare read its average over time
			series("vllm:num_requests_running", "gauge", map[string]float64{"avg": 1, servermetrics.StatTimeWeightedAvg: 1.5, "max": 2}),
			series("vllm:kv_cache_usage_perc", "gauge", map[string]float64{"avg": 0.05, servermetrics.StatTimeWeightedAvg: 0.1, "max": 0.125}),
			series("vllm:prefix_cache_hits", "counter", map[string]float64{"total": hits, "rate": hits}),
			series("vllm:prefix_cache_queries", "counter", map[string]float64{"total": 1000, "rate": 1000}),
			series("vllm:time_to_first_token_seconds", "histogram", map[string]float64{"count": 8, "sum": 8 * serverTTFTMs / 1000,
				"avg": serverTTFTMs / 1000, "p50_estimate": serverTTFTMs / 1000, "p99_estimate": serverTTFTMs / 500}),
		},
	}
	return r
}

// serverStore holds two runs named cold (ids 1, 2) and two named warm
// (3, 4), with server metrics, and a run without them (5). The cold runs'
// counters are stored with their _total, as versions before AIPerf's
// counter names stored them.
func serverStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	for _, r := range []*result.Run{
		scrapedRun("cold", 20, 17, 0), scrapedRun("cold", 20.3, 17.2, 2),
		scrapedRun("warm", 12, 9.5, 900), scrapedRun("warm", 12.2, 9.6, 910),
		storedRun("plain", 20),
	} {
		_, err := db.SaveRun(context.Background(), r, "")
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	raw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Exec(`UPDATE server_series SET metric = metric || '_total' WHERE type = 'counter' AND run_id IN (1, 2)`)
	require.NoError(t, err)
	return path
}

func TestRunsShowServerMetrics(t *testing.T) {
	t.Parallel()
	path := serverStore(t)
	code, out, errOut := aiperf(t, "--store", path, "runs", "show", "3")
	require.Equal(t, ExitOK, code, errOut)
	for _, want := range []string{
		"Server metrics:", "http://127.0.0.1:8000/metrics", "404 Not Found", "333ms",
		"server.running.avg", "vllm:num_requests_running", "server.kv_cache_usage.max", "12.50",
		"server.prefix_cache_hit_rate.avg", "90.00", "vllm:prefix_cache_hits / vllm:prefix_cache_queries", "server.ttft.p50", "9.50", "vllm:time_to_first_token_seconds",
		"5 series of 5 families stored", "warning: http://127.0.0.1:9400/metrics: 404 Not Found; no GPU telemetry",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "gpu.utilization", "only what the run has")

	code, out, errOut = aiperf(t, "--store", path, "runs", "show", "3", "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var run result.Run
	require.NoError(t, json.Unmarshal([]byte(out), &run))
	require.NotNil(t, run.Server)
	assert.Len(t, run.Server.Series, 5)

	code, out, errOut = aiperf(t, "--store", path, "runs", "show", "1")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "vllm:prefix_cache_hits / vllm:prefix_cache_queries", "a run stored with _total names shows AIPerf's")
	assert.NotContains(t, out, "_total")

	code, out, errOut = aiperf(t, "--store", path, "runs", "show", "5")
	require.Equal(t, ExitOK, code, errOut)
	assert.NotContains(t, out, "Server metrics", "a run without server metrics shows none")
}

// TestCompareSweepPrefixCache: a sweep with a cold and a warm cell shows
// the prefix-cache hit rate ~0 against high.
func TestCompareSweepPrefixCache(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "cache", Trials: 2})
	require.NoError(t, err)
	for i, cell := range []struct {
		label string
		hits  float64
	}{{"cold", 0}, {"warm", 880}} {
		params := []plan.Param{{Name: "warmup_request_count", Value: []any{nil, float64(8)}[i]}}
		c := plan.Cell{ID: plan.CellID("cache", params), Label: cell.label, Index: i, Params: params}
		for trial := 1; trial <= 2; trial++ {
			r := scrapedRun("", 20, 17, cell.hits+float64(trial))
			r.Info = result.TrialInfo{SweepID: id, CellID: c.ID, CellLabel: c.Label, Params: c.Params, Trial: trial}
			_, err := db.SaveRun(ctx, r, "")
			require.NoError(t, err)
		}
	}
	require.NoError(t, db.FinishSweep(ctx, id, result.StatusComplete))
	require.NoError(t, db.Close())

	code, out, errOut := aiperf(t, "--store", path, "compare", "--sweep", "cache")
	require.Equal(t, ExitOK, code, errOut)
	assert.Contains(t, out, "prefix cache hit %")
	assert.Regexp(t, `│ cold .* 0\.15 ± 0\.64 │`, out)
	assert.Regexp(t, `│ warm .* 88\.15 ± 0\.64 │`, out)
}

func TestCompareServerMetrics(t *testing.T) {
	t.Parallel()
	path := serverStore(t)
	t.Run("default view: server rows and the client-minus-server line", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "compare", "cold", "warm")
		require.Equal(t, ExitOK, code, errOut)
		assert.Contains(t, out, "server.prefix_cache_hit_rate.avg")
		assert.Contains(t, out, "server.ttft.p50")
		assert.Regexp(t, `client TTFT − server TTFT p50: 3\.0\d ± \d+\.\d\d ms \(cold\), 2\.5\d ± \d+\.\d\d ms \(warm\)`, out)
	})
	t.Run("a server metric by its family, with a verdict", func(t *testing.T) {
		code, out, errOut := aiperf(t, "--store", path, "compare", "cold", "warm", "--metric",
			"server.vllm:prefix_cache_hits_total.delta,server.ttft.p50", "--format", "json")
		require.Equal(t, ExitOK, code, errOut)
		var rep struct {
			Metrics []struct {
				Metric string
				Versus []struct{ Verdict string }
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		require.Len(t, rep.Metrics, 2)
		assert.Equal(t, "server.vllm:prefix_cache_hits.delta", rep.Metrics[0].Metric,
			"a counter asked for with its _total is AIPerf's name; the old (cold) and new (warm) runs compare")
		assert.Equal(t, "higher", rep.Metrics[0].Versus[0].Verdict)
		assert.Equal(t, "better", rep.Metrics[1].Versus[0].Verdict)
	})
	t.Run("unknown server metrics are refused", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want []string
		}{
			{[]string{"cold", "warm", "--metric", "server.vllm:kv_cache_usage_prc.max"}, []string{
				`--metric server.vllm:kv_cache_usage_prc.max: unknown server metric "vllm:kv_cache_usage_prc" (did you mean "vllm:kv_cache_usage_perc"?)`,
				"the compared runs have server metrics vllm:kv_cache_usage_perc, ", "the aliases are server.running (avg, "}},
			{[]string{"cold", "plain", "--metric", "server.vllm:kv_cache_usage_perc.delta"}, []string{
				"vllm:kv_cache_usage_perc is a gauge: its statistics are avg, max"}},
			{[]string{"cold", "warm", "--metric", "server.ttft.max"}, []string{`unknown statistic "max" of server.ttft (want one of avg, p50, p90, p95, p99)`}},
		} {
			code, out, errOut := aiperf(t, append([]string{"--store", path, "compare"}, tc.args...)...)
			assert.Equal(t, ExitUsage, code, errOut)
			assert.Empty(t, out, tc.args)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errOut), "\n")+1, "one line: %s", errOut)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w, tc.args)
			}
		}
	})
}
