package servermetrics

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// The headline rows come from the span's series: the server's gauges, its
// prefix-cache hit rate from the counters' deltas, its latency percentiles
// from the histograms in milliseconds, and each GPU's figures.
func TestHeadline(t *testing.T) {
	base := startMock(t, mock.Config{TTFT: 20, ITL: 1, BlockSize: 4, GPUMetrics: true, GPUs: 2})
	c := collect(t, Options{Endpoints: []Target{server(base), {URL: base + "/dcgm/metrics", Source: SourceGPU}},
		Interval: 10 * time.Millisecond})
	c.Mark("warmup", true)
	chat(t, base, words(0, 60), 2)
	c.Mark("warmup", false)
	c.Mark("profiling", true)
	for round := range 2 {
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Go(func() { chat(t, base, words(100*i+round, 60), 8) }) // the second round repeats most of the first's prompts
		}
		wg.Wait()
	}
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)

	rows := Headline(&r)
	var server, gpu []string
	for _, row := range rows {
		name := row.Name + " " + row.Stat + " " + row.Unit
		if row.Section == SectionGPU {
			gpu = append(gpu, row.GPU+" "+name)
			assert.Equal(t, base+"/dcgm/metrics", row.Endpoint)
			continue
		}
		if unit, lo, hi, ok := bucketOf(t, row.Unit); ok {
			// Which bucket holds a latency depends on how busy the machine
			// is; that the estimate lies inside the bucket named does not.
			name = row.Name + " " + row.Stat + " " + unit
			assert.True(t, lo <= row.Value && row.Value <= hi, "%s %s = %g outside %g–%g", row.Name, row.Stat, row.Value, lo, hi)
			if row.Name == "Server TTFT" {
				assert.GreaterOrEqual(t, lo, 20.0, "the mock's TTFT is 20 ms at least")
			}
		}
		server = append(server, name)
		assert.Equal(t, base+"/metrics", row.Endpoint)
	}
	assert.Equal(t, []string{"Running requests avg requests", "Running requests max requests", "Waiting requests avg requests",
		"Waiting requests max requests", "KV-cache usage max %", "Prefix-cache hit rate ratio %", "Preemptions total preemptions",
		"Server TTFT p50 est. ms", "Server TTFT p99 est. ms", "Server ITL p50 est. ms",
		"Server ITL p99 est. ms", "Server e2e latency p50 est. ms", "Server e2e latency p99 est. ms",
		"Generation throughput rate tokens/s"}, server)
	var want []string
	for _, g := range []string{"0", "1"} {
		for _, n := range []string{"GPU utilization avg %", "GPU utilization max %", "GPU memory used avg MiB", "GPU memory used max MiB",
			"GPU power avg W", "GPU power max W"} {
			want = append(want, g+" "+n)
		}
	}
	assert.Equal(t, want, gpu)

	value := func(name, stat string) float64 {
		for _, row := range rows {
			if row.Name == name && row.Stat == stat && row.Section == SectionServer {
				return row.Value
			}
		}
		t.Fatalf("no row %s %s", name, stat)
		return 0
	}
	hits := find(t, r, "vllm:prefix_cache_hits", "profiling").Stats["total"]
	queries := find(t, r, "vllm:prefix_cache_queries", "profiling").Stats["total"]
	require.Positive(t, hits, "the second round hits the first's blocks")
	assert.InDelta(t, 100*hits/queries, value("Prefix-cache hit rate", "ratio"), 1e-9)
	ttft := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	assert.InDelta(t, 1000*ttft.Stats["p50_estimate"], value("Server TTFT", "p50 est."), 1e-9)
	assert.Equal(t, 6.0, ttft.Stats["count"])
	assert.Equal(t, find(t, r, "vllm:generation_tokens", "profiling").Stats["rate"], value("Generation throughput", "rate"))
	for _, row := range rows {
		if row.Section == SectionGPU && row.Name == "GPU memory used" {
			assert.Equal(t, 73403.0, row.Value, "the mock's constant framebuffer use")
		}
	}
}

// After a reset that clears the cache, the first lookups hit nothing; after
// one that only says it did, the same prompt hits.
func TestResetEvidence(t *testing.T) {
	prompt := strings.Repeat("the same long prompt ", 20)
	run := func(t *testing.T, cfg mock.Config, markReset bool, firstSends ...func(int64) bool) []Evidence {
		cfg.BlockSize = 4
		base := startMock(t, cfg)
		c := collect(t, Options{Endpoints: []Target{server(base)}})
		chat(t, base, prompt, 2) // an earlier cell filled the cache
		resp, err := http.Post(base+"/reset_prefix_cache", "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		if markReset {
			c.Mark(PhaseReset, true)
		}
		chat(t, base, prompt, 2) // the first request after the reset (warmup)
		c.Mark("profiling", true)
		chat(t, base, words(0, 40), 2)
		c.Mark("profiling", false)
		r := c.Stop()
		assert.Equal(t, "profiling", r.Span, "the reset mark is not a profiling phase")
		var fs func(int64) bool
		if len(firstSends) > 0 {
			fs = firstSends[0]
		}
		return ResetEvidence(&r, "profiling", fs)
	}

	t.Run("cleared", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true}, true)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceCold, ev[0].Verdict, ev[0].Detail)
		assert.Zero(t, ev[0].Hits)
		assert.Positive(t, ev[0].Queries)
		assert.Positive(t, ev[0].PhaseQueries)
		assert.Equal(t, "vllm:prefix_cache_hits / vllm:prefix_cache_queries", ev[0].Source)
		assert.Contains(t, ev[0].Detail, "0 of ")
	})
	t.Run("not cleared", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true, ResetNoop: true}, true)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceWarm, ev[0].Verdict, ev[0].Detail)
		assert.GreaterOrEqual(t, 2*ev[0].Hits, ev[0].Queries)
	})
	t.Run("not cleared, but the first interval repeated a prompt", func(t *testing.T) {
		var asked int64
		ev := run(t, mock.Config{Fast: true, ResetNoop: true}, true, func(until int64) bool { asked = until; return false })
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceMixed, ev[0].Verdict, "hits of repeated prompts prove nothing")
		assert.Contains(t, ev[0].Detail, "repeat prompts or share prefixes")
		assert.Equal(t, ev[0].ToNs, asked, "asked about the requests sent by the end of the first interval")
	})
	t.Run("no reset mark: from the phase's begin", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true, ResetNoop: true}, false)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceCold, ev[0].Verdict, "the warmup's hit happened before the phase: %s", ev[0].Detail)
	})
	t.Run("without samples", func(t *testing.T) {
		assert.Nil(t, ResetEvidence(&Result{}, "profiling", nil))
	})
}

// llama.cpp (as llama-server --metrics writes it, server-task.cpp) and
// SGLang: their counters' deltas per phase, their headline rows, and the
// hit rate from their cached-token counters — llama.cpp's prompt counter
// leaves the cached tokens out.
func TestOtherServers(t *testing.T) {
	llama := func(prompt, cached, predicted, processing int) string {
		var b strings.Builder
		for _, m := range []struct {
			name, typ string
			v         int
		}{{"prompt_tokens_total", "counter", prompt}, {"prompt_tokens_cached_total", "counter", cached},
			{"prompt_seconds_total", "counter", prompt / 100}, {"tokens_predicted_total", "counter", predicted},
			{"tokens_predicted_seconds_total", "counter", predicted / 20}, {"n_decode_total", "counter", predicted},
			{"n_tokens_max", "counter", 900}, {"prompt_tokens_seconds", "gauge", 512}, {"predicted_tokens_seconds", "gauge", 48},
			{"requests_processing", "gauge", processing}, {"requests_deferred", "gauge", 0}, {"n_busy_slots_per_decode", "gauge", 1}} {
			fmt.Fprintf(&b, "# HELP llamacpp:%s A llama.cpp metric.\n# TYPE llamacpp:%s %s\nllamacpp:%s %d\n", m.name, m.name, m.typ, m.name, m.v)
		}
		return b.String()
	}
	sglang := func(prompt, cached, gen int) string {
		l := `model_name="qwen",engine_type="unified",tp_rank="0",pp_rank="0"`
		return fmt.Sprintf("# TYPE sglang:prompt_tokens_total counter\nsglang:prompt_tokens_total{%s} %d\n"+
			"# TYPE sglang:cached_tokens_total counter\nsglang:cached_tokens_total{%s,cache_source=\"device\"} %d\n"+
			"# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total{%s} %d\n"+
			"# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{%s} 2\n# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{%s} 0.4\n",
			l, prompt, l, cached, l, gen, l, l)
	}
	le, se := newExporter(t, llama(100, 0, 50, 0)), newExporter(t, sglang(1000, 0, 10))
	c := collect(t, Options{Endpoints: []Target{{URL: le.url, Source: SourceServer}, {URL: se.url, Source: SourceServer}}})
	c.Mark("warmup", true)
	le.set(llama(300, 0, 150, 1))
	c.Mark("warmup", false)
	c.Mark("profiling", true)
	le.set(llama(900, 300, 450, 2)) // +600 prompt (uncached) +300 cached +300 predicted
	se.set(sglang(3000, 1500, 410)) // +2000 prompt of which +1500 cached, +400 generated
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)

	assert.Equal(t, 600.0, find(t, r, "llamacpp:prompt_tokens", "profiling").Stats["total"])
	assert.Equal(t, 300.0, find(t, r, "llamacpp:tokens_predicted", "profiling").Stats["total"])
	assert.Equal(t, 200.0, find(t, r, "llamacpp:prompt_tokens", "warmup").Stats["total"])
	assert.Equal(t, 100.0, find(t, r, "llamacpp:tokens_predicted", "warmup").Stats["total"])

	rows := map[string]Row{}
	for _, row := range Headline(&r) {
		rows[row.Endpoint+" "+row.Name+" "+row.Stat] = row
	}
	get := func(ep *exporter, name string) Row {
		t.Helper()
		key := ep.url + " " + name
		row, ok := rows[key]
		require.True(t, ok, "no row %q in %v", key, rows)
		return row
	}
	assert.Equal(t, 100*300/900.0, get(le, "Prefix-cache hit rate ratio").Value, "cached over prompt + cached")
	assert.Equal(t, "llamacpp:prompt_tokens_cached / llamacpp:prompt_tokens", get(le, "Prefix-cache hit rate ratio").Metric)
	assert.Equal(t, 2.0, get(le, "Running requests max").Value)
	assert.Equal(t, "llamacpp:tokens_predicted", get(le, "Generation throughput rate").Metric)
	assert.Equal(t, 75.0, get(se, "Prefix-cache hit rate ratio").Value, "cached over prompt tokens")
	assert.Equal(t, "sglang:generation_tokens", get(se, "Generation throughput rate").Metric)
}

// Figures no server can report (KV-cache usage of 750%, more prefix-cache
// hits than lookups, a negative running count) are kept in the headline
// with the reason they cannot be, so the console can flag them.
func TestImpossibleFiguresAreFlagged(t *testing.T) {
	page := func(hits, queries int) string {
		return "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 7.5\n" +
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running -5\n" +
			"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n" +
			fmt.Sprintf("# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total %d\n", hits) +
			fmt.Sprintf("# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total %d\n", queries)
	}
	e := newExporter(t, page(0, 0))
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}, Warmup: []string{between}})
	c.Mark("profiling", true)
	e.set(page(250, 100))
	scrapeBetween(c) // a gauge's avg is over the scrapes between the edges
	c.Mark("profiling", false)
	r := c.Stop()

	why := map[string]string{}
	for _, row := range Headline(&r) {
		why[row.Name+" "+row.Stat] = row.Impossible
	}
	assert.Equal(t, "a percentage above 100", why["KV-cache usage max"])
	assert.Equal(t, "a percentage above 100", why["Prefix-cache hit rate ratio"])
	assert.Equal(t, "it is negative", why["Running requests avg"])
	assert.Equal(t, "", why["Waiting requests max"], "a plausible figure")
}

// bucketOf splits a latency row's unit ("ms, in 20–40" or "ms, above 300")
// into the unit and the bucket's bounds in milliseconds.
func bucketOf(t *testing.T, unit string) (string, float64, float64, bool) {
	t.Helper()
	u, note, ok := strings.Cut(unit, ", ")
	if !ok {
		return unit, 0, 0, false
	}
	if above, ok := strings.CutPrefix(note, "above "); ok {
		lo, err := strconv.ParseFloat(above, 64)
		require.NoError(t, err, unit)
		return u, lo, math.Inf(1), true
	}
	los, his, ok := strings.Cut(strings.TrimPrefix(note, "in "), "–")
	require.True(t, ok, unit)
	lo, err := strconv.ParseFloat(los, 64)
	require.NoError(t, err, unit)
	hi, err := strconv.ParseFloat(his, 64)
	require.NoError(t, err, unit)
	return u, lo, hi, true
}
