package bench

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/dataset"
)

func TestMergeSystem(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[{"role":"user","content":"hi"}]`, `[{"content":"P","role":"system"},{"content":"hi","role":"user"}]`},
		{`[{"role":"system","content":"own"},{"role":"user","content":"hi"}]`, `[{"content":"P\n\nown","role":"system"},{"content":"hi","role":"user"}]`},
		{`[{"role":"system","content":""}]`, `[{"content":"P","role":"system"}]`},
		{`[{"role":"system","content":null}]`, `[{"content":"P","role":"system"}]`},
		{`[{"role":"system","content":[{"type":"text","text":"own"}],"name":"n"}]`,
			`[{"content":[{"text":"P","type":"text"},{"type":"text","text":"own"}],"name":"n","role":"system"}]`},
		{`[]`, `[{"content":"P","role":"system"}]`},
	} {
		got, err := mergeSystem(json.RawMessage(tc.in), "P")
		require.NoError(t, err, tc.in)
		assert.JSONEq(t, tc.want, string(got), tc.in)
	}
	_, err := mergeSystem(json.RawMessage(`[{"role":"system","content":7}]`), "P")
	assert.ErrorContains(t, err, "neither text nor a list of parts")
}

// The dataset's turns are not changed: a conversation read again is as it
// was; a conversation of message deltas gets the prompt in its first turn
// only, one of self-contained turns in each.
func TestAddSystemPromptCopiesTurns(t *testing.T) {
	own := []dataset.Turn{{Messages: json.RawMessage(`[{"role":"user","content":"a"}]`), InputTokens: 1},
		{Messages: json.RawMessage(`[{"role":"user","content":"b"}]`), InputTokens: 1}}
	count := func(s string) int { return len(s) }
	for mode, merged := range map[string]int{dataset.DeltasWithoutResponses: 1, dataset.MessageArrayWithResponses: 2} {
		c := dataset.Conversation{ID: "c", Mode: mode, Turns: own}
		require.NoError(t, addSystemPrompt(&c, "PP", count))
		n := 0
		for i, turn := range c.Turns {
			if string(turn.Messages) != string(own[i].Messages) {
				n++
				assert.Equal(t, 3, turn.InputTokens, "the prompt's count added")
			}
		}
		assert.Equal(t, merged, n, mode)
		assert.JSONEq(t, `[{"role":"user","content":"a"}]`, string(own[0].Messages), "the dataset's turn is left alone")
		assert.Equal(t, 1, own[0].InputTokens)
	}
	text := dataset.Conversation{ID: "t", System: "own", Turns: []dataset.Turn{{Text: "x"}}}
	require.NoError(t, addSystemPrompt(&text, "PP", count))
	assert.Equal(t, "PP\n\nown", text.System)
	payload := dataset.Conversation{ID: "p", Turns: []dataset.Turn{{Payload: json.RawMessage(`{}`)}}}
	assert.ErrorContains(t, addSystemPrompt(&payload, "PP", count), "conversation p sends its request bodies as they are")
}
