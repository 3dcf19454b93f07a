package mock

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneChoiceFields: the request fields that would change the reply's
// shape are refused with 400 naming them, as n > 1 is, instead of being
// answered as if absent: a batched completions prompt (it was merged into
// one choice with the prompts' tokens summed) and logprobs (answered null).
// A single prompt in a list, or one token-id list, stays one prompt. stop
// is documented as ignored: the reply has exactly max_tokens tokens.
func TestOneChoiceFields(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct {
		path, body, refusal string // refusal "": served
	}{
		{"/v1/completions", `{"prompt":["a","b"],"max_tokens":1}`, "prompt must be one prompt"},
		{"/v1/completions", `{"prompt":[[1,2],[3,4]],"max_tokens":1}`, "prompt must be one prompt"},
		{"/v1/completions", `{"prompt":["a"],"max_tokens":1}`, ""},
		{"/v1/completions", `{"prompt":[[1,2]],"max_tokens":1}`, ""},
		{"/v1/completions", `{"prompt":[1,2],"max_tokens":1}`, ""},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"logprobs":true,"top_logprobs":2}`, "logprobs:"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"top_logprobs":2}`, "logprobs:"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1,"logprobs":false,"top_logprobs":0}`, ""},
		{"/v1/completions", `{"prompt":"hi","max_tokens":1,"logprobs":2}`, "logprobs:"},
		{"/v1/completions", `{"prompt":"hi","max_tokens":1,"logprobs":0}`, "logprobs:"},
		{"/v1/completions", `{"prompt":"hi","max_tokens":1,"logprobs":null}`, ""},
	} {
		status, raw := postRaw(t, base+tc.path, tc.body)
		if tc.refusal == "" {
			assert.Equal(t, http.StatusOK, status, "%s %s: %s", tc.path, tc.body, raw)
			continue
		}
		assert.Equal(t, http.StatusBadRequest, status, "%s %s: %s", tc.path, tc.body, raw)
		assert.Contains(t, raw, tc.refusal, tc.body)
	}

	status, raw := postRaw(t, base+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stop":[" of"]}`)
	require.Equal(t, http.StatusOK, status, raw)
	var w wireChunk
	require.NoError(t, json.Unmarshal([]byte(raw), &w))
	assert.Equal(t, " the of and to in", w.Choices[0].Message.Content, "stop is ignored: exactly max_tokens tokens")
}
