package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// writeTraceLab writes rows as a gzipped TraceLab corpus under dir.
func writeTraceLab(t *testing.T, dir, name string, rows []string) string {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, err := w.Write([]byte(strings.Join(rows, "\n") + "\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, z.Bytes(), 0o644))
	return path
}

// traceLabRound is a TraceLab row: session sid's round idx, sent at sub
// and answered at resp (s after a fixed epoch), tools its tool calls.
func traceLabRound(sid string, idx int, sub, resp float64, in, prefix int, model, tools string) string {
	at := func(s float64) string {
		return time.Date(2026, 5, 31, 12, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second))).Format(time.RFC3339Nano)
	}
	if tools != "" {
		tools = fmt.Sprintf(`{"tool_name": %q, "emitted_at": %q, "result_at": %q, "tool_wall_latency_ms": 37000}`, tools, at(3), at(40))
	}
	return fmt.Sprintf(`{"session_id": %q, "round_index": %d, "provider": "claude", "user": "u1", "project": "p1", "model": %q, `+
		`"input_tokens_total": %d, "prefix_tokens": %d, "newly_append_tokens": %d, "output_tokens": 8, "reasoning_output_tokens": 2, `+
		`"timing_events": [{"event_type": "user_message", "timestamp": %q}, {"event_type": "text", "timestamp": %q}], "tools": [%s]}`,
		sid, idx, model, in, prefix, in-prefix, at(sub), at(resp), tools)
}

// TestTraceLabReplay replays a gzipped TraceLab corpus, its type detected
// from its first row, against the mock: every dated round once, on the
// corpus's clock 100 times faster; a round that reuses its predecessor's
// prefix_tokens is read from the mock's prefix cache; the subagent found
// in its parent's Agent call runs as its own session, on the second
// --model, and the parent's next call waits for its last reply.
func TestTraceLabReplay(t *testing.T) {
	var mu sync.Mutex
	models := map[string]int{}
	m := startMockBehind(t, mock.Config{TTFT: 800, ITL: 1}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var sent struct{ Model string }
			if json.Unmarshal(body, &sent) == nil && sent.Model != "" {
				mu.Lock()
				models[sent.Model]++
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	writeTraceLab(t, dir, "corpus.jsonl.gz", []string{
		traceLabRound("claude:p", 0, 0, 1, 512, 0, "opus", ""),
		traceLabRound("claude:s", 0, 1, 1.5, 300, 0, "opus", ""),
		traceLabRound("claude:p", 1, 2, 2.5, 640, 512, "opus", "Agent"),
		traceLabRound("claude:s", 1, 3, 3.5, 400, 300, "opus", ""),
		traceLabRound("claude:c", 0, 5, 6, 256, 0, "haiku", ""),
		traceLabRound("claude:c", 1, 8, 9, 384, 256, "haiku", ""),
		traceLabRound("claude:c", 2, 11, 12, 448, 384, "haiku", ""),
		traceLabRound("claude:p", 2, 41, 42, 900, 640, "opus", ""),
		`{"round_index": 0}`,
	})
	inv := cli(t, dir, "profile", "-m", "A", "-m", "B", "--url", m.URL, "--endpoint-type", "chat", "--streaming",
		"--input-file", "corpus.jsonl.gz", "--replay-speedup", "100")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 8, m.control().InferenceRequests)
	mu.Lock()
	assert.Equal(t, map[string]int{"A": 5, "B": 3}, models, "the sessions' model on the first --model, the subagent's on the second")
	mu.Unlock()
	assert.Contains(t, inv.stdout+inv.stderr, "tracelab: 3 sessions -> 2 traces (block_size=64); subagent join: 1 spawn windows")

	b, err := os.ReadFile(onlyFile(t, dir, "profile_export.jsonl"))
	require.NoError(t, err)
	type sent struct {
		start, end int64
		in, cached float64
	}
	at := map[string]sent{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Metadata struct {
				Conv  string `json:"conversation_id"`
				Turn  int    `json:"turn_index"`
				Start int64  `json:"request_start_ns"`
				End   int64  `json:"request_end_ns"`
			} `json:"metadata"`
			Metrics map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		var in, cached float64
		require.NoError(t, json.Unmarshal(r.Metrics["usage_prompt_tokens"].Value, &in))
		require.NoError(t, json.Unmarshal(r.Metrics["usage_prompt_cache_read_tokens"].Value, &cached))
		at[fmt.Sprintf("%s/%d", r.Metadata.Conv, r.Metadata.Turn)] = sent{r.Metadata.Start, r.Metadata.End, in, cached}
	}
	require.Len(t, at, 8, "every dated round once: %v", at)
	for _, k := range []string{"claude_p/0", "claude_p/1", "claude_p/2", "claude_s/0", "claude_s/1",
		"claude_p::sa:claude_c/0", "claude_p::sa:claude_c/1", "claude_p::sa:claude_c/2"} {
		require.Contains(t, at, k)
	}
	for k, shared := range map[string]float64{"claude_p/1": 512, "claude_p/2": 640, "claude_s/1": 256, "claude_p::sa:claude_c/1": 256, "claude_p::sa:claude_c/2": 384} {
		assert.GreaterOrEqual(t, at[k].cached, shared-16, "%s: prefix_tokens rounded down to 64-token blocks, read from the mock's 16-token cache", k)
		assert.Less(t, at[k].cached, at[k].in, k)
	}
	for _, k := range []string{"claude_p/0", "claude_s/0", "claude_p::sa:claude_c/0"} {
		assert.Less(t, at[k].cached, 16.0, "%s: a session's first round shares no block", k)
	}
	assert.GreaterOrEqual(t, at["claude_p/2"].start, at["claude_p::sa:claude_c/2"].end,
		"the parent's call after the Agent call waits for the subagent's last reply")

	// --synthesis-max-isl filters it as a weka_trace: the calls of more than
	// 600 input tokens go, and the subagent with the call that spawned it.
	inv = cli(t, dir, "profile", "-m", "A", "-m", "B", "--url", m.URL, "--endpoint-type", "chat", "--streaming",
		"--input-file", "corpus.jsonl.gz", "--replay-speedup", "100", "--synthesis-max-isl", "600", "--artifact-dir", "filtered")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 8+3, m.control().InferenceRequests, "claude_p/0, claude_s/0 and claude_s/1")
}

// TestTraceLabRefusesBadInput: a malformed row is refused before any
// traffic with its line and field (exit 2), as is a directory.
func TestTraceLabRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	good := traceLabRound("claude:p", 0, 0, 1, 512, 0, "opus", "")
	writeTraceLab(t, dir, "bad.jsonl.gz", []string{good, `{"session_id": "claude:p", "input_tokens_total": -5}`,
		strings.Replace(good, "2026-05-31T12:00:01Z", "31/05/2026", 1), `{"session_id": "claude:p", "timing_events": {}}`})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "corpus"), 0o755))
	for name, c := range map[string]struct {
		args []string
		want []string
	}{
		"rows": {[]string{"--input-file", "bad.jsonl.gz"}, []string{"tracelab dataset: 3 problems:",
			"bad.jsonl.gz:2: input_tokens_total: expected a non-negative integer up to 16777216, got -5",
			`bad.jsonl.gz:3: timing_events[1].timestamp: expected an ISO 8601 time (2026-01-01T00:00:00Z, or without a zone for UTC), got "31/05/2026"`,
			"bad.jsonl.gz:4:45: timing_events: expected a list, got a JSON object"}},
		"directory": {[]string{"--input-file", "corpus", "--custom-dataset-type", "tracelab"}, []string{"tracelab dataset: corpus is a directory"}},
	} {
		t.Run(name, func(t *testing.T) {
			inv := cli(t, dir, append([]string{"profile", "--model", "m", "--url", "http://127.0.0.1:1", "--endpoint-type", "chat"}, c.args...)...)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			for _, want := range c.want {
				assert.Contains(t, inv.stderr, want)
			}
		})
	}
}
