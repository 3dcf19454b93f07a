package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckReceived: every token decodes to a byte at least, so a
// completion count beyond the bytes of the text that arrived (plus a few
// special tokens) is not a count of that text; a reply with no text holds
// at most its end-of-sequence token. Reasoning the server did not stream
// (reasoning_tokens, no reasoning text) is not held against it.
func TestCheckReceived(t *testing.T) {
	for _, tc := range []struct {
		name             string
		text, reasoning  int // bytes received
		completion, rtok int
		untrusted        string
	}{
		{"honest: 5 tokens in 30 bytes", 30, 0, 5, 0, ""},
		{"one token a byte, plus special tokens", 30, 0, 38, 0, ""},
		{"inflated ~100x", 30, 0, 590, 0, "completion_tokens 590, more than the 30 byte(s) of generated text that arrived could hold"},
		{"just past the bound", 30, 0, 39, 0, "completion_tokens 39, more than the 30 byte(s) of generated text that arrived could hold"},
		{"streamed reasoning counts as text", 10, 400, 300, 290, ""},
		{"hidden reasoning (OpenAI o-series)", 30, 0, 9000, 8980, ""},
		{"hidden reasoning does not excuse inflated text", 30, 0, 9000, 100,
			"completion_tokens 9000 (8900 beside the 100 hidden reasoning tokens), more than the 30 byte(s) of generated text that arrived could hold"},
		{"no text, tokens claimed", 0, 0, 5, 0, "completion_tokens 5: no generated text arrived"},
		{"no text, an end-of-sequence token", 0, 0, 1, 0, ""},
		{"no text, all reasoning hidden", 0, 0, 64, 64, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Record{Usage: &Usage{PromptTokens: 10, CompletionTokens: tc.completion, ReasoningTokens: tc.rtok}}
			CheckReceived(&r, tc.text, tc.reasoning)
			assert.Equal(t, tc.untrusted, r.Usage.Untrusted)
		})
	}
	embeddings := Record{NoTokens: true, Usage: &Usage{PromptTokens: 10, CompletionTokens: 5}}
	CheckReceived(&embeddings, 0, 0)
	assert.Empty(t, embeddings.Usage.Untrusted, "an endpoint that generates no tokens has no text to bound its usage")
	failed := Record{Error: &Error{Type: "HTTPError"}, Usage: &Usage{CompletionTokens: 500}}
	CheckReceived(&failed, 0, 0)
	assert.Empty(t, failed.Usage.Untrusted, "a failed request's usage is not examined")
}
