package turnview

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// req is one request of a test export, in AIPerf's raw shape.
type req struct {
	conv, corr, parent string
	turn               int
	depth              int // 0: no agent_depth written
	start              int64
	model              string
	msgs               []any // the payload's messages
	extra              map[string]any
}

func (r req) line() map[string]any {
	md := map[string]any{"x_request_id": "r", "conversation_id": r.conv, "turn_index": r.turn,
		"request_start_ns": r.start, "benchmark_phase": "profiling", "was_cancelled": false}
	if r.corr != "" {
		md["x_correlation_id"] = r.corr
	}
	if r.parent != "" {
		md["parent_correlation_id"] = r.parent
	}
	if r.depth != 0 {
		md["agent_depth"] = r.depth
	}
	model := r.model
	if model == "" {
		model = "m"
	}
	l := map[string]any{"metadata": md, "start_perf_ns": 1,
		"payload":   map[string]any{"model": model, "messages": r.msgs, "max_completion_tokens": 8, "stream": true},
		"status":    200,
		"responses": []any{map[string]any{"perf_ns": 2, "text": "reply"}}}
	for k, v := range r.extra {
		l[k] = v
	}
	return l
}

func user(s string) map[string]any { return map[string]any{"role": "user", "content": s} }
func asst(s string) map[string]any { return map[string]any{"role": "assistant", "content": s} }

// session is a conversation of n turns sent by one session, each turn the
// history so far (user, assistant, ...) and a new user message.
func session(conv, corr string, n int, start int64) []req {
	var out []req
	var hist []any
	for i := range n {
		hist = append(hist, user(conv+" question "+string(rune('A'+i))))
		out = append(out, req{conv: conv, corr: corr, turn: i, start: start + int64(i)*10, msgs: append([]any{}, hist...)})
		hist = append(hist, asst(conv+" answer "+string(rune('A'+i))))
	}
	return out
}

// writeExport writes lines (a req, another value marshalled, or a string
// written as is) as a raw export in a new directory, returned.
func writeExport(t testing.TB, lines ...any) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			b.WriteString(v)
		case req:
			require.NoError(t, json.NewEncoder(&b).Encode(v.line()))
			continue
		default:
			require.NoError(t, json.NewEncoder(&b).Encode(v))
			continue
		}
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, RawFile), b.Bytes(), 0o644))
	return dir
}

func reqs(groups ...[]req) []any {
	var out []any
	for _, g := range groups {
		for _, r := range g {
			out = append(out, r)
		}
	}
	return out
}

var defaults = Options{LimitConversations: DefaultLimitConversations, MaxTurns: DefaultMaxTurns, ContentCap: DefaultContentCap}

// build reads a run directory's export.
func build(t testing.TB, dir string, opt Options) *View {
	t.Helper()
	files, _, err := Find(dir)
	require.NoError(t, err)
	v, err := Build(context.Background(), files, opt)
	require.NoError(t, err)
	return v
}

// render is the page of v.
func render(t testing.TB, v *View) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, v.WriteHTML(&b))
	return b.String()
}

// ids are the conversations shown, in order.
func ids(v *View) []string {
	var out []string
	for _, c := range v.Convs {
		out = append(out, c.ID)
	}
	return out
}

// bodies are a turn's messages' bodies, in order.
func bodies(v *View, t Turn) []string {
	var out []string
	for _, id := range t.Messages {
		out = append(out, v.Msgs[id].Body)
	}
	return out
}
