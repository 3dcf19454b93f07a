package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/chattemplate"
	"github.com/aiperf-go/aiperf/internal/dataset"
	"github.com/aiperf-go/aiperf/internal/endpoint"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// With a chat template, the finisher counts each chat request's ISL as its
// whole conversation rendered (the replies it re-sent included, so they are
// not added again); a conversation the template does not render keeps the
// bare count and is reported; a completions request keeps its bare count.
func TestFinisherChatTemplate(t *testing.T) {
	tok, err := tokenizer.Load("../tokenizer/testdata/qwen3.tokenizer.json.gz")
	require.NoError(t, err)
	chat, err := chattemplate.Load("../chattemplate/testdata/gemma3") // raises on two user turns in a row
	require.NoError(t, err)
	f := newFinisher(tok, load.NewClock(), false, false, nil, nil, 0)
	f.chat = chat
	req := func(msgs ...endpoint.Message) *endpoint.Request {
		return &endpoint.Request{EndpointType: plan.EndpointChat, Model: "m", Messages: msgs}
	}
	user1, reply, user2 := endpoint.Message{Role: "user", Content: "Name a prime."}, endpoint.Message{Role: "assistant", Content: "Seven."},
		endpoint.Message{Role: "user", Content: "And an even one?"}
	push := func(index, turn int, r *endpoint.Request, text string) {
		f.text(index, text, "", r)
		f.push(metrics.Record{Index: index, PhaseKind: plan.KindProfiling, Session: 1, Turn: turn, History: true, InputTokens: 99,
			SentNs: 1, EndNs: 2, ResponseNs: metrics.StampsOf(2)})
	}
	push(0, 0, req(user1), reply.Content)
	push(1, 1, req(user1, reply, user2), "Two.")
	push(2, 2, req(user1, user2), "") // a failed turn left no reply
	f.text(3, "", "", &endpoint.Request{EndpointType: plan.EndpointCompletions, Model: "m", Prompt: "once"})
	f.push(metrics.Record{Index: 3, PhaseKind: plan.KindProfiling, InputTokens: 1, SentNs: 1, EndNs: 2})
	records, _, _, err := f.wait(context.Background())
	require.NoError(t, err)
	require.Len(t, records, 4)

	count := func(msgs ...chattemplate.Message) int {
		s, err := chat.Render(context.Background(), msgs)
		require.NoError(t, err)
		return tok.Count(s)
	}
	u1, r1, u2 := chattemplate.Message{Role: "user", Content: user1.Content}, chattemplate.Message{Role: "assistant", Content: reply.Content},
		chattemplate.Message{Role: "user", Content: user2.Content}
	assert.Equal(t, count(u1), records[0].InputTokens)
	assert.Equal(t, count(u1, r1, u2), records[1].InputTokens, "the reply is in the rendering, not added on top")
	assert.Equal(t, 99+tok.Count("Seven.")+tok.Count("Two."), records[2].InputTokens, "not rendered: the bare count and the replies")
	assert.Equal(t, 1, records[3].InputTokens, "completions: the bare count")
	assert.Equal(t, 1, f.state.bare)
	assert.ErrorContains(t, f.state.bareErr, "Conversation roles must alternate")
	assert.Greater(t, records[0].InputTokens, tok.Count(user1.Content)+5)
}

// The overhead probe finds what Qwen 2.5's ChatML adds: its default system
// prompt and the generation prompt once a request, five tokens a message
// (<|im_start|>, the role, "\n", <|im_end|>, "\n"); a template that writes
// less with more messages gives no compensation.
func TestTemplateOverhead(t *testing.T) {
	tok, err := tokenizer.Load("../tokenizer/testdata/qwen3.tokenizer.json.gz")
	require.NoError(t, err)
	chat, err := chattemplate.Load("../chattemplate/testdata/qwen2_5")
	require.NoError(t, err)
	system := tok.Count("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n")
	generation := tok.Count("<|im_start|>assistant\n")
	assert.Equal(t, dataset.TemplateOverhead{First: system + generation + 5, Later: 5}, templateOverhead(context.Background(), chat, tok))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, chattemplate.ConfigFile),
		[]byte(`{"chat_template": "{{ messages[0].content }}"}`), 0o644))
	first, err := chattemplate.Load(dir)
	require.NoError(t, err)
	assert.Zero(t, templateOverhead(context.Background(), first, tok))
}
