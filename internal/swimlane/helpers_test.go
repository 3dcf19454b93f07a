package swimlane

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// t0 is the tests' clock origin: a wall-clock time in ns.
const t0 = int64(1_796_357_517_000_000_000)

// ms is t0 plus n milliseconds.
func ms(n float64) int64 { return t0 + int64(n*1e6) }

// rec is a profile_export.jsonl line of AIPerf's shape: a session, its
// conversation, the turn and the span (ms after t0); extra metadata
// fields and a top-level error (when not "") merged in.
func rec(session, conv string, turn int, start, end float64, extra map[string]any, errJSON string) string {
	md := map[string]any{"x_request_id": "r-" + session, "x_correlation_id": session, "conversation_id": conv,
		"turn_index": turn, "request_start_ns": ms(start), "request_end_ns": ms(end), "benchmark_phase": "profiling",
		"was_cancelled": false}
	for k, v := range extra {
		md[k] = v
	}
	line := map[string]any{"metadata": md, "metrics": map[string]any{
		"time_to_first_token":    map[string]any{"value": 20.5, "unit": "ms"},
		"request_latency":        map[string]any{"value": end - start, "unit": "ms"},
		"inter_chunk_latency":    map[string]any{"value": []float64{4.9, 5.1, 5.0}, "unit": "ms"},
		"input_sequence_length":  map[string]any{"value": 16, "unit": "tokens"},
		"output_sequence_length": map[string]any{"value": 4, "unit": "tokens"},
	}}
	if errJSON != "" {
		line["error"] = json.RawMessage(errJSON)
	}
	b, err := json.Marshal(line)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// writeRun writes a run directory: the lines as profile_export.jsonl and,
// when config is not "", profile_export_aiperf.json.
func writeRun(t *testing.T, lines []string, config string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run1")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileJSONL), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	if config != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, FileJSON), []byte(config), 0o644))
	}
	return dir
}

// load writes and loads a run.
func load(t *testing.T, lines []string, config string) *Run {
	t.Helper()
	r, err := Load(context.Background(), writeRun(t, lines, config))
	require.NoError(t, err)
	return r
}

// sessionIDs are the sessions' ids in a lane's members' order.
func sessionIDs(r *Run, ln Lane) []string {
	var out []string
	for _, m := range ln.Members {
		out = append(out, r.Sessions[m.Session].ID)
	}
	return out
}
