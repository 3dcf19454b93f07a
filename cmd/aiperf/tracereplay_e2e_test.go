package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// sessionTrace is a mooncake trace of sessions whose rows are at the given
// timestamps (ms), the sessions named s0, s1, ...
func sessionTrace(sessions ...[]int) string {
	var b strings.Builder
	for i, rows := range sessions {
		for _, ts := range rows {
			fmt.Fprintf(&b, `{"session_id": "s%d", "timestamp": %d, "input_length": 16, "output_length": 2}`+"\n", i, ts)
		}
	}
	return b.String()
}

// replayTrace runs a trace against m with a hang guard (a recorded hour of idle
// time would outlast it) and returns the records it exported.
func replayTrace(t *testing.T, m *mockServer, trace string, flags ...string) []jsonlLine {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", trace)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inv := cliCtx(ctx, t, dir, append([]string{"profile", "-m", "m", "--url", m.URL, "--input-file", "trace.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--artifact-dir", "out", "--no-store", "--ui", "none"}, flags...)...)
	require.Equal(t, ExitOK, inv.code, "%v: %s", flags, inv.stderr)
	return jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
}

// correlationCounts counts the records of each session (by X-Correlation-ID).
func correlationCounts(lines []jsonlLine) map[string]int {
	out := map[string]int{}
	for _, l := range lines {
		out[l.Metadata.XCorrelationID]++
	}
	return out
}

// --trace-session-sample-ratio replays max(1, round(R × sessions)) whole
// sessions: 3 of 10, both rows of each, the same ones for the same seed.
func TestTraceSessionSampleRatio(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	var rows [][]int
	for i := range 10 {
		rows = append(rows, []int{i * 10, i*10 + 5})
	}
	trace := sessionTrace(rows...)
	lines := replayTrace(t, m, trace, "--trace-session-sample-ratio", "0.3", "--random-seed", "7")
	assert.Equal(t, 6, m.control().InferenceRequests)
	got := correlationCounts(lines)
	assert.Len(t, got, 3)
	for id, n := range got {
		assert.Equal(t, 2, n, "session %s is replayed whole", id)
	}
	ids := func(ls []jsonlLine) map[string]bool {
		out := map[string]bool{}
		for _, l := range ls {
			out[l.Metadata.ConversationID] = true
		}
		return out
	}
	again := replayTrace(t, m, trace, "--trace-session-sample-ratio", "0.3", "--random-seed", "7")
	assert.Equal(t, ids(lines), ids(again), "the same seed picks the same sessions")
}

// --max-idle-gap-cap-seconds collapses the trace's idle hours: three
// requests an hour apart are scheduled 50 ms apart (the schedule, not a
// measurement), and the run ends before the hang guard.
func TestMaxIdleGapCap(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	lines := replayTrace(t, m, sessionTrace([]int{0}, []int{3_600_000}, []int{7_200_000}), "--max-idle-gap-cap-seconds", "0.05")
	require.Len(t, lines, 3)
	assert.Equal(t, 3, m.control().InferenceRequests)
	var sched []int64
	for _, l := range lines {
		sched = append(sched, l.Metadata.ScheduledNs)
	}
	first := min(sched[0], sched[1], sched[2])
	var offsets []int64
	for _, s := range sched {
		offsets = append(offsets, (s-first)/int64(time.Millisecond))
	}
	assert.ElementsMatch(t, []int64{0, 50, 100}, offsets)
}

// Within a session: --trace-idle-gap-cap-seconds compresses an hour between
// turns; --no-open-loop-replay sends the later turn its recorded gap after
// the reply, which --inter-turn-delay-cap-seconds then clamps (an open-loop
// timestamp is not a delay and would wait the hour).
func TestSessionIdleControls(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	trace := sessionTrace([]int{0, 3_600_000})
	for _, flags := range [][]string{
		{"--trace-idle-gap-cap-seconds", "0.05"},
		{"--no-open-loop-replay", "--inter-turn-delay-cap-seconds", "0"},
	} {
		lines := replayTrace(t, m, trace, flags...)
		require.Len(t, lines, 2, flags)
		assert.Len(t, correlationCounts(lines), 1, "%v: one session of two turns", flags)
	}
}

// --open-loop-strict sends every row as its own one-turn session.
func TestOpenLoopStrict(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	trace := sessionTrace([]int{0, 10, 20})
	assert.Len(t, correlationCounts(replayTrace(t, m, trace, "--open-loop-replay", "--force-min-tokens", "--no-allow-dataset-wrap")), 1,
		"the defaults, spelled out, are accepted")
	lines := replayTrace(t, m, trace, "--open-loop-strict")
	assert.Len(t, correlationCounts(lines), 3)
	for _, l := range lines {
		assert.Zero(t, l.Metadata.TurnIndex)
	}
}

// Bad trace-replay controls exit 2 before any request, each named.
func TestTraceReplayRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sessionTrace([]int{0, 10}))
	base := []string{"profile", "-m", "m", "--url", m.URL, "--no-store", "--ui", "none"}
	trace := []string{"--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{append(trace, "--trace-session-sample-ratio", "0", "--max-idle-gap-cap-seconds", "0", "--trace-idle-gap-cap-seconds=-1"), []string{
			"--trace-session-sample-ratio must be greater than 0 and at most 1, got 0",
			"--max-idle-gap-cap-seconds must be greater than 0 and at most 86400, got 0",
			"--trace-idle-gap-cap-seconds must be at least 0 and at most 86400, got -1"}},
		{append(trace, "--omit-kv-hints", "--no-force-min-tokens"), []string{
			"--omit-kv-hints applies to baseten_trace, whose request bodies forward the recorded hash_ids and block_size; mooncake_trace sends none",
			"--force-min-tokens false (--no-force-min-tokens) applies to baseten_trace"}},
		{append(trace, "--open-loop-strict", "--no-open-loop-replay"), []string{
			"--open-loop-strict requires open-loop replay: remove --no-open-loop-replay"}},
		{append(trace, "--no-fixed-schedule", "--concurrency", "1", "--max-idle-gap-cap-seconds", "1"), []string{
			"--max-idle-gap-cap-seconds applies to a fixed schedule"}},
		{append(trace, "--use-think-time-only", "--ignore-trace-delays", "--max-context-length", "0", "--allow-dataset-wrap"), []string{
			"--use-think-time-only and --ignore-trace-delays are mutually exclusive",
			"--use-think-time-only applies to weka_trace and tracelab, whose requests record their think_time; mooncake_trace records none",
			"--max-context-length must be at least 1, got 0",
			"--allow-dataset-wrap reuses traces across AIPerf's agentic-replay concurrency lanes"}},
		{append(trace, "--max-context-length", "4096"), []string{
			"--max-context-length applies to weka_trace and tracelab (it drops whole traces whose recorded peak prompt+output length exceeds it), not mooncake_trace"}},
		{[]string{"--trace-session-sample-ratio", "0.5"}, []string{
			"--trace-session-sample-ratio samples the sessions of --input-file: give one"}},
	} {
		inv := cli(t, dir, append(base, tc.args...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		for _, w := range tc.want {
			assert.Contains(t, inv.stderr, w, tc.args)
		}
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}

// --synthesis-output-len-multiplier scales each line's output_length before
// the replay: the mock is asked for, and sends, twice the recorded tokens.
func TestSynthesisOutputLenMultiplier(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "trace.jsonl", sessionTrace([]int{0}, []int{5}, []int{10}))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--input-file", "trace.jsonl", "--custom-dataset-type",
		"mooncake_trace", "--artifact-dir", "out", "--no-store", "--ui", "none", "--synthesis-output-len-multiplier", "2")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.Equal(t, 4.0, l["output_sequence_length"], "2 recorded tokens × 2")
	}
	inv = cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--synthesis-output-len-multiplier=-1")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--synthesis-output-len-multiplier must be between 0 and 1e6, got -1")
}

// A bailian_trace follow-up listed before its parent is replayed in the
// parent's session, as AIPerf groups the file (it was refused before):
// 4 requests, 2 sessions.
func TestBailianFollowUpBeforeParent(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "bailian.jsonl", strings.Join([]string{
		`{"chat_id": 7, "parent_chat_id": 8, "timestamp": 0.02, "input_length": 32, "output_length": 2, "turn": 2}`,
		`{"chat_id": 5, "parent_chat_id": 4, "timestamp": 0.01, "input_length": 16, "output_length": 2, "turn": 2}`,
		`{"chat_id": 8, "parent_chat_id": -1, "timestamp": 0.015, "input_length": 16, "output_length": 2, "turn": 1}`,
		`{"chat_id": 9, "parent_chat_id": 7, "timestamp": 0.03, "input_length": 48, "output_length": 2, "turn": 3}`,
	}, "\n")+"\n")
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--input-file", "bailian.jsonl", "--custom-dataset-type",
		"bailian_trace", "--artifact-dir", "out", "--no-store", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	assert.Equal(t, 4, m.control().InferenceRequests)
	got := correlationCounts(lines)
	assert.Len(t, got, 2)
	byTurn := map[string][]int{}
	for _, l := range lines {
		byTurn[l.Metadata.ConversationID] = append(byTurn[l.Metadata.ConversationID], l.Metadata.TurnIndex)
	}
	assert.ElementsMatch(t, []int{0, 1, 2}, byTurn["8"], "the parent's session: three turns")
	assert.Equal(t, []int{0}, byTurn["5"])
}

// A --request-count beyond what a fixed schedule holds cannot be honoured:
// each record is sent once, and the run says so instead of passing over it.
func TestRequestCountBeyondTheScheduleWarns(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "t.jsonl", `{"timestamp": 0, "input_length": 8, "output_length": 2}
{"timestamp": 10, "input_length": 8, "output_length": 2}
{"timestamp": 20, "input_length": 8, "output_length": 2}
`)
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--ui", "none", "--no-store", "--input-file", "t.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--request-count", "5")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "Warning: --request-count 5: the fixed schedule holds 3 requests, each sent once: 3 are sent", "in the summary")
	assert.Equal(t, 3, m.control().InferenceRequests)
}
