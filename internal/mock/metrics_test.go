package mock

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetricsExposition(t *testing.T) {
	s, base := start(t, Config{Fast: true, Model: `served "model"`, BlockSize: 2, EncodeTokens: wordIDs})
	// A mix of routes and shapes, repeated prompts among them; the sums of
	// what the replies said are what /metrics must report.
	var prompt, completion, cached, hitRequests, stops, lengths int
	add := func(u *wireUsage, finish string) {
		prompt += u.PromptTokens
		completion += u.CompletionTokens
		c := *u.PromptDetails.CachedTokens
		cached += c
		if c > 0 {
			hitRequests++
		}
		if finish == "stop" {
			stops++
		} else {
			lengths++
		}
	}
	for i := range 3 {
		for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
			for _, stream := range []bool{false, true} {
				r := ask(t, base, path, stream, "one two three four five six seven")
				require.NotNil(t, r.cached)
				var u wireUsage
				if stream {
					chunks := readSSE(t, strings.NewReader(r.raw))
					u = *chunks[len(chunks)-1].Usage
				} else {
					var c wireChunk
					require.NoError(t, json.Unmarshal([]byte(r.raw), &c))
					u = *c.Usage
				}
				add(&u, "length")
			}
		}
		c := askBody(t, base+"/v1/chat/completions", map[string]any{"model": "Qwen3", // no max_tokens: finish "stop"
			"messages": []map[string]any{{"role": "user", "content": strings.Repeat("w ", 5+i)}}})
		add(c.Usage, *c.Choices[0].FinishReason)
	}
	requests := stops + lengths
	require.Positive(t, cached)
	require.Positive(t, stops)

	fams := scrape(t, base+"/metrics")
	for name, f := range fams {
		assert.True(t, strings.HasPrefix(name, "vllm:"), name)
		for _, m := range f.GetMetric() {
			l := labels(m)
			assert.Equal(t, `served "model"`, l["model_name"], name)
			assert.Equal(t, "0", l["engine"], name)
		}
	}
	for name, typ := range map[string]dto.MetricType{
		"vllm:num_requests_running": dto.MetricType_GAUGE, "vllm:num_requests_waiting": dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc": dto.MetricType_GAUGE, "vllm:prefix_cache_queries_total": dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total": dto.MetricType_COUNTER, "vllm:prompt_tokens_total": dto.MetricType_COUNTER,
		"vllm:generation_tokens_total": dto.MetricType_COUNTER, "vllm:num_preemptions_total": dto.MetricType_COUNTER,
		"vllm:request_success_total": dto.MetricType_COUNTER,
	} {
		require.Contains(t, fams, name)
		assert.Equal(t, typ, fams[name].GetType(), name)
	}
	assert.Zero(t, single(t, fams, "vllm:num_requests_running"), "all done")
	assert.Zero(t, single(t, fams, "vllm:num_requests_waiting"))
	assert.Zero(t, single(t, fams, "vllm:kv_cache_usage_perc"), "no running request holds a block")
	assert.Zero(t, single(t, fams, "vllm:num_preemptions_total"))
	assert.Equal(t, float64(prompt), single(t, fams, "vllm:prompt_tokens_total"), "the usage's prompt tokens")
	assert.Equal(t, float64(completion), single(t, fams, "vllm:generation_tokens_total"))
	assert.Equal(t, float64(prompt), single(t, fams, "vllm:prefix_cache_queries_total"), "in tokens")
	assert.Equal(t, float64(cached), single(t, fams, "vllm:prefix_cache_hits_total"), "the usage's cached tokens")
	assert.Equal(t, hitRequests, s.Control().CacheHits, "/mock/control counts the same hits in requests")

	success := map[string]float64{}
	for _, m := range fams["vllm:request_success_total"].GetMetric() {
		success[labels(m)["finished_reason"]] = m.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{"stop": float64(stops), "length": float64(lengths), "abort": 0}, success)

	for name, bounds := range map[string][]float64{
		"vllm:time_to_first_token_seconds": ttftBuckets, "vllm:inter_token_latency_seconds": itlBuckets,
		"vllm:e2e_request_latency_seconds": requestLatencyBuckets, "vllm:request_queue_time_seconds": requestLatencyBuckets,
	} {
		h := hist(t, fams, name)
		var les []float64
		for _, b := range h.GetBucket() {
			les = append(les, b.GetUpperBound())
		}
		assert.Equal(t, append(slices.Clone(bounds), math.Inf(1)), les, "%s has vLLM's bucket edges", name)
		assert.True(t, slices.IsSortedFunc(h.GetBucket(), func(x, y *dto.Bucket) int {
			return cmp.Compare(x.GetCumulativeCount(), y.GetCumulativeCount())
		}), "%s: cumulative", name)
		if name != "vllm:inter_token_latency_seconds" {
			assert.Equal(t, uint64(requests), h.GetSampleCount(), "%s: one observation per request", name)
		}
	}
	assert.Equal(t, uint64(completion-requests), hist(t, fams, "vllm:inter_token_latency_seconds").GetSampleCount(),
		"one inter-token gap per token after the first")

	// The text is what vLLM's Python client writes.
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	raw := readAll(t, resp)
	assert.Contains(t, raw, "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\n")
	assert.Contains(t, raw, `vllm:time_to_first_token_seconds_bucket{model_name="served \"model\"",engine="0",le="2560.0"} `)
	assert.Contains(t, raw, `vllm:time_to_first_token_seconds_bucket{model_name="served \"model\"",engine="0",le="+Inf"} `+pyFloat(float64(requests)))
}

// The server's TTFT histogram records what it did: every time to first token
// it measured is at most what the client saw for that request (the server
// starts later and writes before the client reads), so its median bucket is
// the client's median's or below, and no earlier than its own 150 ms.
func TestTTFTHistogramAgreesWithClient(t *testing.T) {
	_, base := start(t, Config{TTFT: 150, ITL: 2})
	const n = 9
	var client []float64
	for range n {
		began := time.Now()
		resp := post(t, base+"/v1/chat/completions", chatBody("m", 3, true, false))
		rd := bufio.NewReader(resp.Body)
		for {
			line, err := rd.ReadString('\n')
			require.NoError(t, err)
			if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) {
				break
			}
		}
		client = append(client, time.Since(began).Seconds())
		readAll(t, resp)
	}
	h := hist(t, scrape(t, base+"/metrics"), "vllm:time_to_first_token_seconds")
	require.Equal(t, uint64(n), h.GetSampleCount())
	var sum float64
	for _, c := range client {
		sum += c
	}
	assert.LessOrEqual(t, h.GetSampleSum(), sum)
	sort.Float64s(client)
	clientBucket := sort.SearchFloat64s(ttftBuckets, client[n/2])
	serverBucket := 0
	for i, b := range h.GetBucket() {
		if b.GetCumulativeCount() >= (n+1)/2 {
			serverBucket = i
			break
		}
	}
	assert.LessOrEqual(t, serverBucket, clientBucket, "client p50 %.4fs in bucket %d, server p50 in bucket %d", client[n/2], clientBucket, serverBucket)
	assert.GreaterOrEqual(t, serverBucket, sort.SearchFloat64s(ttftBuckets, 0.15), "never before the mock's 150 ms")
}

// With --max-num-seqs, requests beyond the limit wait in arrival order; the
// wait counts in their time to first token.
func TestMaxNumSeqsQueues(t *testing.T) {
	s, base := start(t, Config{TTFT: 0, ITL: 10, MaxNumSeqs: 1, BlockSize: 4})
	gauges := func() (running, waiting, kv float64) {
		f := scrape(t, base+"/metrics")
		return single(t, f, "vllm:num_requests_running"), single(t, f, "vllm:num_requests_waiting"), single(t, f, "vllm:kv_cache_usage_perc")
	}
	cancel := runningStream(t, base) // a

	type outcome struct {
		name  string
		first time.Time // the first token's chunk was read
	}
	done := make(chan outcome, 2)
	send := func(name string) { // b on chat, c on completions, to tell them apart in the event log
		path, body := "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`
		if name == "c" {
			path, body = "/v1/completions", `{"prompt":"hi","max_tokens":2,"stream":true}`
		}
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if !assert.NoError(t, err) {
			done <- outcome{name: name}
			return
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		var first time.Time
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			if first.IsZero() && (strings.Contains(line, `"content":" `) || strings.Contains(line, `"text":" `)) {
				first = time.Now()
			}
		}
		done <- outcome{name, first}
	}
	go send("b")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		running, waiting, kv := gauges()
		assert.Equal(c, 1.0, running)
		assert.Equal(c, 1.0, waiting)
		assert.Positive(c, kv, "a holds KV-cache blocks")
	}, 10*time.Second, 5*time.Millisecond)
	go send("c")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, waiting, _ := gauges()
		assert.Equal(c, 2.0, waiting)
	}, 10*time.Second, 5*time.Millisecond)

	cut := time.Now()
	cancel() // a goes away: b, then c, get the slot
	for range 2 {
		o := <-done
		require.False(t, o.first.IsZero(), o.name)
		assert.True(t, o.first.After(cut), "%s's first token came after a left", o.name)
	}
	var ends []string
	for _, e := range s.Control().Events {
		if e.Kind == EventRequestEnd && e.Status == http.StatusOK {
			ends = append(ends, e.Path)
		}
	}
	assert.Equal(t, []string{"/v1/chat/completions", "/v1/completions"}, ends, "first in, first out: b, then c")

	fams := scrape(t, base+"/metrics")
	queue, ttft := hist(t, fams, "vllm:request_queue_time_seconds"), hist(t, fams, "vllm:time_to_first_token_seconds")
	assert.Equal(t, uint64(3), queue.GetSampleCount())
	assert.Equal(t, uint64(3), ttft.GetSampleCount())
	assert.GreaterOrEqual(t, ttft.GetSampleSum(), queue.GetSampleSum(), "each time to first token includes its wait")
	success := map[string]float64{}
	for _, m := range fams["vllm:request_success_total"].GetMetric() {
		success[labels(m)["finished_reason"]] = m.GetCounter().GetValue()
	}
	assert.Equal(t, 1.0, success["abort"], "a")
	assert.Equal(t, 2.0, success["length"], "b and c")
	running, waiting, kv := gauges()
	assert.Zero(t, running+waiting+kv)
	assert.Equal(t, 3, s.Control().InferenceRequests)
}

func TestSchedulerCancelWhileWaiting(t *testing.T) {
	q := &scheduler{limit: 1}
	ok, waited := q.acquire(context.Background())
	require.True(t, ok)
	assert.False(t, waited, "a free slot is taken at once")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool)
	go func() { ok, _ := q.acquire(ctx); got <- ok }()
	require.Eventually(t, func() bool { _, w := q.counts(); return w == 1 }, 5*time.Second, time.Millisecond)
	cancel()
	assert.False(t, <-got)
	running, waiting := q.counts()
	assert.Equal(t, 1, running)
	assert.Zero(t, waiting, "a cancelled waiter leaves the queue")
	q.release()
	running, _ = q.counts()
	assert.Zero(t, running)
	ok, waited = q.acquire(context.Background())
	assert.True(t, ok, "the slot is free again")
	assert.False(t, waited)
}

func TestGPUMetrics(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		_, base := start(t, Config{Fast: true})
		resp, err := http.Get(base + "/dcgm/metrics")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
	_, base := start(t, Config{TTFT: 0, ITL: 10, MaxNumSeqs: 2, GPUMetrics: true, GPUs: 2})
	read := func() map[string][]float64 {
		fams := scrape(t, base+"/dcgm/metrics")
		out := map[string][]float64{}
		for name, f := range fams {
			typ := dto.MetricType_GAUGE
			if name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" {
				typ = dto.MetricType_COUNTER
			}
			assert.Equal(t, typ, f.GetType(), name)
			require.Len(t, f.GetMetric(), 2, "%s: one series per GPU", name)
			for i, m := range f.GetMetric() {
				l := labels(m)
				assert.Equal(t, []string{"DCGM_FI_DRIVER_VERSION", "Hostname", "UUID", "device", "gpu", "modelName", "pci_bus_id"},
					sortedKeys(l), name)
				assert.Equal(t, string(rune('0'+i)), l["gpu"])
				assert.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, l["UUID"])
				out[name] = append(out[name], m.GetGauge().GetValue()+m.GetCounter().GetValue())
			}
		}
		return out
	}
	idle := read()
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
		"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP"} {
		require.Contains(t, idle, name)
	}
	assert.Equal(t, []float64{0, 0}, idle["DCGM_FI_DEV_GPU_UTIL"])

	cancel := runningStream(t, base)
	busy := read()
	assert.Equal(t, []float64{50, 50}, busy["DCGM_FI_DEV_GPU_UTIL"], "1 running of --max-num-seqs 2")
	for _, name := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP"} {
		assert.Greater(t, busy[name][0], idle[name][0], "%s follows the load", name)
	}
	assert.Equal(t, idle["DCGM_FI_DEV_FB_USED"], busy["DCGM_FI_DEV_FB_USED"], "memory is preallocated")
	energy := "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	assert.Greater(t, busy[energy][0], idle[energy][0], "the energy counter grows by the power drawn since the last read")
	assert.Equal(t, busy[energy][0], busy[energy][1], "every GPU draws alike")
	cancel()
	require.Eventually(t, func() bool { return read()["DCGM_FI_DEV_GPU_UTIL"][0] == 0 }, 5*time.Second, 5*time.Millisecond)
}

// runningStream starts a chat stream of 1,000 tokens (10 s at --itl 10),
// returns once its first chunk is read (it is running), and returns a
// function that makes the client go away.
func runningStream(t *testing.T, base string) (cancel func()) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	body, _ := json.Marshal(chatBody("m", 1000, true, false))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(string(body)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	cancel = func() {
		stop()
		resp.Body.Close()
	}
	t.Cleanup(cancel)
	return cancel
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A request gives its generation slot back when its last token has gone
// out (streaming) or is due (non-streaming), before the reply's closing
// bytes: a client that sends its next request the moment it has read the
// usage chunk (or the whole reply) finds the slot free, so a closed loop of
// --max-num-seqs clients never waits for its own slot (docs/mock.md: "just
// after t_{N−1}").
func TestSlotFreedBeforeTheReplyEnds(t *testing.T) {
	s, base := start(t, Config{TTFT: 0, ITL: 1, MaxNumSeqs: 1})
	resp := post(t, base+"/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}},
		"max_tokens": 3, "stream": true, "stream_options": map[string]any{"include_usage": true}})
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "the stream ended before its usage chunk")
		if strings.Contains(line, `"usage":{`) {
			break
		}
	}
	running, _ := s.sched.counts()
	assert.Zero(t, running, "the slot is free once the usage chunk is out, before [DONE]")

	whole := post(t, base+"/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}},
		"max_tokens": 3})
	readAll(t, whole)
	running, _ = s.sched.counts()
	assert.Zero(t, running, "and once a non-streaming reply is read")
}
