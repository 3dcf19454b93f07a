package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkRecord is reasoningStream under --use-server-token-count and
// --per-chunk-usage: the server counted 8 output tokens, first chunks of
// them in the first content chunk (nil: no response carried both text
// and usage).
func chunkRecord(t *testing.T, first *int) Record {
	t.Helper()
	r := reasoningStream()
	r.Usage = &Usage{PromptTokens: 100, CompletionTokens: 8, TotalTokens: new(108), FirstChunkTokens: first}
	require.True(t, TakeServerCounts(&r))
	return r
}

// TestChunkUsageITL: AIPerf's inter_token_latency under --per-chunk-usage
// is (latency − TTFT) / (OSL − the first content chunk's server count);
// the per-user throughput (1 / ITL) follows, nothing else changes (the
// full-response ITL keeps OSL − 1). A count that is missing, not positive,
// leaves no token after the first chunk, or comes with untrusted usage
// divides by OSL − 1, as without the flag.
func TestChunkUsageITL(t *testing.T) {
	const decodeMs = 52.0 - 40 // latency − TTFT of reasoningStream
	base, _, _ := values(RecordMetrics(chunkRecord(t, nil), true))
	require.InDelta(t, decodeMs/7, base[TagITL], 1e-9, "OSL 8: (latency − TTFT) / (8 − 1)")

	got, _, _ := values(RecordMetrics(chunkRecord(t, new(3)), true))
	assert.InDelta(t, decodeMs/5, got[TagITL], 1e-9, "(latency − TTFT) / (8 − 3)")
	assert.InDelta(t, 1e3/(decodeMs/5), got[TagPerUserThroughput], 1e-9, "1 / ITL")
	for tag, v := range base {
		if tag != TagITL && tag != TagPerUserThroughput {
			assert.Equal(t, v, got[tag], "%s does not change", tag)
		}
	}
	r := chunkRecord(t, new(3))
	tt := Times(&r, true)
	assert.InDelta(t, decodeMs/5*1e6, tt.ITLNs, 1e-3, "live views read the same ITL")

	r = chunkRecord(t, new(7))
	assert.Equal(t, 1, DecodeTokens(&r, 8), "one token after a first chunk of 7")

	for name, n := range map[string]int{"zero": 0, "negative": -2, "the whole reply": 8, "beyond it": 9} {
		r := chunkRecord(t, new(n))
		assert.Equal(t, 7, DecodeTokens(&r, 8), name)
		got, _, _ := values(RecordMetrics(r, true))
		assert.InDelta(t, decodeMs/7, got[TagITL], 1e-9, name)
	}
	r = chunkRecord(t, new(3))
	r.Usage.Untrusted = "completion_tokens 8 is implausible"
	assert.Equal(t, 3, DecodeTokens(&r, 4), "untrusted usage: the OSL (the client's) less 1")
	r.Usage = nil
	assert.Equal(t, 3, DecodeTokens(&r, 4))
}

// TestChunkUsageWarning: the warning counts the requests with an ITL whose
// first content chunk count could not divide it, says why for the first,
// and names --per-chunk-usage; failed requests and requests without an ITL
// are not counted; "" when every count was used.
func TestChunkUsageWarning(t *testing.T) {
	good := chunkRecord(t, new(3))
	assert.Empty(t, ChunkUsageWarning([]Record{good, good}, true))
	assert.Empty(t, ChunkUsageWarning(nil, true))

	missing, whole := chunkRecord(t, nil), chunkRecord(t, new(8))
	missing.Index, whole.Index = 1, 2
	failed := chunkRecord(t, nil)
	failed.Error = &Error{Type: "HTTPError"}
	oneToken := chunkRecord(t, nil)
	oneToken.OutputTokens, oneToken.ReasoningTokens = 1, 0
	w := ChunkUsageWarning([]Record{good, missing, whole, failed, oneToken}, true)
	assert.Contains(t, w, "--per-chunk-usage: the inter_token_latency of 2 of 3 requests divides by OSL - 1")
	assert.Contains(t, w, "request 1: no response carried both generated text and usage")
	assert.Contains(t, w, "stream_options.continuous_usage_stats")

	assert.Contains(t, ChunkUsageWarning([]Record{whole}, true), "request 2: 8 tokens in the first content chunk of a 8-token reply")
	noUsage := reasoningStream()
	assert.Contains(t, ChunkUsageWarning([]Record{noUsage}, true), "the reply had no usage")
	untrusted := chunkRecord(t, new(3))
	untrusted.Usage.Untrusted = "prompt_tokens is 0"
	assert.Contains(t, ChunkUsageWarning([]Record{untrusted}, true), "its usage is not trusted: prompt_tokens is 0")
	assert.Empty(t, ChunkUsageWarning([]Record{missing}, false), "not streamed: no ITL")
}
