package servermetrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// Counter deltas cover exactly the phase: what the mock counted for the
// requests sent between the marks, not the warmup before nor the request
// after; periodic scrapes in between change nothing.
func TestPhaseDeltasAreWhatTheMockDid(t *testing.T) {
	base := startMock(t, mock.Config{Fast: true})
	c := collect(t, Options{Endpoints: []Target{server(base)}, Interval: 5 * time.Millisecond})
	chat(t, base, "warm up one", 7)
	c.Mark("warmup", true)
	chat(t, base, "warm up two", 5)
	c.Mark("warmup", false)

	c.Mark("profiling", true)
	var prompt, generated int
	for i := range 4 {
		u := chat(t, base, fmt.Sprintf("profiling request %d %s", i, words(i*10, 20+i)), 3+i)
		prompt += u.PromptTokens
		generated += u.CompletionTokens
		time.Sleep(6 * time.Millisecond) // let periodic scrapes land inside
	}
	c.Mark("profiling", false)
	chat(t, base, "after the phase", 9)
	r := c.Stop()

	require.Empty(t, r.Warnings)
	assert.Equal(t, "profiling", r.Span)
	require.Len(t, r.Phases, 2)
	assert.Greater(t, r.Endpoints[0].Scrapes, 5, "periodic scrapes ran")

	total := func(metric, phase string, labels ...string) float64 {
		return find(t, r, metric, phase, labels...).Stats["total"]
	}
	assert.Equal(t, float64(prompt), total("vllm:prompt_tokens_total", "profiling"))
	assert.Equal(t, float64(generated), total("vllm:generation_tokens_total", "profiling"))
	assert.Equal(t, float64(prompt), total("vllm:prefix_cache_queries_total", "profiling"))
	assert.Equal(t, 4.0, total("vllm:request_success_total", "profiling", "finished_reason=length"))
	ttft := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	assert.Equal(t, 4.0, ttft.Stats["count"])
	assert.Equal(t, "+Inf", ttft.Buckets[len(ttft.Buckets)-1].LE)
	assert.Equal(t, 4.0, ttft.Buckets[len(ttft.Buckets)-1].Count)
	assert.Equal(t, 1.0, find(t, r, "vllm:e2e_request_latency_seconds", "warmup").Stats["count"], "one warmup request inside its marks")

	s := find(t, r, "vllm:prompt_tokens_total", "profiling")
	assert.Equal(t, "Prompt tokens", s.Friendly)
	assert.Equal(t, "tokens", s.Unit)
	assert.Equal(t, "Number of prefill tokens processed.", s.Description)
	assert.Greater(t, s.Stats["rate"], 0.0)
	g := find(t, r, "vllm:num_requests_running", "profiling")
	assert.LessOrEqual(t, g.Stats["max"], 1.0, "one request at a time")
	assert.Equal(t, float64(countIn(r, 0, r.Phases[1])), g.Stats["count"], "a sample per scrape inside the phase")
}

// countIn counts endpoint ep's retained scrapes inside phase p.
func countIn(r Result, ep int, p Phase) int {
	n := 0
	for _, t := range r.timeline.endpoints[ep].times {
		if t >= p.BeginNs && t <= p.EndNs {
			n++
		}
	}
	return n
}
