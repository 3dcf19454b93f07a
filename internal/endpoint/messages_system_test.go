package endpoint

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestMessagesBodyLiftsRawSystem: the Messages API takes only user and
// assistant messages, so the leading system messages of a raw messages
// array (a dataset's own, or --system-prompt merged into it) go in the
// top-level "system".
func TestMessagesBodyLiftsRawSystem(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"no system message", `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}],"model":"m"}`},
		{"one", `[{"role":"system","content":"PRE\n\nbe brief"},{"role":"user","content":"hi"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"model":"m","system":"PRE\n\nbe brief"}`},
		{"two", `[{"role":"system","content":"PRE"}, {"role":"system","content":"be brief"},{"role":"user","content":"hi"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"model":"m","system":"PRE\n\nbe brief"}`},
		{"list content", `[{"role":"system","content":[{"type":"text","text":"PRE"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"own"}]},{"role":"user","content":"hi"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"}],"model":"m","system":"PRE\nown"}`},
		{"only leading ones", `[{"role":"user","content":"hi"},{"role":"system","content":"late"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"late"}],"model":"m"}`},
		{"a user message mentioning system", `[{"role":"user","content":"system"}]`,
			`{"max_tokens":4,"messages":[{"role":"user","content":"system"}],"model":"m"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Body(Request{EndpointType: plan.EndpointMessages, Model: "m", MaxTokens: 4, RawMessages: json.RawMessage(tc.raw)})
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(b))
		})
	}
}

// TestResponsesBodyKeepsRawSystem: the Responses API takes system items in
// "input", so a raw messages array is sent as it is (no "instructions").
func TestResponsesBodyKeepsRawSystem(t *testing.T) {
	raw := `[{"role":"system","content":"PRE"},{"role":"user","content":"hi"}]`
	b, err := Body(Request{EndpointType: plan.EndpointResponses, Model: "m", MaxTokens: 4, RawMessages: json.RawMessage(raw)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"input":`+raw+`,"max_output_tokens":4,"model":"m","stream":false}`, string(b))
}
