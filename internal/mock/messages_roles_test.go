package mock

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMessagesRoles: /v1/messages takes only user and assistant messages,
// the system prompt being the top-level "system"; another role is refused
// with a 400 in Anthropic's error shape, as Anthropic's API does.
func TestMessagesRoles(t *testing.T) {
	_, base := start(t, Config{Fast: true})
	for _, tc := range []struct{ name, body, want string }{
		{"system message", `{"max_tokens":1,"messages":[{"role":"system","content":"PRE"},{"role":"user","content":"hi"}]}`,
			`messages: Unexpected role "system". The Messages API accepts a top-level ` + "`system`" + ` parameter, not "system" as an input message role.`},
		{"tool message", `{"max_tokens":1,"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"x"}]}`,
			`messages.1.role: Input should be 'user' or 'assistant'`},
		{"missing max_tokens", `{"messages":[{"role":"user","content":"hi"}]}`, "max_tokens: field required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := postRaw(t, base+"/v1/messages", tc.body)
			assert.Equal(t, http.StatusBadRequest, status, raw)
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &e), raw)
			assert.Equal(t, "error", e.Type, raw)
			assert.Equal(t, "invalid_request_error", e.Error.Type, raw)
			assert.Equal(t, tc.want, e.Error.Message)
		})
	}
	status, raw := postRaw(t, base+"/v1/messages",
		`{"max_tokens":1,"system":"PRE","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"again"}]}`)
	assert.Equal(t, http.StatusOK, status, raw)
}
