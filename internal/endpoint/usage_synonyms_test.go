package endpoint

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestUsageCacheAndDetailSynonyms: a chat stream's usage gives the prompt
// cache's reads, writes and misses and the completion details under every
// vendor's name AIPerf reads, the first of the synonyms that is a count.
func TestUsageCacheAndDetailSynonyms(t *testing.T) {
	tests := []struct {
		name, usage string
		want        metrics.Usage
	}{
		{"openai", `{"prompt_tokens":100,"completion_tokens":6,"total_tokens":106,"prompt_tokens_details":{"cached_tokens":96},` +
			`"completion_tokens_details":{"reasoning_tokens":0,"accepted_prediction_tokens":3,"rejected_prediction_tokens":1}}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, TotalTokens: new(106), CachedTokens: ptr(96), ReasoningReported: true,
				AcceptedPredictionTokens: ptr(3), RejectedPredictionTokens: ptr(1)}},
		{"input_tokens_details", `{"prompt_tokens":100,"completion_tokens":6,"input_tokens_details":{"cached_tokens":32}}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, CachedTokens: ptr(32)}},
		{"deepseek", `{"prompt_tokens":100,"completion_tokens":6,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, CachedTokens: ptr(64), CacheMissTokens: ptr(36)}},
		{"anthropic names on chat", `{"prompt_tokens":100,"completion_tokens":6,"cache_read_input_tokens":48,"cache_creation_input_tokens":16}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, CachedTokens: ptr(48), CacheWriteTokens: ptr(16)}},
		{"nested before top-level", `{"prompt_tokens":100,"completion_tokens":6,"prompt_tokens_details":{"cached_tokens":80},"prompt_cache_hit_tokens":64}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, CachedTokens: ptr(80)}},
		{"a null nested count falls through", `{"prompt_tokens":100,"completion_tokens":6,"prompt_tokens_details":{"cached_tokens":null},"prompt_cache_hit_tokens":64}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6, CachedTokens: ptr(64)}},
		{"vLLM without details", `{"prompt_tokens":100,"completion_tokens":6,"prompt_tokens_details":null,"completion_tokens_details":null}`,
			metrics.Usage{PromptTokens: 100, CompletionTokens: 6}},
		{"counts beyond the prompt are dropped", `{"prompt_tokens":10,"completion_tokens":6,"prompt_cache_miss_tokens":11,"cache_creation_input_tokens":-2,` +
			`"completion_tokens_details":{"accepted_prediction_tokens":"x"}}`,
			metrics.Usage{PromptTokens: 10, CompletionTokens: 6}},
		{"a total that does not add up is dropped", `{"prompt_tokens":10,"completion_tokens":7,"total_tokens":3}`,
			metrics.Usage{PromptTokens: 10, CompletionTokens: 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, respond(chunked(200, "text/event-stream", tokA,
				`data: {"choices":[],"usage":`+tc.usage+"}\n\n", done)))
			res := newTestClient(t, Options{}).Do(context.Background(), chatReq(srv.url("/"), true))
			require.Nil(t, res.Err)
			require.NotNil(t, res.Usage)
			assert.Equal(t, tc.want, *res.Usage)
		})
	}
}

// TestAnthropicCacheUsage: the Messages API counts its cache reads and
// writes apart from input_tokens; the prompt tokens are the three together
// (AIPerf's disjoint accounting), streamed or not.
func TestAnthropicCacheUsage(t *testing.T) {
	want := metrics.Usage{PromptTokens: 100, CompletionTokens: 5, CachedTokens: ptr(64), CacheWriteTokens: ptr(16), Names: metrics.MessagesNames}
	body := `{"type":"message","content":[{"type":"text","text":"AB"}],` +
		`"usage":{"input_tokens":20,"cache_read_input_tokens":64,"cache_creation_input_tokens":16,"output_tokens":5}}`
	srv := newRawServer(t, respond(fixed(200, "application/json", body)))
	res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), plan.EndpointMessages, false))
	require.Nil(t, res.Err)
	require.NotNil(t, res.Usage)
	assert.Equal(t, want, *res.Usage)

	srv = newRawServer(t, respond(chunked(200, "text/event-stream",
		event("message_start", `{"type":"message_start","message":{"usage":{"input_tokens":20,"cache_read_input_tokens":64,`+
			`"cache_creation_input_tokens":16,"output_tokens":1}}}`),
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A"}}`),
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`),
		event("message_stop", `{"type":"message_stop"}`))))
	res = newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), plan.EndpointMessages, true))
	require.Nil(t, res.Err)
	require.NotNil(t, res.Usage)
	assert.Equal(t, want, *res.Usage, "the cache counts of message_start stay when message_delta adds the output")
}

// TestResponsesCacheUsage: the Responses API's input_tokens_details and
// output_tokens_details.
func TestResponsesCacheUsage(t *testing.T) {
	body := `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"AB"}]}],` +
		`"usage":{"input_tokens":40,"output_tokens":6,"total_tokens":46,"input_tokens_details":{"cached_tokens":32},` +
		`"output_tokens_details":{"reasoning_tokens":4}}}`
	srv := newRawServer(t, respond(fixed(200, "application/json", body)))
	res := newTestClient(t, Options{}).Do(context.Background(), apiReq(srv.url("/"), plan.EndpointResponses, false))
	require.Nil(t, res.Err)
	require.NotNil(t, res.Usage)
	assert.Equal(t, metrics.Usage{PromptTokens: 40, CompletionTokens: 6, TotalTokens: new(46), CachedTokens: ptr(32),
		ReasoningTokens: 4, ReasoningReported: true, Names: metrics.InputOutputNames}, *res.Usage)
}
