package mock

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// continuousBody is a streamed chat request asking, as vLLM takes it, for
// usage on every chunk.
func continuousBody(model string, maxTokens int, includeUsage bool) map[string]any {
	b := chatBody(model, maxTokens, true, includeUsage)
	b["stream_options"] = map[string]any{"include_usage": includeUsage, "continuous_usage_stats": true}
	return b
}

// TestContinuousUsageStats: with stream_options.continuous_usage_stats
// (and include_usage) every chunk carries the cumulative usage as vLLM's
// do: the role chunk 0 completion tokens, each content chunk the tokens
// sent so far, then the final usage chunk; without include_usage, or
// without the option, no chunk but the final one carries usage.
func TestContinuousUsageStats(t *testing.T) {
	_, base := start(t, Config{Fast: true, CountTokens: func(s string) int { return len(strings.Fields(s)) }})
	const n, prompt = 5, 6
	chunks := readSSE(t, post(t, base+"/v1/chat/completions", continuousBody("mock-model", n, true)).Body)
	require.Len(t, chunks, 1+n+1, "role, one chunk a token, usage")
	for i, c := range chunks[:1+n] {
		require.NotNil(t, c.Usage, "chunk %d carries usage", i)
		assert.Equal(t, wireUsage{PromptTokens: prompt, CompletionTokens: i, TotalTokens: prompt + i}, *c.Usage, "chunk %d", i)
	}
	final := chunks[n+1]
	assert.Empty(t, final.Choices)
	assert.Equal(t, n, final.Usage.CompletionTokens)
	assert.Equal(t, prompt+n, final.Usage.TotalTokens)

	for name, body := range map[string]map[string]any{
		"without include_usage": continuousBody("mock-model", n, false),
		"without the option":    chatBody("mock-model", n, true, true),
	} {
		chunks := readSSE(t, post(t, base+"/v1/chat/completions", body).Body)
		for i, c := range chunks {
			if len(c.Choices) > 0 {
				assert.Nil(t, c.Usage, "%s: chunk %d", name, i)
			}
		}
	}
}

// TestFirstChunkTokens: --first-chunk-tokens K bundles the first K output
// tokens into the first content chunk (its usage counting K), every later
// chunk carries one; the reply's text and usage are the same as without
// it. A reasoning reply bundles at most its reasoning tokens, a reply
// shorter than K is one chunk, and the other APIs' wires are unchanged.
func TestFirstChunkTokens(t *testing.T) {
	_, base := start(t, Config{Fast: true, FirstChunkTokens: 3})
	const n = 8
	chunks := readSSE(t, post(t, base+"/v1/chat/completions", continuousBody("mock-model", n, true)).Body)
	require.Len(t, chunks, 1+(n-3+1)+1, "role, a chunk of 3, then one a token, usage")
	first := chunks[1]
	assert.Equal(t, word(0)+word(1)+word(2), *first.Choices[0].Delta.Content)
	assert.Equal(t, 3, first.Usage.CompletionTokens)
	var text strings.Builder
	for i, c := range chunks[1 : len(chunks)-1] {
		text.WriteString(*c.Choices[0].Delta.Content)
		assert.Equal(t, 3+i, c.Usage.CompletionTokens, "cumulative")
	}
	var whole strings.Builder
	for k := range n {
		whole.WriteString(word(k))
	}
	assert.Equal(t, whole.String(), text.String())
	assert.Equal(t, "length", *chunks[len(chunks)-2].Choices[0].FinishReason)
	assert.Equal(t, n, chunks[len(chunks)-1].Usage.CompletionTokens)

	// Completions bundle too, without usage on the chunks unless asked.
	resp := post(t, base+"/v1/completions", map[string]any{"model": "m", "prompt": "hi there", "max_tokens": n, "stream": true})
	comp := readSSE(t, resp.Body)
	require.Len(t, comp, n-3+1)
	assert.Equal(t, word(0)+word(1)+word(2), *comp[0].Choices[0].Text)
	assert.Nil(t, comp[0].Usage)

	short := readSSE(t, post(t, base+"/v1/chat/completions", continuousBody("mock-model", 2, true)).Body)
	require.Len(t, short, 1+1+1, "a reply of 2 tokens is one chunk")
	assert.Equal(t, 2, short[1].Usage.CompletionTokens)
	assert.Equal(t, "length", *short[1].Choices[0].FinishReason)

	// Qwen answers 12 tokens, 3 of them reasoning: the bundle stays reasoning.
	qwen := readSSE(t, post(t, base+"/v1/chat/completions", continuousBody("Qwen/Qwen3-8B", 12, true)).Body)
	require.Len(t, qwen, 1+(12-3+1)+1)
	assert.Equal(t, word(0)+word(1)+word(2), *qwen[1].Choices[0].Delta.ReasoningContent)
	assert.Nil(t, qwen[1].Choices[0].Delta.Content)
	assert.Equal(t, word(3), *qwen[2].Choices[0].Delta.Content)

	// The Responses API's wire carries a token per event, as without the flag.
	resp = post(t, base+"/v1/responses", map[string]any{"model": "m", "input": "hi there", "max_output_tokens": n, "stream": true})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, n, strings.Count(readAll(t, resp), "event: response.output_text.delta"))
}

// TestFirstChunkTokensFlag: the flag is refused out of its range, naming
// it; the zero Config bundles nothing.
func TestFirstChunkTokensFlag(t *testing.T) {
	for _, v := range []int{0, -1, maxFirstChunkTokens + 1} {
		cfg := Config{BlockSize: defaultBlockSize, FirstChunkTokens: v}
		assert.ErrorContains(t, cfg.Validate(), "--first-chunk-tokens must be between 1 and", "%d", v)
	}
	_, base := start(t, Config{Fast: true})
	chunks := readSSE(t, post(t, base+"/v1/chat/completions", continuousBody("mock-model", 4, true)).Body)
	assert.Len(t, chunks, 1+4+1)
}
