package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// firstChunk is the tokens the mock bundles into each reply's first
// content chunk (--first-chunk-tokens) in these tests; chunkOSL the
// replies' length.
const (
	firstChunk = 3
	chunkOSL   = 8
)

// chunkProfile runs a streamed chat profile of 6 requests of chunkOSL
// tokens against url, with the server's counts, raw exports and extra
// flags, into dir/out.
func chunkProfile(t *testing.T, dir, url string, extra ...string) invocation {
	t.Helper()
	args := append([]string{"profile", "-m", "mock-model", "-u", url, "--streaming", "--ui", "none",
		"--endpoint-type", "chat", "--isl", "16", "--osl", "8", "--num-dataset-entries", "3", "--request-count", "6",
		"--use-server-token-count", "--export-level", "raw", "--artifact-dir", "out"}, extra...)
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	return inv
}

// streamOptionsSent is every request's stream_options, as
// profile_export_raw.jsonl holds the payload sent.
func streamOptionsSent(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_raw.jsonl"))
	require.NoError(t, err)
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var line struct {
			Payload struct {
				StreamOptions map[string]any `json:"stream_options"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &line))
		out = append(out, line.Payload.StreamOptions)
	}
	return out
}

// assertITLDivisor checks every record of dir's profile_export.jsonl:
// its inter_token_latency is (request_latency − time_to_first_token) /
// (output_sequence_length − less), from the record's own figures, and its
// output_token_throughput_per_user is 1 / ITL.
func assertITLDivisor(t *testing.T, dir string, less int) {
	t.Helper()
	lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 6)
	for i, m := range lines {
		osl := m[metrics.TagOSL]
		require.Equal(t, float64(chunkOSL), osl, "record %d: the server's count", i)
		// A loaded machine may deliver a whole reply in one read (an ITL of
		// 0, no per-user throughput): the divisor is checked all the same.
		want := (m[metrics.TagRequestLatency] - m[metrics.TagTTFT]) / (osl - float64(less))
		assert.InDelta(t, want, m[metrics.TagITL], 1e-6*max(1, want), "record %d: (latency − TTFT) / (OSL − %d)", i, less)
		if itl := m[metrics.TagITL]; itl > 0 {
			assert.InEpsilon(t, 1e3/itl, m[metrics.TagPerUserThroughput], 1e-6, "record %d: 1 / ITL", i)
		}
	}
}

// TestPerChunkUsage: against a server that bundles its first tokens into
// one chunk, --per-chunk-usage asks every request for usage on every
// chunk (stream_options.continuous_usage_stats, in the raw payloads) and
// divides each record's inter_token_latency by the tokens after that
// first chunk, OSL − 3, where without it the divisor is OSL − 1. An
// author's stream_options value wins (AIPerf's setdefault): the server
// then reports no per-chunk usage, the ITL falls back to OSL − 1 and the
// run's warning names the flag.
func TestPerChunkUsage(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1, FirstChunkTokens: firstChunk})

	dir := t.TempDir()
	inv := chunkProfile(t, dir, m.URL, "--per-chunk-usage")
	for _, so := range streamOptionsSent(t, dir) {
		assert.Equal(t, map[string]any{"include_usage": true, "continuous_usage_stats": true}, so)
	}
	assertITLDivisor(t, dir, firstChunk)
	assert.NotContains(t, inv.stdout, "--per-chunk-usage:", "no warning: every first chunk's count was used")

	dir = t.TempDir()
	chunkProfile(t, dir, m.URL)
	for _, so := range streamOptionsSent(t, dir) {
		assert.Equal(t, map[string]any{"include_usage": true}, so, "without the flag")
	}
	assertITLDivisor(t, dir, 1)

	dir = t.TempDir()
	inv = chunkProfile(t, dir, m.URL, "--per-chunk-usage",
		"--extra-inputs", `{"stream_options": {"continuous_usage_stats": false}}`)
	for _, so := range streamOptionsSent(t, dir) {
		assert.Equal(t, map[string]any{"include_usage": true, "continuous_usage_stats": false}, so, "the author's value wins")
	}
	assertITLDivisor(t, dir, 1)
	// The run's warnings: on the console summary (and on stderr with a
	// progress UI or --verbose).
	assert.Contains(t, inv.stdout, "Warning: --per-chunk-usage: the inter_token_latency of 6 of 6 requests divides by OSL - 1")
	assert.Contains(t, inv.stdout, "(the first, request 0: no response carried both generated text and usage)")
}

// TestPerChunkUsageRefused: without what it needs, --per-chunk-usage is
// refused before any traffic, with exit 2 and every requirement named.
func TestPerChunkUsageRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, "", "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--endpoint-type", "completions",
		"--request-count", "2", "--per-chunk-usage")
	require.Equal(t, ExitUsage, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	for _, w := range []string{"--per-chunk-usage requires --use-server-token-count", "--per-chunk-usage requires --streaming",
		"--per-chunk-usage requires endpoint type 'chat', not --endpoint-type completions"} {
		assert.Contains(t, inv.stderr, w)
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}
