package dataset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openTL opens rows as a tracelab corpus and lists its conversations.
func openTL(t *testing.T, rows []map[string]any, o Options) ([]string, Dataset) {
	t.Helper()
	o.InputFile = writeTL(t, "j.jsonl", rows)
	d, convs := open(t, o)
	return convIDs(convs), d
}

func withTools(r map[string]any, tools ...map[string]any) map[string]any {
	r["tools"] = tools
	return r
}

// TestTraceLabJoin: a child is nested in the tightest window of a session
// of the same user and project that wholly contains it; a grandchild, a
// child of another user, a short spawning call, and a child spawned
// before its parent's first call stay standalone; the environment knobs
// turn the join off or move the minimum spawn time.
func TestTraceLabJoin(t *testing.T) {
	nest := []map[string]any{
		withTools(tlRow("claude:root", 0, 0, 1, 64, 0, 1, nil), tlSpawn("Agent", 5, 200), tlSpawn("Task", 8, 150)),
		tlRow("claude:mid", 0, 10, 11, 64, 0, 1, nil),
		withTools(tlRow("claude:mid", 1, 12, 13, 64, 0, 1, nil), tlSpawn("Agent", 20, 80)),
		tlRow("claude:leaf", 0, 30, 31, 64, 0, 1, nil),
		tlRow("claude:other", 0, 40, 41, 64, 0, 1, map[string]any{"user": "u2"}),
		tlRow("claude:root", 1, 210, 211, 64, 0, 1, nil),
	}
	ids, d := openTL(t, nest, Options{})
	assert.Equal(t, []string{"claude_root", "claude_root::sa:claude_mid", "claude_leaf", "claude_other"}, ids,
		"mid nested in root; leaf (mid's child: one level only) a root trace of its own; another user's session never joins")
	assert.Contains(t, Notes(d)[0], "3 spawn windows (3 claude, 0 codex), 2 children matched (2 claude, 0 codex), 2 ambiguous (tightest window kept), "+
		"1 windows matched no child (33.3%), 1 grandchildren kept as standalone traces")
	src, _, err := convertTraceLab(context.Background(), writeTL(t, "j.jsonl", nest), 64, traceLabJoin{on: true, minSpawnMs: 10000})
	require.NoError(t, err)
	tr, _, err := src.read(context.Background(), 0, true)
	require.NoError(t, err)
	require.Len(t, tr.Requests, 3)
	sub := tr.Requests[1]
	assert.Equal(t, "subagent", sub.Type)
	assert.Equal(t, 8.0, sub.T, "the Task window (142 s) is tighter than the Agent one (195 s)")
	assert.Equal(t, int64(142000), *sub.DurationMs)
	assert.Equal(t, "completed", sub.Status)
	assert.Equal(t, "claude_mid", sub.AgentID)
	assert.Equal(t, int64(1), *sub.ToolUseCount)

	t.Setenv(envTraceLabJoin, "false")
	ids, _ = openTL(t, nest, Options{})
	assert.Equal(t, []string{"claude_root", "claude_mid", "claude_leaf", "claude_other"}, ids, "join off: every session a trace")
	t.Setenv(envTraceLabJoin, "maybe")
	_, err = Open(context.Background(), o200k(t), Options{InputFile: writeTL(t, "j.jsonl", nest)})
	assert.ErrorContains(t, err, "tracelab dataset: AIPERF_DATASET_TRACELAB_SUBAGENT_JOIN: expected true or false, got \"maybe\"")
	t.Setenv(envTraceLabJoin, "1")

	short := []map[string]any{
		withTools(tlRow("claude:p", 0, 0, 1, 64, 0, 1, nil), tlSpawn("Agent", 2, 3)),
		tlRow("claude:c", 0, 2.2, 2.5, 64, 0, 1, nil),
		tlRow("claude:p", 1, 4, 5, 64, 0, 1, nil),
	}
	ids, _ = openTL(t, short, Options{})
	assert.Equal(t, []string{"claude_p", "claude_c"}, ids, "a 1 s Agent call is below the 10 s minimum")
	t.Setenv(envTraceLabMinSpawn, "500")
	ids, _ = openTL(t, short, Options{})
	assert.Equal(t, []string{"claude_p", "claude_p::sa:claude_c"}, ids)

	early := []map[string]any{
		withTools(tlRow("claude:p", 0, 10, 11, 64, 0, 1, nil), tlSpawn("Agent", 2, 60)),
		tlRow("claude:c", 0, 3, 5, 64, 0, 1, nil),
	}
	ids, d = openTL(t, early, Options{})
	assert.Equal(t, []string{"claude_p", "claude_c"}, ids, "spawned before the parent's first call: no call to anchor it, standalone")
	assert.Contains(t, Notes(d)[0], "1 subagent session(s) failed to nest")
}

// TestTraceLabCodexJoin: a codex session's window runs from its earliest
// spawn_agent to its latest wait_agent result; its join can be turned off
// alone.
func TestTraceLabCodexJoin(t *testing.T) {
	codex := map[string]any{"provider": "codex"}
	rows := []map[string]any{
		withTools(tlRow("codex:p", 0, 0, 1, 64, 0, 1, codex), map[string]any{"tool_name": "spawn_agent", "emitted_at": tlISO(5)}),
		tlRow("codex:c", 0, 10, 20, 64, 0, 1, codex),
		withTools(tlRow("codex:p", 1, 70, 71, 64, 0, 1, codex), map[string]any{"tool_name": "wait_agent", "result_at": tlISO(60)}),
	}
	ids, d := openTL(t, rows, Options{})
	assert.Equal(t, []string{"codex_p", "codex_p::sa:codex_c"}, ids)
	assert.Contains(t, Notes(d)[0], "1 spawn windows (0 claude, 1 codex), 1 children matched (0 claude, 1 codex)")
	t.Setenv(envTraceLabCodexJoin, "off")
	ids, _ = openTL(t, rows, Options{})
	assert.Equal(t, []string{"codex_p", "codex_c"}, ids)
}

// TestTraceLabSelection: --max-context-length drops the traces with a
// call of more input plus output tokens (subagents' included), then
// --num-dataset-entries keeps the first N left; the weka_trace controls
// apply, baseten_trace's are refused.
func TestTraceLabSelection(t *testing.T) {
	ids, _ := openTL(t, tlCorpusRows(), Options{Replay: Replay{MaxContext: 300}})
	assert.Equal(t, []string{"claude_solo"}, ids, "claude_parent's last call is 640 + 35 tokens")
	ids, _ = openTL(t, tlCorpusRows(), Options{Entries: 1})
	assert.Equal(t, []string{"claude_parent", "claude_parent::sa:claude_child"}, ids, "one trace: its main agent and subagent")
	ids, _ = openTL(t, tlCorpusRows(), Options{Entries: DefaultEntries})
	assert.Len(t, ids, 3, "the default entries cap nothing")
	_, d := openTL(t, tlCorpusRows(), Options{Replay: Replay{ThinkTimeOnly: true}})
	c, err := d.Conversation(0)
	require.NoError(t, err)
	assert.InDelta(t, 3000.0, c.Turns[1].DelayMs, 1e-9, "--use-think-time-only: 4 s after the first reply ended at 1 s")

	_, err = Open(context.Background(), o200k(t), Options{InputFile: writeTL(t, "s.jsonl", tlCorpusRows()), Replay: Replay{OmitKVHints: true}})
	assert.ErrorContains(t, err, "--omit-kv-hints applies to baseten_trace")
	_, err = Open(context.Background(), o200k(t), Options{InputFile: writeTL(t, "s.jsonl", tlCorpusRows()), WekaBasis: WekaBasisRelative})
	assert.ErrorContains(t, err, "--weka-nested-timestamp-basis relative applies to weka_trace")
}
