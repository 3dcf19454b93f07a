package chattemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessagesOfChatBody(t *testing.T) {
	body := `{"model":"m","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":[{"type":"text","text":"Look: "},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"what is it?"}]},
		{"role":"assistant","content":"","tool_calls":[{"id":"abc","type":"function","function":{"name":"f","arguments":"{\"n\":1}"}}]},
		{"role":"tool","content":"42"}],
		"tools":[{"type":"function","function":{"name":"f","description":"finds","parameters":{"type":"object", "properties":{"n":{"type":"integer"}}}}}]}`
	chat, ok, err := Messages([]byte(body))
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, chat.Messages, 4)
	assert.Equal(t, Message{Role: "system", Content: "Be brief."}, chat.Messages[0])
	assert.Equal(t, "Look: what is it?", chat.Messages[1].Content, "text parts joined, the image dropped")
	require.Len(t, chat.Messages[2].ToolCalls, 1, "replayed tool calls pass through to the template")
	assert.Equal(t, "f", chat.Messages[2].ToolCalls[0].(map[string]any)["function"].(map[string]any)["name"])
	assert.Equal(t, []string{"f", "finds", `{"type":"object","properties":{"n":{"type":"integer"}}}`}, chat.ToolTexts,
		"the schema's texts, its parameters as compact JSON in their order")
}

func TestMessagesOfResponsesBody(t *testing.T) {
	body := `{"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]},
		{"type":"function_call","name":"g","arguments":"{}"},{"type":"function_call_output","output":"done"}],
		"tools":[{"type":"function","name":"g","description":"gets"}]}`
	chat, ok, err := Messages([]byte(body))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []Message{{Role: "user", Content: "hi"}}, chat.Messages)
	assert.Equal(t, []string{"g", "{}", "done", "g", "gets"}, chat.ToolTexts)
}

func TestMessagesOfOtherBodies(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","prompt":"once upon a time"}`,        // completions
		`{"model":"m","input":["a","b"]}`,                  // embeddings
		`{"model":"m","input":"one string"}`,               // responses with a string input
		`{"query":{"text":"q"},"passages":[{"text":"p"}]}`, // rankings
	} {
		_, ok, err := Messages([]byte(body))
		require.NoError(t, err, body)
		assert.False(t, ok, body)
	}
	_, _, err := Messages([]byte(`not json`))
	assert.ErrorContains(t, err, "read the request body's messages")
}

// TestMessagesOfSystemFields: the system prompt a Messages API body carries
// as its top-level "system" (a string or text blocks), or a Responses body
// as "instructions", is the conversation's first message.
func TestMessagesOfSystemFields(t *testing.T) {
	for _, tc := range []struct{ name, body, system string }{
		{"messages, string", `{"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"max_tokens":4}`, "Be brief."},
		{"messages, text blocks", `{"system":[{"type":"text","text":"Be "},{"type":"text","text":"brief."}],"messages":[{"role":"user","content":"hi"}]}`, "Be brief."},
		{"responses", `{"instructions":"Be brief.","input":[{"type":"message","role":"user","content":"hi"}]}`, "Be brief."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chat, ok, err := Messages([]byte(tc.body))
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, []Message{{Role: "system", Content: tc.system}, {Role: "user", Content: "hi"}}, chat.Messages)
		})
	}
	chat, ok, err := Messages([]byte(`{"system":"","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []Message{{Role: "user", Content: "hi"}}, chat.Messages, "an empty system prompt is none")
}
