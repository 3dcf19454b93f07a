package endpoint

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/payload"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// A request of messages (a conversation's history or system message, a
// message row) is not sent as an empty prompt to an endpoint type whose
// body has none: building it fails, saying which types take messages.
func TestPromptOnlyTypesRefuseMessages(t *testing.T) {
	tmpl, err := payload.Load(`{"q": {{ text|tojson }}}`)
	require.NoError(t, err)
	for _, et := range promptOnly {
		for _, req := range []Request{
			{EndpointType: et, Model: "m", Messages: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}},
			{EndpointType: et, Model: "m", RawMessages: json.RawMessage(`[{"role":"user","content":"u"}]`)},
		} {
			_, err := Body(req)
			require.ErrorContains(t, err, "--endpoint-type "+et+" sends a prompt, and this request is a conversation's messages")
		}
		_, err := Body(Request{EndpointType: et, Model: "m", Prompt: "u", Inputs: []string{"u"}, Template: tmpl})
		require.NoError(t, err, et)
	}
	assert.Contains(t, promptOnly, plan.EndpointTemplate, "a template renders the prompt: a messages request would render empty")
	assert.False(t, PromptOnly(plan.EndpointAudioTranscription), "a transcription of a conversation uploads its current turn's audio")
	_, err = Body(Request{EndpointType: plan.EndpointChat, Model: "m", Messages: []Message{{Role: "user", Content: "u"}}})
	require.NoError(t, err)
}
