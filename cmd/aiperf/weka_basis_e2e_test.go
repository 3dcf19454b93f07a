package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// wekaBasisTrace is a Weka trace whose main agent calls at 0 and 0.6 s and
// whose subagent, spawned at 0.1 s, calls at t 0.2 and 0.25: at 0.2 s on
// the root trace's clock (absolute), or 0.3 s (relative to its spawn).
const wekaBasisTrace = `{"id": "x", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [
  {"t": 0.0, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1]},
  {"t": 0.1, "type": "subagent", "agent_id": "a", "subagent_type": "Explore", "status": "completed", "models": ["m"],
   "requests": [
    {"t": 0.2, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [7]},
    {"t": 0.25, "type": "n", "model": "m", "in": 128, "out": 4, "hash_ids": [7, 8]}
  ]},
  {"t": 0.6, "type": "n", "model": "m", "in": 128, "out": 4, "hash_ids": [1, 2]}
]}
`

// scheduledMs reads the one run under dir's profile_export.jsonl: when the
// schedule wanted each session's turn sent (ms after its first request's).
func scheduledMs(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(onlyFile(t, dir, "profile_export.jsonl"))
	require.NoError(t, err)
	at := map[string]int64{}
	first := int64(-1)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Metadata struct {
				Conv  string `json:"conversation_id"`
				Turn  int    `json:"turn_index"`
				Sched int64  `json:"scheduled_ns"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		at[fmt.Sprintf("%s/%d", r.Metadata.Conv, r.Metadata.Turn)] = r.Metadata.Sched
		if first < 0 || r.Metadata.Sched < first {
			first = r.Metadata.Sched
		}
	}
	out := map[string]float64{}
	for k, ns := range at {
		out[k] = float64(ns-first) / 1e6
	}
	return out
}

// --weka-nested-timestamp-basis absolute and relative send the same
// trace's subagent on different schedules (its first call 200 or 300 ms
// after the trace's first, as the schedule the client computed records
// it); absolute refuses a subagent call 10 s before its spawn before any
// traffic, and either is refused for another format.
func TestWekaNestedTimestampBasisFlag(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	got := map[string]map[string]float64{}
	for _, basis := range []string{"absolute", "relative", "auto"} {
		dir := t.TempDir()
		writeFile(t, dir, "traces/x.json", wekaBasisTrace)
		inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
			"--weka-nested-timestamp-basis", basis)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		got[basis] = scheduledMs(t, dir)
		require.Len(t, got[basis], 4, "every call once: %v", got[basis])
	}
	assert.InDelta(t, 0, got["absolute"]["x/0"], 0.001)
	assert.InDelta(t, 200, got["absolute"]["x::sa:a/0"], 0.001, "the subagent's first call at its t, on the root trace's clock")
	assert.InDelta(t, 300, got["relative"]["x::sa:a/0"], 0.001, "its t after its spawn at 0.1 s")
	assert.InDelta(t, 200, got["auto"]["x::sa:a/0"], 0.001, "auto: no call before its spawn, absolute")

	dir := t.TempDir()
	writeFile(t, dir, "traces/early.json", strings.NewReplacer(`"t": 0.1, "type": "subagent"`, `"t": 10.0, "type": "subagent"`,
		`"t": 0.2,`, `"t": 0.0,`, `"t": 0.6,`, `"t": 20.0,`).Replace(wekaBasisTrace))
	writeFile(t, dir, "trace.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}`+"\n")
	sent := m.control().InferenceRequests
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
		"--weka-nested-timestamp-basis", "absolute")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "early.json:5: requests[1].requests[0].t: trace 'x' in early.json, subagent 'a': "+
		"inner request[0] timestamp 0.0 precedes its marker timestamp 10.0")
	inv = cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "trace.jsonl",
		"--custom-dataset-type", "mooncake_trace", "--weka-nested-timestamp-basis", "relative")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--weka-nested-timestamp-basis relative applies to weka_trace")
	assert.Equal(t, sent, m.control().InferenceRequests, "each refused before any traffic")
}
