package servermetrics

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// Counter deltas cover exactly the phase: what the mock counted for the
// requests sent between the marks, not the warmup before nor the request
// after; periodic scrapes in between change nothing.
func TestPhaseDeltasAreWhatTheMockDid(t *testing.T) {
	srv, err := mock.New(mock.Config{Fast: true})
	require.NoError(t, err)
	var scrapes atomic.Int64 // served by the mock
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.Handler().ServeHTTP(w, r)
		if r.URL.Path == "/metrics" {
			scrapes.Add(1)
		}
	}))
	t.Cleanup(ts.Close)
	base := ts.URL
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
		seen := scrapes.Load()
		require.Eventually(t, func() bool { return scrapes.Load() > seen }, time.Minute, time.Millisecond,
			"a periodic scrape lands inside the phase") // a hang guard: the next one is 5 ms away
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
	assert.Equal(t, float64(prompt), total("vllm:prompt_tokens", "profiling"))
	assert.Equal(t, float64(generated), total("vllm:generation_tokens", "profiling"))
	assert.Equal(t, float64(prompt), total("vllm:prefix_cache_queries", "profiling"))
	assert.Equal(t, 4.0, total("vllm:request_success", "profiling", "finished_reason=length"))
	ttft := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	assert.Equal(t, 4.0, ttft.Stats["count"])
	assert.Equal(t, "+Inf", ttft.Buckets[len(ttft.Buckets)-1].LE)
	assert.Equal(t, 4.0, ttft.Buckets[len(ttft.Buckets)-1].Count)
	assert.Equal(t, 1.0, find(t, r, "vllm:e2e_request_latency_seconds", "warmup").Stats["count"], "one warmup request inside its marks")

	s := find(t, r, "vllm:prompt_tokens", "profiling")
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

// The server's TTFT p50, estimated from the scraped histogram over the
// phase, lies in the bucket of the mock's TTFT or above it, and not above
// the client's TTFT p50 at concurrency 1 (the server's TTFT is inside the
// client's): bounds a busy machine cannot break.
func TestServerTTFTFromTheHistogramMatchesTheClient(t *testing.T) {
	base := startMock(t, mock.Config{TTFT: 150, ITL: 2})
	c := collect(t, Options{Endpoints: []Target{server(base)}, Interval: 50 * time.Millisecond})
	streamTTFT(t, base) // warmup: outside the phase
	c.Mark("profiling", true)
	var client []float64
	for range 7 {
		client = append(client, streamTTFT(t, base))
	}
	c.Mark("profiling", false)
	r := c.Stop()

	h := find(t, r, "vllm:time_to_first_token_seconds", "profiling")
	require.Equal(t, 7.0, h.Stats["count"], "the warmup request is not in the phase")
	slices.Sort(client)
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0}
	bucket := func(v float64) int { i, _ := slices.BinarySearch(bounds, v); return i }
	p50 := h.Stats["p50_estimate"]
	assert.GreaterOrEqual(t, bucket(p50), bucket(0.150), "server p50 %.4fs, the mock's TTFT 150 ms", p50)
	assert.LessOrEqual(t, bucket(p50), bucket(client[3]), "client p50 %.4fs, server p50 %.4fs", client[3], p50)
	assert.LessOrEqual(t, h.Stats["avg"], stats.Mean(client), "the server starts later and writes before the client reads")
}

// streamTTFT sends one streaming chat request and returns the seconds
// until the first content chunk was read.
func streamTTFT(t testing.TB, base string) float64 {
	t.Helper()
	began := time.Now()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"m","max_tokens":3,"stream":true,"messages":[{"role":"user","content":"hello there"}]}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	var ttft float64
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if ttft == 0 && strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
			ttft = time.Since(began).Seconds()
		}
	}
	require.Positive(t, ttft)
	return ttft
}

// Stop while marks and periodic scrapes are in flight: it waits for them,
// later marks do nothing, and every call returns the same result.
func TestStopDuringMarks(t *testing.T) {
	base := startMock(t, mock.Config{Fast: true})
	c := collect(t, Options{Endpoints: []Target{server(base)}, Interval: time.Millisecond})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			c.Mark(fmt.Sprint("p", i), true)
			c.Mark(fmt.Sprint("p", i), false)
			select {
			case <-t.Context().Done():
				return
			default:
			}
			if i > 3 && c.stopped() {
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	r := c.Stop()
	<-done
	c.Mark("late", true)
	again := c.Stop()
	assert.Equal(t, len(r.Phases), len(again.Phases))
	assert.Equal(t, r.Series, again.Series)
	for _, p := range r.Phases {
		assert.NotEqual(t, "late", p.Name)
		assert.GreaterOrEqual(t, p.EndNs, p.BeginNs)
	}
}

// A warmup phase between two profiling phases is inside the profiling span,
// which reaches from the first to the last: the span's totals hold its
// requests, so the result says so, while each profiling phase's own figures
// leave them out.
func TestWarmupInsideTheSpanIsSaid(t *testing.T) {
	base := startMock(t, mock.Config{Fast: true})
	c := collect(t, Options{Endpoints: []Target{server(base)}, Warmup: []string{"w2"}})
	for _, ph := range []struct {
		name     string
		requests int
	}{{"p1", 2}, {"w2", 3}, {"p3", 1}} {
		c.Mark(ph.name, true)
		for i := range ph.requests {
			chat(t, base, fmt.Sprintf("%s %d", ph.name, i), 2)
		}
		c.Mark(ph.name, false)
	}
	r := c.Stop()

	assert.Equal(t, PhaseSpan, r.Span)
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "from phase p1 to phase p3, holds w2, which is not profiling")
	count := func(phase string) float64 {
		return find(t, r, "vllm:e2e_request_latency_seconds", phase).Stats["count"]
	}
	assert.Equal(t, 2.0, count("p1"))
	assert.Equal(t, 1.0, count("p3"))
	assert.Equal(t, 6.0, count(PhaseSpan), "the span's totals hold w2's 3 requests")
}
