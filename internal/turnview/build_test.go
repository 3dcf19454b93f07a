package turnview

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOrderRootsFirstThenEarliest: conversations are shown roots first,
// then by their earliest request (a branch that started first still comes
// after every root), and only the first -n; a branch names its parent.
func TestOrderRootsFirstThenEarliest(t *testing.T) {
	branch := session("late-branch", "corr-b", 2, 5) // the earliest requests of all
	for i := range branch {
		branch[i].depth, branch[i].parent = 1, "corr-early"
	}
	dir := writeExport(t, reqs(session("late", "corr-late", 2, 300), branch, session("early", "corr-early", 2, 100),
		session("mid", "corr-mid", 2, 200))...)

	v := build(t, dir, defaults)
	assert.Equal(t, []string{"early", "mid", "late", "late-branch"}, ids(v))
	assert.Equal(t, 4, v.Conversations)
	b := v.Convs[3]
	assert.Equal(t, int64(1), b.Depth)
	assert.Equal(t, "early", b.Parent, "the parent's correlation id resolved to its conversation")
	page := render(t, v)
	assert.Contains(t, page, "subagent (depth 1) of early")

	opt := defaults
	opt.LimitConversations = 2
	v = build(t, dir, opt)
	assert.Equal(t, []string{"early", "mid"}, ids(v))
	assert.Equal(t, 4, v.Conversations, "the export's conversations are all counted")
	page = render(t, v)
	assert.Contains(t, page, "2 more conversations not shown (-n 2)")
	assert.NotContains(t, page, "late question", "a conversation beyond -n is not rendered")
}

// TestReplaysAreTheirOwnConversations: a conversation sent again by
// another session (a small dataset reused) shows once per session, as
// AIPerf's "replay N"; without correlation ids, a repeated turn index
// tells them apart.
func TestReplaysAreTheirOwnConversations(t *testing.T) {
	dir := writeExport(t, reqs(session("c", "s1", 2, 100), session("c", "s2", 2, 150))...)
	v := build(t, dir, defaults)
	require.Len(t, v.Convs, 2)
	assert.Equal(t, 0, v.Convs[0].Replay)
	assert.Equal(t, "s1", v.Convs[0].Lane)
	assert.Equal(t, 1, v.Convs[1].Replay)
	assert.Equal(t, "s2", v.Convs[1].Lane)
	assert.Contains(t, render(t, v), "replay 2")

	dir = writeExport(t, reqs(session("c", "", 2, 100), session("c", "", 2, 150))...)
	v = build(t, dir, defaults)
	require.Len(t, v.Convs, 2)
	assert.Len(t, v.Convs[0].Turns, 2)
	assert.Len(t, v.Convs[1].Turns, 2)
}

// TestMaxTurnsHidesTheRest: turns are shown by turn index (whatever the
// file's order), the first --max-turns of them; the rest are counted.
func TestMaxTurnsHidesTheRest(t *testing.T) {
	s := session("c", "s", 5, 100)
	s[0], s[4] = s[4], s[0] // written out of order
	opt := defaults
	opt.MaxTurns = 3
	v := build(t, writeExport(t, reqs(s)...), opt)
	require.Len(t, v.Convs, 1)
	c := v.Convs[0]
	assert.Equal(t, 5, c.TotalTurns)
	assert.Equal(t, 2, c.HiddenTurns)
	require.Len(t, c.Turns, 3)
	for i, tr := range c.Turns {
		assert.Equal(t, int64(i), tr.Index)
		assert.Equal(t, "8", tr.MaxTokens)
	}
	page := render(t, v)
	assert.Contains(t, page, "2 more turns not shown (--max-turns 3)")
	assert.NotContains(t, page, "question E", "a hidden turn's new message is not rendered")
	assert.Contains(t, page, "question C")
}

// TestBodiesCappedAndStoredOnce: every turn re-sends the history, yet
// each unique (role, body) is kept once, cut at --content-cap characters
// (code points) with the rest counted; bodies alike up to the cap but
// different after it, or alike with another role, stay apart.
func TestBodiesCappedAndStoredOnce(t *testing.T) {
	long := strings.Repeat("é", 30)
	other := strings.Repeat("é", 10) + "x" + strings.Repeat("é", 19)
	s := []req{
		{conv: "c", corr: "s", turn: 0, start: 1, msgs: []any{user(long)}},
		{conv: "c", corr: "s", turn: 1, start: 2, msgs: []any{user(long), asst(long), user(other)}},
		{conv: "c", corr: "s", turn: 2, start: 3, msgs: []any{user(long), asst(long), user(other), asst("ok"), user(long)}},
	}
	opt := defaults
	opt.ContentCap = 10
	v := build(t, writeExport(t, reqs(s)...), opt)
	assert.Equal(t, 9, v.MessageRefs)
	require.Len(t, v.Msgs, 4, "user long, assistant long, user other, assistant ok")
	m := v.Msgs[0]
	assert.Equal(t, "user", m.Role)
	assert.Equal(t, strings.Repeat("é", 10), m.Body)
	assert.Equal(t, 30, m.Len)
	assert.Equal(t, 20, m.Cut)
	assert.Equal(t, v.Msgs[0].Body, v.Msgs[2].Body, "alike up to the cap")
	turns := v.Convs[0].Turns
	assert.Equal(t, []int{0, 1, 2, 3, 0}, turns[2].Messages)

	page := render(t, v)
	assert.Equal(t, 4, strings.Count(page, "<pre>"), "each unique body is written once")
	assert.Equal(t, 5, strings.Count(page, `<a class="ref"`), "each repeat links to it")
	assert.Contains(t, page, `href="#m0">turn 0, message 1</a>`)
	assert.Contains(t, page, "20 more characters not kept (--content-cap)")
	assert.Contains(t, page, "5 messages, 1 new")
}

// TestContentShapes: content as AIPerf's viewer reads it: a list of parts
// is each part's text (<type> for one without text) a line each, null is
// empty, a message that is no object is its own content with role "?",
// another value its JSON; escapes decode as encoding/json decodes them.
func TestContentShapes(t *testing.T) {
	parts := []any{map[string]any{"type": "text", "text": "look"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:x"}},
		"bare", map[string]any{"text": ""}}
	msgs := []any{
		map[string]any{"role": "user", "content": parts},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{}},
		"just text",
		map[string]any{"role": "tool", "content": map[string]any{"a": []any{1, true, nil}}},
		map[string]any{"content": "no role"},
	}
	v := build(t, writeExport(t, req{conv: "c", corr: "s", msgs: msgs}), defaults)
	got := v.Convs[0].Turns[0]
	assert.Equal(t, []string{"look\n<image_url>\nbare\n<part>", "", "just text", `{"a":[1,true,null]}`, "no role"}, bodies(v, got))
	var roles []string
	for _, id := range got.Messages {
		roles = append(roles, v.Msgs[id].Role)
	}
	assert.Equal(t, []string{"user", "assistant", "?", "tool", "?"}, roles)
	assert.Equal(t, []RoleCount{{"?", 2}, {"user", 1}, {"assistant", 1}, {"tool", 1}}, v.Roles)

	escaped := `{"metadata":{"conversation_id":"c"},"payload":{"messages":[{"role":"user","content":"\u00e9\ud83d\ude00\ud800x\"\\\/\b\f\n\r\t"}]}}`
	v = build(t, writeExport(t, escaped), defaults)
	assert.Equal(t, "é😀\ufffdx\"\\/\b\f\n\r\t", v.Msgs[0].Body)
}

// TestMalformedLines: a line that is not one JSON object is refused,
// naming the file and line; blank lines are skipped.
func TestMalformedLines(t *testing.T) {
	good := `{"metadata":{"conversation_id":"c"},"payload":{"messages":[]}}`
	for _, bad := range []string{
		`{"metadata": }`,
		`{"payload": {"messages": ["unterminated`,
		`{} trailing`,
		`[1, 2]`,
		`{"n": 01}`,
		`{"n": -}`,
		`{"s": "\q"}`,
		"{\"s\": \"tab\there\"}",
		`{"s": "\u12"}`,
		`{"a": tru}`,
		`{"a": 1,}`,
		`{"a" 1}`,
		strings.Repeat("[", maxDepth+1),
	} {
		dir := writeExport(t, good, "", bad, good)
		files, _, err := Find(dir)
		require.NoError(t, err)
		_, err = Build(context.Background(), files, defaults)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), files[0]+":3: ", "%s: file and line", bad)
	}
	dir := writeExport(t, good, "  ", good)
	assert.Equal(t, 2, build(t, dir, defaults).Turns)

	_, err := Build(context.Background(), []string{writeExport(t) + "/" + RawFile}, defaults)
	assert.ErrorContains(t, err, "no request records")
	_, err = Build(context.Background(), nil, Options{LimitConversations: 1, MaxTurns: 0, ContentCap: 1})
	assert.ErrorContains(t, err, "must be positive")
}

// TestInterrupted: a cancelled context stops the reading.
func TestInterrupted(t *testing.T) {
	dir := writeExport(t, reqs(session("c", "s", 3, 1))...)
	files, _, err := Find(dir)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Build(ctx, files, defaults)
	assert.ErrorIs(t, err, context.Canceled)
}
