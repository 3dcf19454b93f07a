package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer safe for the server and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, "--nope"},
		{"not a number", []string{"--ttft", "soon"}, "--ttft"},
		{"error rate range", []string{"--error-rate", "150"}, "--error-rate"},
		{"fault knob pair", []string{"--admin-fail-count", "2"}, "--admin-fail-status"},
		{"block size", []string{"--block-size", "0"}, "--block-size"},
		{"kv cache below a block", []string{"--kv-cache-tokens", "8"}, "--kv-cache-tokens"},
		{"negative max-num-seqs", []string{"--max-num-seqs", "-1"}, "--max-num-seqs"},
		{"gpus", []string{"--gpu-metrics", "--gpus", "0"}, "--gpus"},
		{"step budget under max-num-seqs", []string{"--max-num-seqs", "16", "--max-num-batched-tokens", "8"}, "--max-num-batched-tokens"},
		{"negative per-seq step", []string{"--itl-concurrency-lin-ms", "-1"}, "--itl-concurrency-lin-ms"},
		{"trial jitter range", []string{"--trial-jitter-cv", "20"}, "--trial-jitter-cv"},
		{"ttft overflow", []string{"--ttft", "1e308"}, "--ttft must be between 0 and 3600000 ms (one hour), got 1e+308"},
		{"ttft past an hour", []string{"--ttft", "9.3e12"}, "--ttft must be between 0 and 3600000 ms (one hour), got 9.3e+12"},
		{"prefill overflow", []string{"--prefill-us-per-token", "1e308"}, "--prefill-us-per-token must be between 0 and 3600000000 us (one hour)"},
		{"per-seq step overflow", []string{"--itl-concurrency-lin-ms", "1e308"}, "--itl-concurrency-lin-ms must be between 0 and 3600000 ms"},
		{"video frame overflow", []string{"--video-gen-ms-per-frame=1e308"}, "--video-gen-ms-per-frame must be between 0 and 3600000 ms"},
		{"admin latency overflow", []string{"--admin-latency-ms", "1e300"}, "--admin-latency-ms must be between 0 and 3600000 ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			assert.Equal(t, exitUsage, run(context.Background(), tc.args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.want)
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one clear line")
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr lockedBuffer
	assert.Equal(t, exitOK, run(context.Background(), []string{"--help"}, &stdout, &stderr))
	for _, flag := range []string{"--host", "--port", "--ttft", "--itl", "--fast", "--access-logs", "--api-key",
		"--error-rate", "--random-seed", "--admin-fail-status", "--admin-fail-count", "--admin-latency-ms",
		"--reset-success-false", "--model", "--block-size", "--kv-cache-tokens", "--max-num-seqs", "--gpu-metrics", "--gpus",
		"--itl-concurrency-lin-ms", "--itl-per-osl-token-ms", "--trial-jitter-cv", "--max-num-batched-tokens"} {
		assert.Contains(t, stdout.String(), flag)
	}
	// --max-model-len refuses a prompt of exactly the context, as vLLM
	// (internal/mock's TestMaxModelLen); the help said "longer than it".
	help := strings.Join(strings.Fields(stdout.String()), " ")
	assert.Contains(t, help, "a prompt that fills it (as many tokens or more), or a max_tokens past what it leaves, is refused with 400")
}

func TestServeAndShutdown(t *testing.T) {
	var stdout, stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--port", "0", "--fast", "--access-logs"}, &stdout, &stderr)
	}()
	listening := regexp.MustCompile(`^aiperf-mock-server listening on http://(127\.0\.0\.1:\d+)\n`)
	var base string
	require.Eventually(t, func() bool {
		m := listening.FindStringSubmatch(stderr.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	}, 30*time.Second, 10*time.Millisecond)

	// The o200k tokenizer counts the prompt: "hello world" is 2 tokens
	// (the approximation would say 3).
	resp, err := http.Post(base+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":"hello world","max_tokens":3}`))
	require.NoError(t, err)
	var reply struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reply))
	resp.Body.Close()
	assert.Equal(t, 2, reply.Usage.PromptTokens)
	assert.Equal(t, 3, reply.Usage.CompletionTokens)
	require.Eventually(t, func() bool {
		return strings.Contains(stderr.String(), "POST /v1/completions 200 ")
	}, 5*time.Second, 10*time.Millisecond, "access log line")

	// A second server on the same port fails with one clear line.
	port := base[strings.LastIndex(base, ":")+1:]
	var stderr2 lockedBuffer
	assert.Equal(t, exitFailure, run(context.Background(), []string{"--port", port}, &stdout, &stderr2))
	assert.Contains(t, stderr2.String(), "address already in use")
	assert.Equal(t, 1, strings.Count(stderr2.String(), "\n"))

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, exitInterrupted, code, "stopped as by a signal")
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop after cancel")
	}
	_, err = net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	assert.Error(t, err, "the port is released")
}
