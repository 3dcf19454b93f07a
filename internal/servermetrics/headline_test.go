package servermetrics

import (
	"net/http"
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
		server = append(server, name)
		assert.Equal(t, base+"/metrics", row.Endpoint)
	}
	assert.Equal(t, []string{"Running requests avg requests", "Running requests max requests", "Waiting requests avg requests",
		"Waiting requests max requests", "KV-cache usage max %", "Prefix-cache hit rate ratio %", "Preemptions total preemptions",
		"Server TTFT p50 ms", "Server TTFT p99 ms", "Server ITL p50 ms", "Server ITL p99 ms", "Server e2e latency p50 ms",
		"Server e2e latency p99 ms", "Generation throughput rate tokens/s"}, server)
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
	hits := find(t, r, "vllm:prefix_cache_hits_total", "profiling").Stats["total"]
	queries := find(t, r, "vllm:prefix_cache_queries_total", "profiling").Stats["total"]
	require.Positive(t, hits, "the second round hits the first's blocks")
	assert.InDelta(t, 100*hits/queries, value("Prefix-cache hit rate", "ratio"), 1e-9)
	ttft := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	assert.InDelta(t, 1000*ttft.Stats["p50_estimate"], value("Server TTFT", "p50"), 1e-9)
	assert.Equal(t, 6.0, ttft.Stats["count"])
	assert.Equal(t, find(t, r, "vllm:generation_tokens_total", "profiling").Stats["rate"], value("Generation throughput", "rate"))
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
	run := func(t *testing.T, cfg mock.Config, markReset bool) []Evidence {
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
		return ResetEvidence(&r, "profiling")
	}

	t.Run("cleared", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true}, true)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceCold, ev[0].Verdict, ev[0].Detail)
		assert.Zero(t, ev[0].Hits)
		assert.Positive(t, ev[0].Queries)
		assert.Positive(t, ev[0].PhaseQueries)
		assert.Equal(t, "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total", ev[0].Source)
		assert.Contains(t, ev[0].Detail, "0 of ")
	})
	t.Run("not cleared", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true, ResetNoop: true}, true)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceWarm, ev[0].Verdict, ev[0].Detail)
		assert.GreaterOrEqual(t, 2*ev[0].Hits, ev[0].Queries)
	})
	t.Run("no reset mark: from the phase's begin", func(t *testing.T) {
		ev := run(t, mock.Config{Fast: true, ResetNoop: true}, false)
		require.Len(t, ev, 1)
		assert.Equal(t, EvidenceCold, ev[0].Verdict, "the warmup's hit happened before the phase: %s", ev[0].Detail)
	})
	t.Run("without samples", func(t *testing.T) {
		assert.Nil(t, ResetEvidence(&Result{}, "profiling"))
	})
}
