package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlT0 is the fixture corpus's epoch.
var tlT0 = time.Date(2026, 5, 31, 12, 0, 0, 0, time.UTC)

func tlISO(s float64) string {
	return tlT0.Add(time.Duration(s * float64(time.Second))).Format(time.RFC3339Nano)
}

// tlRow is a TraceLab row of session sid, sent at sub and answered at
// resp (s after tlT0), with extra fields set over the defaults.
func tlRow(sid string, idx int, sub, resp float64, in, prefix, out int, extra map[string]any) map[string]any {
	r := map[string]any{"session_id": sid, "round_index": idx, "provider": "claude", "user": "u1", "project": "p1",
		"model": "claude-opus", "input_tokens_total": in, "prefix_tokens": prefix, "newly_append_tokens": in - prefix,
		"output_tokens": out, "first_input_event_type": "user_message",
		"timing_events": []map[string]any{{"event_type": "user_message", "timestamp": tlISO(sub)}, {"event_type": "text", "timestamp": tlISO(resp)}},
		"tools":         []map[string]any{}}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

func tlSpawn(name string, emitted, result float64) map[string]any {
	return map[string]any{"tool_name": name, "emitted_at": tlISO(emitted), "result_at": tlISO(result), "tool_wall_latency_ms": (result - emitted) * 1000}
}

// tlCorpusRows: a parent that spawns an Agent from 5 s to 60 s, a child
// inside that window (3 rounds), and an unrelated solo session.
func tlCorpusRows() []map[string]any {
	return []map[string]any{
		tlRow("claude:parent", 0, 0, 1, 256, 0, 10, nil),
		tlRow("claude:parent", 1, 4, 4.5, 384, 256, 20, map[string]any{"tools": []map[string]any{tlSpawn("Agent", 5, 60)},
			"timing_events": []map[string]any{{"event_type": "tool_result", "timestamp": tlISO(4)}, {"event_type": "tool_call", "timestamp": tlISO(4.5)}}}),
		tlRow("claude:child", 0, 10, 11, 128, 0, 5, map[string]any{"model": "claude-haiku"}),
		tlRow("claude:child", 1, 12, 13, 200, 128, 6, map[string]any{"model": "claude-haiku"}),
		tlRow("claude:parent", 2, 70, 71, 640, 384, 30, map[string]any{"reasoning_output_tokens": 5}),
		tlRow("claude:solo", 0, 3, 4, 100, 0, 7, nil),
		{"round_index": 0, "timing_events": []any{}}, // no session_id: skipped
	}
}

// writeTL writes rows as JSONL (gzipped when the name ends in .gz).
func writeTL(t testing.TB, name string, rows []map[string]any) string {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		b.Write(append(line, '\n'))
	}
	return writeTLText(t, name, b.Bytes())
}

func writeTLText(t testing.TB, name string, text []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if strings.HasSuffix(name, ".gz") {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		_, err := w.Write(text)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		text = z.Bytes()
	}
	require.NoError(t, os.WriteFile(path, text, 0o644))
	return path
}

// TestTraceLabReplay: rounds grouped by session, ordered by submit time,
// the contained child nested as the parent's subagent (the parent's next
// call waits for it), replayed on the corpus's clock; a gzipped copy
// reads the same, and the type is detected from the first row.
func TestTraceLabReplay(t *testing.T) {
	tok := o200k(t)
	plain := writeTL(t, "c.jsonl", tlCorpusRows())
	d, convs := open(t, Options{InputFile: plain, Seed: 3})
	assert.Equal(t, TypeTraceLab, Kind(d))
	assert.True(t, IsTrace(d))
	assert.Equal(t, SamplingSequential, d.Sampling())
	require.Equal(t, []string{"claude_parent", "claude_parent::sa:claude_child", "claude_solo"}, convIDs(convs))
	assert.Equal(t, 6, Turns(d))
	parent, child := convs[0], convs[1]
	require.Len(t, parent.Turns, 3)
	for k, want := range []struct{ in, out int }{{256, 10}, {384, 20}, {640, 35}} {
		assert.Equal(t, want.in, parent.Turns[k].InputTokens)
		assert.Equal(t, want.in, tok.Count(parent.Turns[k].Text), "turn %d: a prompt of input_tokens_total tokens", k)
		assert.Equal(t, want.out, parent.Turns[k].MaxTokens, "output_tokens + reasoning_output_tokens")
	}
	assert.Equal(t, []float64{0, 4000, 70000}, []float64{parent.Turns[0].TimestampMs, parent.Turns[1].TimestampMs, parent.Turns[2].TimestampMs},
		"submit times on the corpus's clock, in ms")
	words := strings.Fields(parent.Turns[1].Text)
	assert.Equal(t, strings.Fields(parent.Turns[0].Text), words[:256], "prefix_tokens 256: the first 4 blocks of 64 reused")
	assert.Equal(t, words[:384], strings.Fields(parent.Turns[2].Text)[:384], "prefix 384: 6 blocks reused")
	assert.Equal(t, []int{1}, parent.Turns[2].Join, "the call after the spawn waits for the subagent (SPAWN_JOIN)")
	require.Len(t, child.Turns, 2)
	assert.Equal(t, 10000.0, child.Turns[0].TimestampMs)
	assert.Equal(t, 1, child.Turns[0].ModelRank, "the child's model is the trace's second")
	assert.NotEqual(t, strings.Fields(parent.Turns[0].Text)[:64], strings.Fields(child.Turns[0].Text)[:64],
		"the child's blocks are fresh ids of the parent's namespace")
	assert.Equal(t, 3000.0, convs[2].Turns[0].TimestampMs, "the solo session starts at its own recorded offset")
	assert.Contains(t, Notes(d)[0], "tracelab: 3 sessions -> 2 traces (block_size=64); subagent join: 1 spawn windows (1 claude, 0 codex), 1 children matched")

	gz := writeTL(t, "c.jsonl.gz", tlCorpusRows())
	_, zconvs := open(t, Options{InputFile: gz, Seed: 3})
	assert.Equal(t, convs, zconvs, "gzipped, the same conversations")
	for _, p := range []string{plain, gz} {
		det, err := Detect(p, "")
		require.NoError(t, err)
		assert.Equal(t, Detected{Type: TypeTraceLab, Timestamped: true}, det)
	}
	txt := filepath.Join(t.TempDir(), "c.txt")
	require.NoError(t, os.Rename(plain, txt))
	det, err := Detect(txt, TypeTraceLab)
	require.NoError(t, err)
	assert.Equal(t, TypeTraceLab, det.Type, "any name when the type is given")
	assert.False(t, isTraceLabFile(txt), "detected under AIPerf's suffixes only")
}

// TestTraceLabHashIDs: floor(input/block) ids, the first prefix/block of
// the previous round's, the rest fresh; --isl-block-size changes them.
func TestTraceLabHashIDs(t *testing.T) {
	rows := []map[string]any{
		tlRow("s", 0, 0, 1, 640, 0, 1, nil),
		tlRow("s", 1, 2, 3, 704, 640, 1, nil),
		tlRow("s", 2, 4, 5, 256, 128, 1, nil),                                         // compacted: two blocks survive
		tlRow("s", 3, 6, 7, 130, 999999, 1, map[string]any{"newly_append_tokens": 0}), // prefix clamped to the input
		tlRow("s", 9, 1, 1.5, 63, 0, 1, nil),                                          // submitted second: ordered by time, not round_index
		tlRow("s", 4, 8, 8.5, 0, 0, 0, nil),                                           // in and out floored to 1
		tlRow("s", 5, 9, 9, 64, 0, 1, map[string]any{"timing_events": []any{}}),       // undated: dropped
	}
	src, _, err := convertTraceLab(context.Background(), writeTL(t, "h.jsonl", rows), 64, traceLabJoin{})
	require.NoError(t, err)
	tr, _, err := src.read(context.Background(), 0, true)
	require.NoError(t, err)
	var got [][]int64
	var ins []int64
	for _, r := range tr.Requests {
		got, ins = append(got, r.HashIDs), append(ins, r.In)
	}
	assert.Equal(t, []int64{640, 63, 704, 256, 130, 1}, ins)
	assert.Equal(t, [][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {}, {11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21},
		{11, 12, 22, 23}, {11, 12}, {}}, got, "round 9 (63 tokens, no prefix) breaks the chain of round 0, as the times order it")
	assert.Nil(t, tr.Requests[0].ThinkTime)
	assert.InDelta(t, 0.0, *tr.Requests[1].ThinkTime, 1e-9, "sent at 1 s, before round 0's reply ended at 1 s: no gap")
	assert.InDelta(t, 0.5, *tr.Requests[2].ThinkTime, 1e-9, "2 s after round 9 ended at 1.5 s")
	assert.InDelta(t, 1.0, *tr.Requests[0].APITime, 1e-9)

	src, _, err = convertTraceLab(context.Background(), writeTL(t, "h.jsonl", rows), 128, traceLabJoin{})
	require.NoError(t, err)
	tr, _, err = src.read(context.Background(), 0, true)
	require.NoError(t, err)
	assert.Len(t, tr.Requests[0].HashIDs, 5, "640 tokens in blocks of 128")
	tr, _, err = src.read(context.Background(), 0, false)
	require.NoError(t, err)
	assert.Nil(t, tr.Requests[0].HashIDs, "indexing builds no hash ids")
	_, _, err = convertTraceLab(context.Background(), writeTL(t, "h.jsonl", rows), 0, traceLabJoin{})
	assert.EqualError(t, err, "TraceLab block size must be positive, got 0")
}

// Event times take the ISO 8601 forms Python's datetime.fromisoformat
// reads (AIPerf's parse), and times far from today do not wrap.
func TestTraceLabTimeForms(t *testing.T) {
	const jan1 = 1767225600000.0 // 2026-01-01T00:00:00Z in ms
	for _, s := range []string{"2026-01-01T00:00:00Z", "2026-01-01 00:00:00", "2026-01-01T00:00:00+0000", "2026-01-01T00:00Z",
		"2026-01-01", "20260101T000000Z", "2026-01-01T01:00:00+01:00"} {
		assert.Equal(t, jan1, parseCaptureTime(s), s)
	}
	assert.Equal(t, jan1+500, parseCaptureTime("2026-01-01T00:00:00.5Z"))
	assert.Equal(t, 10413792000000.0, parseCaptureTime("2300-01-01T00:00:00Z"), "after 2262: no wrap")
	assert.True(t, math.IsNaN(parseCaptureTime("31/05/2026")))
	assert.True(t, math.IsNaN(parseCaptureTime("2026-01-01T5:00:00Z")), "a one-digit hour, which fromisoformat refuses")
}
