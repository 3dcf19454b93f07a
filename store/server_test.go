package store_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

const vllmURL = "http://127.0.0.1:8000/metrics"

// serverResult is what a collector reports for a vLLM server and a DCGM
// exporter: a few known families in the warmup and profiling phases, and
// extra series of an unknown family up to n series in all.
func serverResult(n int) *servermetrics.Result {
	sm := &servermetrics.Result{
		Endpoints: []servermetrics.Endpoint{
			{URL: vllmURL, Source: servermetrics.SourceServer, Scrapes: 92, Interval: 333 * time.Millisecond},
			{URL: "http://127.0.0.1:9400/metrics", Source: servermetrics.SourceGPU, Scrapes: 90, Failures: 2,
				Interval: 333 * time.Millisecond, LastError: "context deadline exceeded"},
		},
		Warnings: []string{"http://127.0.0.1:9400/metrics: 2 scrapes timed out"},
		Span:     plan.KindProfiling, StartNs: 1_000_000, EndNs: 31_000_000_000,
	}
	gauge := func(avg float64) map[string]float64 {
		return map[string]float64{"avg": avg, "min": avg / 2, "max": avg * 2, "std": avg / 10, "p50": avg, "p90": avg * 1.5, "p99": avg * 1.9}
	}
	add := func(source, endpoint, metric, typ, phase string, labels map[string]string, stats map[string]float64) {
		sm.Series = append(sm.Series, servermetrics.Series{Source: source, Endpoint: endpoint, Metric: metric, Labels: labels,
			Type: typ, Phase: phase, Stats: stats})
	}
	model := map[string]string{"model_name": "mock-model", "engine": "0"}
	for _, phase := range []string{plan.KindWarmup, plan.KindProfiling} {
		add("server", vllmURL, "vllm:num_requests_running", servermetrics.TypeGauge, phase, model, gauge(3.5))
		add("server", vllmURL, "vllm:kv_cache_usage_perc", servermetrics.TypeGauge, phase, model, gauge(0.25))
		add("server", vllmURL, "vllm:prompt_tokens", servermetrics.TypeCounter, phase, model, map[string]float64{"total": 5500, "rate": 183.3})
		add("server", vllmURL, "vllm:time_to_first_token_seconds", servermetrics.TypeHistogram, phase, model,
			map[string]float64{"count": 10, "sum": 0.21, "avg": 0.021, "p50_estimate": 0.02, "p90_estimate": 0.03, "p95_estimate": 0.035, "p99_estimate": 0.04})
		add("gpu", "http://127.0.0.1:9400/metrics", "DCGM_FI_DEV_GPU_UTIL", servermetrics.TypeGauge, phase,
			map[string]string{"gpu": "0", "UUID": "GPU-1"}, gauge(71))
	}
	for i := len(sm.Series); i < n; i++ {
		add("server", vllmURL, "unknown_family", servermetrics.TypeGauge, plan.KindProfiling,
			map[string]string{"shard": fmt.Sprint(i)}, gauge(float64(i)))
	}
	for i := range sm.Series {
		if sm.Series[i].Metric == "vllm:time_to_first_token_seconds" {
			sm.Series[i].Unit, sm.Series[i].Friendly = "s", "Time to first token"
		}
	}
	return sm
}

func TestServerMetricsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "scraped", records: 3})
	in.Server = serverResult(12)
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)

	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, in.Server, got.Server, "endpoints, warnings and every series of every phase come back")

	t.Run("a run stored before the span was kept has it inferred from its series", func(t *testing.T) {
		older := newRun(runOpts{name: "older", records: 3})
		older.Server = serverResult(12)
		id, err := db.SaveRun(ctx, older, "")
		require.NoError(t, err)
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE runs SET server_span = NULL, server_start_ns = NULL, server_end_ns = NULL WHERE id = ?`, id))
		got, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		assert.Equal(t, plan.KindProfiling, got.Server.Span, "the one profiling phase")
		assert.Zero(t, got.Server.StartNs)
	})
	t.Run("a run without server metrics comes back without them", func(t *testing.T) {
		plain := newRun(runOpts{name: "plain", records: 3})
		id, err := db.SaveRun(ctx, plain, "")
		require.NoError(t, err)
		got, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		assert.Nil(t, got.Server)
		assert.Zero(t, count(t, db, `SELECT count(*) FROM server_series WHERE run_id = ?`, id))
	})
	t.Run("collection that found nothing is not collection off", func(t *testing.T) {
		r := newRun(runOpts{name: "empty", records: 3})
		r.Server = &servermetrics.Result{}
		id, err := db.SaveRun(ctx, r, "")
		require.NoError(t, err)
		got, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		assert.Equal(t, &servermetrics.Result{}, got.Server)
	})
	t.Run("values that are not finite are left out", func(t *testing.T) {
		r := newRun(runOpts{name: "nan", records: 3})
		r.Server = &servermetrics.Result{Series: []servermetrics.Series{{Source: "server", Endpoint: vllmURL,
			Metric: "vllm:e2e_request_latency_seconds", Type: servermetrics.TypeHistogram, Phase: plan.KindProfiling,
			Stats: map[string]float64{"count": 0, "avg": math.NaN(), "p99": math.Inf(1)}}}}
		id, err := db.SaveRun(ctx, r, "")
		require.NoError(t, err)
		got, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		require.Len(t, got.Server.Series, 1)
		assert.Equal(t, map[string]float64{"count": 0}, got.Server.Series[0].Stats)
	})
	t.Run("compare loads the profiling series of the families asked for", func(t *testing.T) {
		g, err := db.RunsByRef(ctx, "scraped", []string{"time_to_first_token.avg",
			"server.vllm:kv_cache_usage_perc.max", "gpu.DCGM_FI_DEV_GPU_UTIL.avg", "server.DCGM_FI_DEV_GPU_UTIL.avg"})
		require.NoError(t, err)
		require.Len(t, g.Runs, 1)
		r := g.Runs[0]
		v, ok := r.Stat("time_to_first_token", "avg")
		assert.True(t, ok)
		assert.Equal(t, 20.0, v)
		require.Len(t, r.Server, 2, "one profiling series per family, by family; the GPU family once, under its own source")
		assert.Equal(t, "gpu", r.Server[0].Source)
		assert.Equal(t, "DCGM_FI_DEV_GPU_UTIL", r.Server[0].Metric)
		kv := r.Server[1]
		assert.Equal(t, "vllm:kv_cache_usage_perc", kv.Metric)
		assert.Equal(t, plan.KindProfiling, kv.Phase)
		assert.Equal(t, map[string]string{"model_name": "mock-model", "engine": "0"}, kv.Labels)
		assert.Equal(t, 0.5, kv.Stats["max"])
		assert.Len(t, kv.Stats, 7, "every statistic of the series")
	})
	t.Run("the metrics of runs are listed for messages", func(t *testing.T) {
		ms, err := db.ServerMetrics(ctx, []int64{id})
		require.NoError(t, err)
		assert.Equal(t, []store.ServerMetric{
			{Source: "gpu", Metric: "DCGM_FI_DEV_GPU_UTIL", Type: "gauge"},
			{Source: "server", Metric: "unknown_family", Type: "gauge"},
			{Source: "server", Metric: "vllm:kv_cache_usage_perc", Type: "gauge"},
			{Source: "server", Metric: "vllm:num_requests_running", Type: "gauge"},
			{Source: "server", Metric: "vllm:prompt_tokens", Type: "counter"},
			{Source: "server", Metric: "vllm:time_to_first_token_seconds", Type: "histogram"},
		}, ms)
	})
	t.Run("deleting the run deletes its server metrics", func(t *testing.T) {
		require.NoError(t, db.DeleteRuns(ctx, id))
		for _, table := range []string{"server_endpoints", "server_series", "server_stats"} {
			assert.Zero(t, count(t, db, "SELECT count(*) FROM "+table+" WHERE run_id = ?", id), table)
		}
	})
}

// TestServerMetricsOneCounterName: a counter has AIPerf's name (without
// _total) in the store; a result that still spells it with _total is saved
// under that name, and the rows of versions that stored the _total read
// back under it, so an old run and a new one compare, asked for by either
// spelling.
func TestServerMetricsOneCounterName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	counter := func(name, metric string, total float64) *result.Run {
		r := newRun(runOpts{name: name, records: 3})
		r.Server = &servermetrics.Result{Series: []servermetrics.Series{{Source: "server", Endpoint: vllmURL, Metric: metric,
			Type: servermetrics.TypeCounter, Phase: plan.KindProfiling, Stats: map[string]float64{"total": total, "rate": total / 10}}}}
		return r
	}
	oldID, err := db.SaveRun(ctx, counter("pair", "vllm:prompt_tokens_total", 100), "")
	require.NoError(t, err)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM server_series WHERE run_id = ? AND metric = 'vllm:prompt_tokens'`, oldID),
		"saved under AIPerf's name")
	// the row as a version that kept the _total stored it
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE server_series SET metric = 'vllm:prompt_tokens_total' WHERE run_id = ?`, oldID))
	newID, err := db.SaveRun(ctx, counter("pair", "vllm:prompt_tokens", 200), "")
	require.NoError(t, err)

	got, err := db.GetRun(ctx, oldID, false)
	require.NoError(t, err)
	assert.Equal(t, "vllm:prompt_tokens", got.Server.Series[0].Metric, "an old run reads back under the one name")
	for _, key := range []string{"server.vllm:prompt_tokens.delta", "server.vllm:prompt_tokens_total.delta"} {
		g, err := db.RunsByRef(ctx, "pair", []string{key})
		require.NoError(t, err)
		require.Len(t, g.Runs, 2, key)
		for _, r := range g.Runs {
			require.Len(t, r.Server, 1, "%s: run %d", key, r.ID)
			assert.Equal(t, "vllm:prompt_tokens", r.Server[0].Metric, key)
		}
	}
	ms, err := db.ServerMetrics(ctx, []int64{oldID, newID})
	require.NoError(t, err)
	assert.Equal(t, []store.ServerMetric{{Source: "server", Metric: "vllm:prompt_tokens", Type: "counter"}}, ms,
		"one family for both spellings")
}

// TestServerMetricsPhaseKind: a sweep's phases have names of their own;
// compare still finds the profiling phase's series.
func TestServerMetricsPhaseKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	r := newRun(runOpts{name: "named-phases", records: 3})
	r.Config.Phases = []plan.Phase{{Name: "prime", Kind: plan.KindWarmup, Concurrency: 1, Requests: 2},
		{Name: "steady", Kind: plan.KindProfiling, Concurrency: 4, Requests: 3}}
	r.Server = &servermetrics.Result{}
	for _, phase := range []string{"prime", "steady", "steady/slice-1"} {
		r.Server.Series = append(r.Server.Series, servermetrics.Series{Source: "server", Endpoint: vllmURL,
			Metric: "vllm:num_requests_running", Type: servermetrics.TypeGauge, Phase: phase, Stats: map[string]float64{"avg": float64(len(phase))}})
	}
	_, err := db.SaveRun(ctx, r, "")
	require.NoError(t, err)
	g, err := db.RunsByRef(ctx, "named-phases", []string{"server.vllm:num_requests_running.avg"})
	require.NoError(t, err)
	require.Len(t, g.Runs[0].Server, 1)
	assert.Equal(t, "steady", g.Runs[0].Server[0].Phase)
}

func TestServerMetricsKeepSecretsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	const key, password = "sk-live-KEY-0004", "pw-URL-0005"
	r := newRun(runOpts{name: "secret", records: 3})
	r.Config.APIKey = key
	r.Config.URL = []string{"http://user:" + password + "@127.0.0.1:8000"}
	// A collector that forgot to redact, and a server that echoes the key.
	withPassword := "http://user:" + password + "@127.0.0.1:8000/metrics"
	r.Server = &servermetrics.Result{
		Endpoints: []servermetrics.Endpoint{{URL: withPassword, Source: "server", LastError: "401: bad key " + key}},
		Series:    []servermetrics.Series{{Source: "server", Endpoint: withPassword, Metric: "m", Type: "gauge", Phase: "profiling", Stats: map[string]float64{"avg": 1}}},
		Warnings:  []string{withPassword + ": 401 for key " + key},
	}
	id, err := db.SaveRun(ctx, r, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, "http://"+plan.Redacted+"@127.0.0.1:8000/metrics", got.Server.Endpoints[0].URL)
	assert.Equal(t, got.Server.Endpoints[0].URL, got.Server.Series[0].Endpoint)

	require.NoError(t, db.Close())
	files, err := filepath.Glob(path + "*")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, secret := range []string{key, password} {
			assert.False(t, bytes.Contains(b, []byte(secret)), "%s holds secret %q", f, secret)
		}
	}
}

// TestServerMetricsAllOrNothing: a run whose server metrics cannot be
// stored is not stored at all.
func TestServerMetricsAllOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	require.NoError(t, store.ExecForTest(ctx, db, `CREATE TRIGGER refuse BEFORE INSERT ON server_stats
		WHEN NEW.value = 142 BEGIN SELECT RAISE(ABORT, 'refused'); END`))
	r := newRun(runOpts{name: "broken", records: 3})
	r.Server = serverResult(10)
	r.Server.Series[len(r.Server.Series)-1].Stats["avg"] = 142 // the very last row fails
	_, err := db.SaveRun(ctx, r, "")
	require.ErrorContains(t, err, "insert server metrics")
	require.ErrorContains(t, err, "refused")
	for _, table := range []string{"runs", "run_stats", "records", "server_endpoints", "server_series", "server_stats"} {
		assert.Zero(t, count(t, db, "SELECT count(*) FROM "+table), table)
	}
}

// BenchmarkSaveRunServerSeries stores a run with 10,000 server series of
// 7 statistics each (plus its 1,000 records): one transaction.
func BenchmarkSaveRunServerSeries(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "aiperf.db"))
	r := newRun(runOpts{name: "bench", records: 1000})
	r.Server = serverResult(10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.SaveRun(ctx, r, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRunServerSeries reads back a run with 10,000 server series.
func BenchmarkGetRunServerSeries(b *testing.B) {
	db := openAt(b, filepath.Join(b.TempDir(), "aiperf.db"))
	r := newRun(runOpts{name: "bench", records: 1000})
	r.Server = serverResult(10_000)
	ctx := context.Background()
	id, err := db.SaveRun(ctx, r, "")
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.GetRun(ctx, id, false); err != nil {
			b.Fatal(err)
		}
	}
}
