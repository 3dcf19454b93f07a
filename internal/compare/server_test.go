package compare_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/servermetrics"
	"github.com/aiperf-go/aiperf/store"
)

const (
	vllmEndpoint = "http://localhost:8000/metrics"
	twa          = servermetrics.StatTimeWeightedAvg
)

// vllm is what a vLLM server's /metrics says over one run's profiling
// phase.
type vllm struct {
	kv            float64 // vllm:kv_cache_usage_perc max (a ratio); its avg is half
	running       float64 // vllm:num_requests_running avg
	hits, queries float64 // vllm:prefix_cache_{hits,queries} deltas, in tokens
	ttftS         float64 // vllm:time_to_first_token_seconds p50, in seconds
}

// withServer gives r the server metrics v describes, plus warmup series
// with other values that compare must ignore.
func withServer(r *result.Run, v vllm) *result.Run {
	sm := &servermetrics.Result{Endpoints: []servermetrics.Endpoint{{URL: vllmEndpoint, Source: "server", Scrapes: 30}}}
	for _, phase := range []string{plan.KindWarmup, plan.KindProfiling} {
		f := 1.0
		if phase == plan.KindWarmup {
			f = 7 // nothing of the warmup may leak into the comparison
		}
		series := func(metric, typ string, stats map[string]float64) {
			sm.Series = append(sm.Series, servermetrics.Series{Source: "server", Endpoint: vllmEndpoint, Metric: metric,
				Labels: map[string]string{"model_name": "mock-model"}, Type: typ, Phase: phase, Stats: stats})
		}
		series("vllm:kv_cache_usage_perc", servermetrics.TypeGauge, map[string]float64{"avg": f * v.kv / 3, twa: f * v.kv / 2,
			"min": 0, "max": f * v.kv, "p50": f * v.kv / 2})
		// AIPerf's avg, the samples' mean, reads half the time-weighted one (the marks' zeros)
		series("vllm:num_requests_running", servermetrics.TypeGauge, map[string]float64{"avg": f * v.running / 2, twa: f * v.running,
			"max": f * v.running * 2})
		series("vllm:prefix_cache_hits", servermetrics.TypeCounter, map[string]float64{"total": f * v.hits, "rate": f * v.hits / 60})
		series("vllm:prefix_cache_queries", servermetrics.TypeCounter, map[string]float64{"total": v.queries, "rate": v.queries / 60})
		series("vllm:time_to_first_token_seconds", servermetrics.TypeHistogram,
			map[string]float64{"count": 100, "sum": 100 * f * v.ttftS, "avg": f * v.ttftS, "p50": f * v.ttftS, "p99": 2 * f * v.ttftS})
	}
	r.Server = sm
	return r
}

// saveServerGroup stores standalone runs named s.name, one per trial, each
// with its server account.
func saveServerGroup(t *testing.T, db *store.DB, s setup, trials []trial, servers []vllm) {
	t.Helper()
	for i, tr := range trials {
		_, err := db.SaveRun(context.Background(), withServer(makeRun(s, i+1, tr), servers[i]), "")
		require.NoError(t, err)
	}
}

// saveColdWarm stores two runs named cold, whose prompts hardly hit the
// prefix cache, and two named warm, whose prompts mostly do.
func saveColdWarm(t *testing.T, db *store.DB) {
	t.Helper()
	saveServerGroup(t, db, setup{name: "cold"}, ttfts(20, 22), []vllm{
		{kv: 0.2, running: 4, hits: 0, queries: 5000, ttftS: 0.0160}, {kv: 0.21, running: 4.2, hits: 16, queries: 5000, ttftS: 0.0175}})
	saveServerGroup(t, db, setup{name: "warm"}, ttfts(12, 13), []vllm{
		{kv: 0.2, running: 4, hits: 4500, queries: 5000, ttftS: 0.0090}, {kv: 0.2, running: 4.1, hits: 4600, queries: 5000, ttftS: 0.0098}})
}

func keys(t *testing.T, specs ...string) []compare.Key {
	t.Helper()
	ks, err := compare.ParseKeys(specs)
	require.NoError(t, err)
	return ks
}

func TestServerKeyVerdicts(t *testing.T) {
	t.Parallel()
	db := openStore(t, filepath.Join(t.TempDir(), "aiperf.db"))
	saveServerGroup(t, db, setup{name: "small"}, ttfts(20, 21, 19),
		[]vllm{{kv: 0.30, ttftS: 0.015}, {kv: 0.31, ttftS: 0.016}, {kv: 0.29, ttftS: 0.014}})
	saveServerGroup(t, db, setup{name: "big"}, ttfts(20, 21, 19),
		[]vllm{{kv: 0.60, ttftS: 0.015}, {kv: 0.62, ttftS: 0.0151}, {kv: 0.61, ttftS: 0.0149}})
	opt := compare.Options{Keys: keys(t, "server.vllm:kv_cache_usage_perc.max,server.kv_cache_usage.max,server.ttft.p50")}
	rep := groups(t, db, opt, "small", "big")

	raw := metric(t, rep, "server.vllm:kv_cache_usage_perc.max")
	assert.InDelta(t, 0.30, float64(raw.Values[0].Mean), 1e-9, "the profiling phase's value, in the family's unit")
	assert.Equal(t, 3, raw.Values[0].N)
	assert.Equal(t, compare.Neutral, raw.Better)
	assert.True(t, raw.Versus[0].Significant)
	assert.Equal(t, compare.Higher, raw.Versus[0].Verdict, "Welch's test over the trials, as for client metrics")
	assert.InDelta(t, 103.3, float64(raw.Versus[0].DeltaPct), 0.1)

	alias := metric(t, rep, "server.kv_cache_usage.max")
	assert.Equal(t, "%", alias.Unit)
	assert.InDelta(t, 30, float64(alias.Values[0].Mean), 1e-9, "the alias shows the ratio in %")
	assert.Equal(t, raw.Versus[0].Verdict, alias.Versus[0].Verdict)

	ttft := metric(t, rep, "server.ttft.p50")
	assert.Equal(t, "ms", ttft.Unit)
	assert.Equal(t, compare.LowerIsBetter, ttft.Better)
	assert.InDelta(t, 15, float64(ttft.Values[0].Mean), 1e-9, "seconds become ms")
	assert.Equal(t, compare.Inconclusive, ttft.Versus[0].Verdict, "same mean, but three noisy trials cannot show it within ±5%")
	assert.InDelta(t, 5, float64(ttft.Versus[0].ThresholdPct), 0, "a server key's default threshold")
}

func TestServerAggregation(t *testing.T) {
	t.Parallel()
	gauge := func(endpoint string, avg, maxV, p99 float64) servermetrics.Series {
		return servermetrics.Series{Source: "server", Endpoint: endpoint, Metric: "vllm:num_requests_running", Type: "gauge",
			Phase: "profiling", Stats: map[string]float64{"avg": avg / 2, twa: avg, "min": avg / 2, "max": maxV, "std": avg / 4, "p99": p99}}
	}
	hist := func(endpoint string, count, p50 float64, unit string) servermetrics.Series {
		return servermetrics.Series{Source: "server", Endpoint: endpoint, Metric: "vllm:time_to_first_token_seconds", Type: "histogram",
			Phase: "profiling", Unit: unit, Stats: map[string]float64{"count": count, "sum": count * p50, "avg": p50, "p50": p50}}
	}
	counter := func(metric string, delta float64) servermetrics.Series {
		return servermetrics.Series{Source: "server", Endpoint: "a", Metric: metric, Type: "counter", Phase: "profiling",
			Stats: map[string]float64{"total": delta, "rate": delta / 10}}
	}
	twoEndpoints := []servermetrics.Series{
		gauge("a", 2, 5, 4), gauge("b", 4, 9, 6),
		hist("a", 300, 0.010, "s"), hist("b", 100, 0.030, "s"), hist("c", 0, 0, "s"),
		counter("vllm:prefix_cache_hits", 30), counter("vllm:prefix_cache_hits", 10),
		counter("vllm:prefix_cache_queries", 100), counter("vllm:prefix_cache_queries", 100),
		counter("vllm:generation_tokens", 600), counter("vllm:generation_tokens", 400),
	}
	// as a result of a version that kept the _total spells them
	olderNames := []servermetrics.Series{counter("vllm:generation_tokens_total", 600), counter("vllm:generation_tokens_total", 400),
		counter("vllm:prefix_cache_hits_total", 30), counter("vllm:prefix_cache_queries_total", 100)}
	// as a version that kept only AIPerf's avg (the samples' mean) stored a gauge
	olderGauge := []servermetrics.Series{{Source: "server", Endpoint: "a", Metric: "vllm:num_requests_running", Type: "gauge",
		Phase: "profiling", Stats: map[string]float64{"avg": 2, "min": 0, "max": 4}}}
	sglang := []servermetrics.Series{
		{Source: "server", Endpoint: "a", Metric: "sglang:cache_hit_rate", Type: "gauge", Phase: "profiling", Stats: map[string]float64{"avg": 0.3, twa: 0.42}},
		{Source: "server", Endpoint: "a", Metric: "sglang:token_usage", Type: "gauge", Phase: "profiling", Stats: map[string]float64{"max": 0.8}},
		{Source: "server", Endpoint: "a", Metric: "sglang:time_to_first_token_seconds", Type: "histogram", Unit: "ms", Phase: "profiling",
			Stats: map[string]float64{"count": 4, "sum": 80, "p50": 20}},
	}
	gpus := []servermetrics.Series{
		{Source: "gpu", Endpoint: "d", Metric: "DCGM_FI_DEV_GPU_UTIL", Type: "gauge", Labels: map[string]string{"gpu": "0"}, Phase: "profiling", Stats: map[string]float64{"avg": 70, twa: 80}},
		{Source: "gpu", Endpoint: "d", Metric: "DCGM_FI_DEV_GPU_UTIL", Type: "gauge", Labels: map[string]string{"gpu": "1"}, Phase: "profiling", Stats: map[string]float64{"avg": 50, twa: 60}},
	}
	tests := []struct {
		name   string
		series []servermetrics.Series
		key    string
		want   float64
		absent bool
	}{
		{"gauge avg: mean of the series' averages over time (not of AIPerf's samples' means)", twoEndpoints,
			"server.vllm:num_requests_running.avg", 3, false},
		{"a gauge stored without its average over time (an older run) has no avg", olderGauge, "server.running.avg", 0, true},
		{"… but its other statistics", olderGauge, "server.running.max", 4, false},
		{"gauge max: the largest", twoEndpoints, "server.running.max", 9, false},
		{"gauge min: the smallest", twoEndpoints, "server.vllm:num_requests_running.min", 1, false},
		{"gauge std: the largest", twoEndpoints, "server.vllm:num_requests_running.std", 1, false},
		{"gauge quantile: the largest", twoEndpoints, "server.vllm:num_requests_running.p99", 6, false},
		{"counter delta: the sum", twoEndpoints, "server.generation_tokens.delta", 1000, false},
		{"counter rate: the sum", twoEndpoints, "server.vllm:generation_tokens.rate", 100, false},
		{"a counter asked for with its _total (the exposition's name)", twoEndpoints, "server.vllm:generation_tokens_total.delta", 1000, false},
		{"a counter stored with its _total, by AIPerf's name", olderNames, "server.vllm:generation_tokens.delta", 1000, false},
		{"a counter stored with its _total, by an alias", olderNames, "server.generation_tokens.delta", 1000, false},
		{"a hit rate from counters stored with their _total", olderNames, "server.prefix_cache_hit_rate", 30, false},
		{"histogram count: the sum", twoEndpoints, "server.vllm:time_to_first_token_seconds.count", 400, false},
		{"histogram avg: Σsum/Σcount", twoEndpoints, "server.vllm:time_to_first_token_seconds.avg", 0.015, false},
		{"histogram quantile: count-weighted, empty series left out", twoEndpoints, "server.vllm:time_to_first_token_seconds.p50", 0.015, false},
		{"alias in ms", twoEndpoints, "server.ttft.p50", 15, false},
		{"prefix hit rate: hits / queries in %", twoEndpoints, "server.prefix_cache_hit_rate", 20, false},
		{"no such statistic", twoEndpoints, "server.vllm:time_to_first_token_seconds.p99", 0, true},
		{"sglang hit rate gauge", sglang, "server.prefix_cache_hit_rate.avg", 42, false},
		{"sglang token usage", sglang, "server.kv_cache_usage.max", 80, false},
		{"a family in ms stays in ms", sglang, "server.ttft.p50", 20, false},
		{"a single histogram series: its own quantile", sglang, "server.sglang:time_to_first_token_seconds.p50", 20, false},
		{"no family of the alias", sglang, "server.running.avg", 0, true},
		{"histogram avg without sums: mean of the averages", []servermetrics.Series{
			{Source: "server", Metric: "h", Type: "histogram", Stats: map[string]float64{"count": 1, "avg": 2}},
			{Source: "server", Metric: "h", Type: "histogram", Stats: map[string]float64{"count": 3, "avg": 4}},
		}, "server.h.avg", 3, false},
		{"GPUs: mean utilisation", gpus, "gpu.utilization.avg", 70, false},
		{"a GPU family is not a server family", gpus, "server.DCGM_FI_DEV_GPU_UTIL.avg", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := keys(t, tc.key)[0]
			v, ok := compare.ServerValueForTest(tc.series, k)
			if tc.absent {
				assert.False(t, ok, "value %g", v)
				return
			}
			require.True(t, ok)
			assert.InDelta(t, tc.want, v, 1e-9)
		})
	}
}

func TestParseServerKeys(t *testing.T) {
	t.Parallel()
	ok := map[string]compare.Key{
		"server.vllm:kv_cache_usage_perc.max":       {Metric: "server.vllm:kv_cache_usage_perc", Stat: "max"},
		"server.prefix_cache_hit_rate":              {Metric: "server.prefix_cache_hit_rate", Stat: "avg"},
		"server.prefix_cache_hit_rate.avg":          {Metric: "server.prefix_cache_hit_rate", Stat: "avg"},
		"server.preemptions.delta":                  {Metric: "server.preemptions", Stat: "delta"},
		"gpu.DCGM_FI_DEV_POWER_USAGE.p99":           {Metric: "gpu.DCGM_FI_DEV_POWER_USAGE", Stat: "p99"},
		"server.llamacpp:prompt_tokens_total.delta": {Metric: "server.llamacpp:prompt_tokens", Stat: "delta"},
		"server.llamacpp:prompt_tokens.rate":        {Metric: "server.llamacpp:prompt_tokens", Stat: "rate"},
		"server.gauge_total.max":                    {Metric: "server.gauge_total", Stat: "max"},
	}
	for spec, want := range ok {
		assert.Equal(t, []compare.Key{want}, keys(t, spec), spec)
	}
	bad := map[string]string{
		"server.ttft":                   "server.ttft: want server.METRIC.STAT, e.g. server.ttft.p50 or server.vllm:kv_cache_usage_perc.max",
		"server.ttft.max":               `unknown statistic "max" of server.ttft (want one of avg, p50, p90, p95, p99)`,
		"server.preemptions.avg":        `unknown statistic "avg" of server.preemptions (want one of delta, rate)`,
		"server.vllm-thing.max":         `"vllm-thing" is not a Prometheus metric name; the server aliases are server.running (avg, min, max, std, p50, p90, p99), `,
		"server.vllm:foo.p42":           `unknown statistic "p42" (a gauge has avg, min, max, std, p50, p90, p99; a counter delta, rate; a histogram count, sum, avg, p50, p90, p95, p99)`,
		"gpu.utilisation":               "gpu.utilisation: want gpu.METRIC.STAT, e.g. gpu.utilization.avg",
		"time_to_first_token_server.p5": `unknown metric "time_to_first_token_server"`,
	}
	for spec, want := range bad {
		_, err := compare.ParseKeys([]string{spec})
		require.ErrorContains(t, err, want, spec)
	}
	_, err := compare.ParseKeys([]string{"nosuch.p99"})
	require.ErrorContains(t, err, "the server's as server.FAMILY.STAT or an alias (server.running (avg,", "the client list points at server keys")
	assert.Equal(t, compare.LowerIsBetter, compare.DirectionOf(keys(t, "server.vllm:e2e_request_latency_seconds.p99")[0]))
	assert.Equal(t, compare.Neutral, compare.DirectionOf(keys(t, "server.vllm:e2e_request_latency_seconds.count")[0]))
	assert.Equal(t, compare.HigherIsBetter, compare.DirectionOf(keys(t, "server.generation_tokens.rate")[0]))
	assert.Equal(t, compare.Neutral, compare.DirectionOf(keys(t, "server.generation_tokens.delta")[0]))
	assert.Equal(t, compare.LowerIsBetter, compare.DirectionOf(keys(t, "server.preemptions.delta")[0]))
}

func TestCheckServerKeys(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveServerGroup(t, db, setup{name: "a"}, ttfts(20), []vllm{{kv: 0.3, ttftS: 0.015, hits: 1, queries: 10}})
	saveGroup(t, db, setup{name: "plain"}, ttfts(20)...)
	check := func(refs []string, specs ...string) error {
		opt := compare.Options{Keys: keys(t, specs...)}
		var runs []store.RunRow
		for _, ref := range refs {
			g, err := db.RunsByRef(context.Background(), ref, opt.StatKeys())
			require.NoError(t, err)
			runs = append(runs, g.Runs...)
		}
		return compare.CheckServerKeys(opt.Keys, runs, func() ([]store.ServerMetric, error) {
			ids := make([]int64, len(runs))
			for i := range runs {
				ids[i] = runs[i].ID
			}
			return db.ServerMetrics(context.Background(), ids)
		})
	}
	require.NoError(t, check([]string{"a"}, "server.vllm:kv_cache_usage_perc.max,server.preemptions.delta,time_to_first_token.avg"),
		"a family the runs have, and an alias they lack (only noted under the table)")
	err := check([]string{"a"}, "server.vllm:kv_cache_usage_prc.max")
	require.Error(t, err)
	assert.Equal(t, `server.vllm:kv_cache_usage_prc.max: unknown server metric "vllm:kv_cache_usage_prc" (did you mean "vllm:kv_cache_usage_perc"?): `+
		`the compared runs have server metrics vllm:kv_cache_usage_perc, vllm:num_requests_running, vllm:prefix_cache_hits, `+
		`vllm:prefix_cache_queries, vllm:time_to_first_token_seconds; the aliases are `+
		`server.running (avg, min, max, std, p50, p90, p99), server.waiting (avg, min, max, std, p50, p90, p99), `+
		`server.kv_cache_usage (avg, min, max, std, p50, p90, p99), server.prefix_cache_hit_rate (avg), server.preemptions (delta, rate), `+
		`server.prompt_tokens (delta, rate), server.generation_tokens (delta, rate), server.ttft (avg, p50, p90, p95, p99), `+
		`server.itl (avg, p50, p90, p95, p99), server.e2e_latency (avg, p50, p90, p95, p99)`, err.Error())
	err = check([]string{"plain"}, "gpu.DCGM_FI_DEV_GPU_UTIL.avg")
	require.ErrorContains(t, err, `unknown gpu metric "DCGM_FI_DEV_GPU_UTIL": the compared runs have no gpu metrics; the aliases are gpu.utilization`)
	require.NoError(t, check([]string{"a"}, "server.vllm:prefix_cache_hits.delta"), "a counter by AIPerf's name")
	require.NoError(t, check([]string{"a"}, "server.vllm:prefix_cache_hits_total.delta"), "a counter with the _total of its samples")
	err = check([]string{"a", "plain"}, "server.vllm:prefix_cache_hits_total.max")
	require.EqualError(t, err, "server.vllm:prefix_cache_hits_total.max: vllm:prefix_cache_hits is a counter: its statistics are delta, rate")
}

// TestDefaultViewServerRows: the default view adds the server rows and the
// client-minus-server line when every group has server metrics, and
// nothing when one has none.
func TestDefaultViewServerRows(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveColdWarm(t, db)
	saveGroup(t, db, setup{name: "plain"}, ttfts(20, 21)...)

	rep := groups(t, db, compare.Options{}, "cold", "warm")
	var names []string
	for _, m := range rep.Metrics {
		names = append(names, m.Metric)
	}
	assert.Equal(t, []string{"time_to_first_token.avg", "time_to_first_token.p99", "inter_token_latency.avg", "request_latency.p99",
		"output_token_throughput.avg", "request_throughput.avg", "error_request_count.avg",
		"server.prefix_cache_hit_rate.avg", "server.kv_cache_usage.max", "server.running.avg", "server.ttft.p50"}, names)
	hit := metric(t, rep, "server.prefix_cache_hit_rate.avg")
	assert.InDelta(t, 0.16, float64(hit.Values[0].Mean), 1e-9)
	assert.InDelta(t, 91, float64(hit.Values[1].Mean), 1e-9)
	assert.Equal(t, compare.Higher, hit.Versus[0].Verdict)
	require.Len(t, rep.ClientMinusServerTTFT, 2)
	assert.InDelta(t, 4.25, float64(rep.ClientMinusServerTTFT[0].Mean), 1e-9, "(20-16 + 22-17.5) / 2")
	assert.InDelta(t, 3.1, float64(rep.ClientMinusServerTTFT[1].Mean), 1e-9, "(12-9 + 13-9.8) / 2")
	tb := rep.Table()
	assert.Contains(t, tb.Notes, "client TTFT − server TTFT p50: 4.25 ± 3.18 ms (cold), 3.10 ± 1.27 ms (warm) — what the network and the client add")

	mixed := groups(t, db, compare.Options{}, "cold", "plain")
	assert.Len(t, mixed.Metrics, len(compare.DefaultKeys), "one side has no server metrics: no server rows")
	assert.Contains(t, mixed.Table().Notes, "client TTFT − server TTFT p50: 4.25 ± 3.18 ms (cold), n/a (plain) — what the network and the client add")
	plain := groups(t, db, compare.Options{}, "plain", "plain")
	assert.Empty(t, plain.ClientMinusServerTTFT)
	for _, n := range plain.Table().Notes {
		assert.NotContains(t, n, "server")
	}

	asked := groups(t, db, compare.Options{Keys: keys(t, "request_throughput.avg")}, "cold", "warm")
	assert.Len(t, asked.Metrics, 1, "--metric shows what it names")
	assert.Len(t, asked.ClientMinusServerTTFT, 2, "the line is there whenever both sides exist")
}

// saveCacheSweep stores a sweep with a cold and a warm cell, the warm one
// serving most prompt tokens from the prefix cache.
func saveCacheSweep(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "cache", Trials: 2})
	require.NoError(t, err)
	cells := []struct {
		name    string
		ttft    []float64
		servers []vllm
	}{
		{"cold", []float64{40, 42}, []vllm{{kv: 0.3, running: 4, hits: 0, queries: 8000, ttftS: 0.035}, {kv: 0.3, running: 4, hits: 32, queries: 8000, ttftS: 0.037}}},
		{"warm", []float64{15, 16}, []vllm{{kv: 0.3, running: 4, hits: 7200, queries: 8000, ttftS: 0.011}, {kv: 0.3, running: 4, hits: 7280, queries: 8000, ttftS: 0.012}}},
	}
	for i, c := range cells {
		params := []plan.Param{{Name: "warmup_request_count", Value: []any{nil, float64(20)}[i]}}
		cell := plan.Cell{ID: plan.CellID("cache", params), Label: c.name, Index: i, Params: params}
		for n, ttft := range c.ttft {
			r := withServer(makeRun(setup{sweepID: id, cell: &cell}, n+1, trial{ttft: ttft, rps: 10}), c.servers[n])
			_, err := db.SaveRun(ctx, r, "")
			require.NoError(t, err)
		}
	}
	require.NoError(t, db.FinishSweep(ctx, id, result.StatusComplete))
}

func TestSweepPrefixCacheColumn(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveCacheSweep(t, db)
	saveSweep(t, db, "scan", scanCells, 1, 4)
	ctx := context.Background()
	s, err := db.SweepRuns(ctx, "cache", compare.Options{}.StatKeys())
	require.NoError(t, err)
	rep := compare.Sweep(s, compare.Options{})
	last := rep.Metrics[len(rep.Metrics)-1]
	assert.Equal(t, "server.prefix_cache_hit_rate.avg", last.Metric)
	assert.InDelta(t, 0.2, float64(rep.Cells[0].Values[len(rep.Metrics)-1].Mean), 1e-9, "cold: ~0")
	assert.InDelta(t, 90.5, float64(rep.Cells[1].Values[len(rep.Metrics)-1].Mean), 1e-9, "warm: high")
	tb := rep.Table()
	assert.Contains(t, tb.Header, "prefix cache hit %")

	s, err = db.SweepRuns(ctx, "scan", compare.Options{}.StatKeys())
	require.NoError(t, err)
	assert.Len(t, compare.Sweep(s, compare.Options{}).Metrics, len(compare.DefaultKeys), "cells without server metrics: no column")
}

// TestRenderServerGolden renders the views with server metrics against
// testdata/*server*.golden (go test -update rewrites them).
func TestRenderServerGolden(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveColdWarm(t, db)
	saveCacheSweep(t, db)
	opt := compare.Options{}
	s, err := db.SweepRuns(context.Background(), "cache", opt.StatKeys())
	require.NoError(t, err)
	reports := map[string]compare.Report{
		"groups_server": groups(t, db, opt, "cold", "warm"),
		"sweep_server":  compare.Sweep(s, opt),
	}
	for name, rep := range reports {
		for _, format := range []string{"table", "json"} {
			t.Run(name+"."+format, func(t *testing.T) {
				var buf bytes.Buffer
				require.NoError(t, compare.Render(&buf, rep, format))
				golden(t, name+"."+format, buf.Bytes())
			})
		}
	}
	var back map[string]any
	var buf bytes.Buffer
	require.NoError(t, compare.Render(&buf, reports["groups_server"], "json"))
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Len(t, back["client_minus_server_ttft_p50_ms"], 2)
}

// A server histogram quantile TOST would call equivalent is inconclusive
// (judgeKey); the legend under the table says why, and only when such a
// row is in it.
func TestLegendExplainsHeldBackServerQuantile(t *testing.T) {
	t.Parallel()
	db := openStore(t, filepath.Join(t.TempDir(), "aiperf.db"))
	same := []vllm{{kv: 0.3, ttftS: 0.030}, {kv: 0.3, ttftS: 0.030}}
	saveServerGroup(t, db, setup{name: "one"}, ttfts(20, 21), same)
	saveServerGroup(t, db, setup{name: "four"}, ttfts(20, 21), same)
	const why = "A server histogram quantile (server.ttft.p50, …) is never called equivalent"
	table := func(rep compare.Report) string {
		var buf bytes.Buffer
		require.NoError(t, compare.Render(&buf, rep, "markdown"))
		return buf.String()
	}

	rep := groups(t, db, compare.Options{Keys: keys(t, "time_to_first_token.avg,server.ttft.p50")}, "one", "four")
	v := metric(t, rep, "server.ttft.p50").Versus[0]
	require.Equal(t, compare.Inconclusive, v.Verdict, "trials agreeing to the digit")
	assert.Contains(t, table(rep), why)

	rep = groups(t, db, compare.Options{Keys: keys(t, "time_to_first_token.avg,server.kv_cache_usage.max")}, "one", "four")
	assert.NotContains(t, table(rep), why, "no server histogram quantile held back")
}
