package mock

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/kvcache"
)

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"block size negative", Config{BlockSize: -1}, "--block-size must be between 1 and 4096 tokens, got -1"},
		{"block size huge", Config{BlockSize: maxBlockSize + 1}, "--block-size"},
		{"kv cache negative", Config{KVCacheTokens: -1}, "--kv-cache-tokens must be >= 0"},
		{"kv cache under a block", Config{BlockSize: 16, KVCacheTokens: 15}, "at least one block of --block-size 16"},
		{"kv cache too large", Config{BlockSize: 1, KVCacheTokens: kvcache.MaxBlocks + 1}, "--kv-cache-tokens must be at most 2097152"},
		{"max num seqs", Config{MaxNumSeqs: -2}, "--max-num-seqs must be >= 0"},
		{"no gpus", Config{GPUMetrics: true}, "--gpus must be between 1 and 64 with --gpu-metrics, got 0"},
		{"too many gpus", Config{GPUMetrics: true, GPUs: maxGPUs + 1}, "--gpus"},
		{"port", Config{Port: 70000}, "--port"},
		{"negative port", Config{Port: -1}, "--port"},
		{"ttft", Config{TTFT: -1}, "--ttft"},
		{"itl", Config{ITL: -0.5}, "--itl"},
		{"error rate high", Config{ErrorRate: 101}, "--error-rate"},
		{"error rate low", Config{ErrorRate: -1}, "--error-rate"},
		{"fail count negative", Config{AdminFailCount: -1}, "--admin-fail-count"},
		{"fail count without status", Config{AdminFailCount: 2}, "--admin-fail-status"},
		{"fail status without count", Config{AdminFailStatus: 503}, "--admin-fail-count"},
		{"fail status out of range", Config{AdminFailStatus: 99, AdminFailCount: 1}, "--admin-fail-status"},
		{"admin latency", Config{AdminLatencyMS: -3}, "--admin-latency-ms"},
		{"ttft NaN", Config{TTFT: math.NaN()}, "--ttft must be a finite number, got NaN"},
		{"itl Inf", Config{ITL: math.Inf(1)}, "--itl must be a finite number, got +Inf"},
		{"prefill NaN", Config{Prefill: math.NaN()}, "--prefill-us-per-token must be a finite number"},
		{"error rate NaN", Config{ErrorRate: math.NaN()}, "--error-rate must be a finite number"},
		{"admin latency Inf", Config{AdminLatencyMS: math.Inf(1)}, "--admin-latency-ms must be a finite number"},
		{"per-seq step negative", Config{ITLPerSeq: -1}, "--itl-concurrency-lin-ms must be between 0 and 3600000 ms (one hour), got -1"},
		{"per-seq step NaN", Config{ITLPerSeq: math.NaN()}, "--itl-concurrency-lin-ms must be a finite number"},
		{"per-osl step negative", Config{ITLPerOSL: -0.1}, "--itl-per-osl-token-ms must be between 0 and 3600000 ms (one hour), got -0.1"},
		{"per-osl step Inf", Config{ITLPerOSL: math.Inf(1)}, "--itl-per-osl-token-ms must be a finite number"},
		{"trial jitter negative", Config{TrialJitterCV: -0.1}, "--trial-jitter-cv must be between 0 and 10, got -0.1"},
		{"trial jitter huge", Config{TrialJitterCV: 11}, "--trial-jitter-cv must be between 0 and 10"},
		{"trial jitter NaN", Config{TrialJitterCV: math.NaN()}, "--trial-jitter-cv must be a finite number"},
		{"budget negative", Config{MaxBatchedTokens: -1}, "--max-num-batched-tokens must be >= 0 (0: no limit), got -1"},
		{"budget under max-num-seqs", Config{MaxBatchedTokens: 8, MaxNumSeqs: 16},
			"--max-num-batched-tokens (8) must be >= --max-num-seqs (16)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	s, err := New(Config{})
	require.NoError(t, err, "the zero Config is valid")
	assert.Equal(t, defaultBlockSize, s.blockSize)
	assert.ErrorContains(t, (&Config{}).Validate(), "--block-size", "a zero --block-size given as a flag is refused")
}

func TestListenAndServe(t *testing.T) {
	s, err := New(Config{Port: 0, Fast: true})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe(ctx, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)

	resp, err := http.Get("http://" + addr + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The port is taken while s serves: a second server fails clearly.
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	other, err := New(Config{Port: n})
	require.NoError(t, err)
	err = other.ListenAndServe(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "address already in use")

	cancel()
	select {
	case err := <-served:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
}

func TestShutdownLetsStreamsFinish(t *testing.T) {
	s, err := New(Config{TTFT: 1, ITL: 20})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe(ctx, func(addr string) { addrs <- addr }) }()
	addr := <-addrs
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":10,"stream":true}`))
	require.NoError(t, err)
	cancel()
	chunks := readSSE(t, resp.Body)
	resp.Body.Close()
	assert.Len(t, chunks, 11, "an in-flight stream completes during shutdown")
	require.NoError(t, <-served)
}

// BenchmarkFastStream measures streaming requests per second through the
// --fast handler over loopback (64 tokens per request, include_usage).
func BenchmarkFastStream(b *testing.B) {
	_, base := start(b, Config{Fast: true})
	body := `{"model":"m","messages":[{"role":"user","content":"hello"}],"max_tokens":64,"stream":true,"stream_options":{"include_usage":true}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "req/s")
	b.ReportMetric(float64(b.N)*(1+64+1)/secs, "chunks/s")
}

// TestShutdownSaysWhatItWaitsFor: a stop with a request in flight says
// what it waits for and, once the grace is over, how many it cut (it
// waited five seconds in silence, and cut streams were not reported).
func TestShutdownSaysWhatItWaitsFor(t *testing.T) {
	s, err := New(Config{TTFT: 1, ITL: 100}) // 2,000 tokens: 200 s, far past the grace
	require.NoError(t, err)
	var notes syncBuffer
	s.notes, s.grace = &notes, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe(ctx, func(addr string) { addrs <- addr }) }()
	resp, err := http.Post("http://"+<-addrs+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":2000,"stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = bufio.NewReader(resp.Body).ReadString('\n') // the role chunk: the request is in flight
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-served)
	assert.Equal(t, "aiperf-mock-server: stopping: waiting up to 50ms for 1 request in flight to finish, then cutting them\n"+
		"aiperf-mock-server: stopped: 1 request still in flight after 50ms cut\n", notes.String())
}
