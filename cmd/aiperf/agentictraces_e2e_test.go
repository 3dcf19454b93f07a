package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// datasetFixture is the content of a fixture of internal/dataset.
func datasetFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "dataset", "testdata", "files", name))
	require.NoError(t, err)
	return string(b)
}

// sessionCounts counts the profiling records of the one run under dir
// by conversation.
func sessionCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range profilingRecords(t, dir) {
		out[r.Metadata.ConversationID]++
	}
	return out
}

// sentBody is the part of a completions body the Baseten test reads.
type sentBody struct {
	Prompt    string  `json:"prompt"`
	MaxTokens int     `json:"max_tokens"`
	MinTokens int     `json:"min_tokens"`
	HashIDs   []int64 `json:"hash_ids"`
	BlockSize int     `json:"block_size"`
}

// TestBasetenTraceTutorial runs the command line of AIPerf's
// baseten-trace.md (Command) against the mock: each row of the Parquet
// trace is sent once, its prompt verbatim to /v1/completions, with its
// recorded output as max_tokens and min_tokens and its KV-cache hints.
func TestBasetenTraceTutorial(t *testing.T) {
	c := tutorial{
		doc:    "docs/tutorials/baseten-trace.md (Command): a Parquet trace replayed on its schedule, each row once",
		change: "trace.parquet is internal/dataset's 6-row fixture (3 sessions over 3 s) instead of /path/to/trace.parquet",
		args: []string{"profile", "--model", "YOUR_MODEL", "--url", "http://localhost:8000", "--endpoint-type", "completions",
			"--input-file", "trace.parquet", "--custom-dataset-type", "baseten_trace", "--fixed-schedule"},
		files: map[string]string{"trace.parquet": datasetFixture(t, "baseten.parquet")},
		mock:  mock.Config{Fast: true},
		after: func(t *testing.T, dir string, at map[string]tutorialServer) {
			s := at["localhost:8000"]
			assert.Equal(t, 6, s.requests, "6 rows, 6 requests")
			got := map[string]sentBody{}
			for _, b := range s.bodies {
				var sb sentBody
				require.NoError(t, json.Unmarshal([]byte(b), &sb), b)
				got[sb.Prompt] = sb
			}
			assert.Equal(t, map[string]sentBody{
				"s1 turn one":   {Prompt: "s1 turn one", MaxTokens: 5, MinTokens: 5, HashIDs: []int64{1, 2}, BlockSize: 16},
				"s1 turn two":   {Prompt: "s1 turn two", MaxTokens: 7, MinTokens: 7, HashIDs: []int64{1, 2, 3}, BlockSize: 16},
				"s1 turn three": {Prompt: "s1 turn three", MaxTokens: 9, MinTokens: 9, HashIDs: []int64{1, 2, 3, 4}, BlockSize: 16},
				"s2 first":      {Prompt: "s2 first", MaxTokens: 1, MinTokens: 1},
				"s2 second":     {Prompt: "s2 second", MaxTokens: 4, MinTokens: 4},
				"no session":    {Prompt: "no session", MaxTokens: 3, MinTokens: 3},
			}, got, "each row once, as recorded")
			sessions := sessionCounts(t, dir)
			assert.Equal(t, map[string]int{"s1": 3, "s2": 2, "trace.parquet:5": 1}, sessions, "rows grouped by provided_session_id")
		},
	}
	c.run(t, nil)
}

// writeWekaTraces writes internal/dataset's two Weka trace fixtures into
// dir/traces.
func writeWekaTraces(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"trace_0001.json", "trace_0002.json"} {
		writeFile(t, dir, "traces/"+name, datasetFixture(t, "weka/"+name))
	}
}

// chatBody is the part of a chat body the Weka test reads.
type chatBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_completion_tokens"`
}

// TestWekaTraceTutorial runs the Quick Start command line of AIPerf's
// weka-trace.md against the mock: a directory of traces, each main agent
// and subagent a session, every API call sent once, the main agent's
// model the first --model and its subagents' the second.
func TestWekaTraceTutorial(t *testing.T) {
	files := map[string]string{}
	for _, name := range []string{"trace_0001.json", "trace_0002.json"} {
		files["artifacts/kv-cache-tester/traces/"+name] = datasetFixture(t, "weka/"+name)
	}
	c := tutorial{
		doc: "docs/tutorials/weka-trace.md (Quick Start): a directory of traces replayed on its schedule, subagents in parallel",
		change: "the traces are internal/dataset's 2-trace fixture (6 API calls over 0.9 s, 2 subagents and one dropped) " +
			"instead of the kv-cache-tester corpus",
		args: []string{"profile", "--url", "localhost:8000", "--model", "claude-opus-4-5-20251101", "--model", "claude-haiku-4-5-20251001",
			"--endpoint-type", "chat", "--streaming", "--input-file", "artifacts/kv-cache-tester/traces/", "--fixed-schedule"},
		files: files,
		mock:  mock.Config{Fast: true},
		after: func(t *testing.T, dir string, at map[string]tutorialServer) {
			s := at["localhost:8000"]
			assert.Equal(t, 6, s.requests, "6 API calls, each once")
			sent := map[string]int{}
			for _, b := range s.bodies {
				var cb chatBody
				require.NoError(t, json.Unmarshal([]byte(b), &cb), b)
				sent[fmt.Sprintf("%s/%d", cb.Model, cb.MaxTokens)]++
			}
			assert.Equal(t, map[string]int{
				"claude-opus-4-5-20251101/20": 1, "claude-opus-4-5-20251101/30": 1, "claude-opus-4-5-20251101/12": 1,
				"claude-haiku-4-5-20251001/10": 1, "claude-haiku-4-5-20251001/1": 1, "claude-haiku-4-5-20251001/5": 1,
			}, sent, "main agents on the first --model, haiku subagents on the second, out as max tokens")
			sessions := sessionCounts(t, dir)
			assert.Equal(t, map[string]int{"trace_0001": 2, "trace_0001::sa:agent_001": 2, "trace_0001::sa:agent_002": 1,
				"trace_0002": 1}, sessions)
			assertSentLengths(t, dir, map[[2]float64]int{{100, 20}: 1, {150, 30}: 1, {70, 10}: 1, {130, 1}: 1, {40, 5}: 1, {100, 12}: 1})
		},
	}
	c.run(t, nil)
}

// A Baseten or Weka trace with malformed records is refused before any
// traffic: every problem listed with its row (line) and field, exit 2.
func TestAgenticTraceRefusesBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		fixture, file, kind, endpoint string
		want                          []string
	}{
		"baseten": {"bad/baseten.parquet", "bad.parquet", "baseten_trace", "completions", []string{"5 problems", "bad.parquet:2: prompt: required",
			"bad.parquet:3: input_tokens: expected a non-negative integer, got -4", "bad.parquet:5: block_size: expected an integer of at least 1, got 0"}},
		"weka": {"bad/weka.json", "traces/bad.json", "weka_trace", "chat", []string{"7 problems", "bad.json:8: requests[1].t: expected a number",
			"bad.json:13: requests[4].requests[0].in: required"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, c.file, datasetFixture(t, c.fixture))
			inv := cli(t, dir, "profile", "--model", "m", "--url", "http://127.0.0.1:1", "--endpoint-type", c.endpoint,
				"--input-file", filepath.Dir(c.file)+"/"+filepath.Base(c.file), "--custom-dataset-type", c.kind)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			for _, want := range c.want {
				assert.Contains(t, inv.stderr, want)
			}
		})
	}
}

// --trace-idle-gap-cap-seconds replays a Weka trace on its compressed
// timeline (every call still sent once) and is refused when negative or
// given with another kind of file.
func TestWekaTraceIdleGapCapFlag(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "traces/trace_0001.json", datasetFixture(t, "weka/trace_0001.json"))
	writeFile(t, dir, "bailian.jsonl", bailianShort)
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
		"--trace-idle-gap-cap-seconds", "0.05")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, map[string]int{"trace_0001": 2, "trace_0001::sa:agent_001": 2, "trace_0001::sa:agent_002": 1}, sessionCounts(t, dir))
	sent := m.control().InferenceRequests
	for _, args := range [][]string{
		{"--trace-idle-gap-cap-seconds=-1", "--trace-idle-gap-cap-seconds must be at least 0 and at most 86400, got -1"},
		{"--trace-session-sample-ratio=0.5", "--trace-session-sample-ratio replays the sessions of a JSONL file (a trace, single_turn or multi_turn), not weka_trace"},
		{"--max-context-length=179", "is in one of the 1 traces longer than --max-context-length 179"},
		{"--allow-dataset-wrap", "--allow-dataset-wrap reuses traces across AIPerf's agentic-replay concurrency lanes"},
	} {
		inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces", args[0])
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, args[1])
	}
	assert.Equal(t, sent, m.control().InferenceRequests, "each refused before any traffic")

	// the weka controls: think time only, and a context limit the trace fits
	inv = cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
		"--use-think-time-only", "--max-context-length", "180", "--artifact-dir", "thinking")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, sent+5, m.control().InferenceRequests)
	inv = cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "bailian.jsonl", "--use-think-time-only")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--use-think-time-only applies to weka_trace")
}

// --extra-inputs keys that a Baseten trace sets on every request are
// refused before any traffic, as AIPerf refuses them.
func TestBasetenTraceRefusesClashingExtraInputs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "trace.parquet", datasetFixture(t, "baseten.parquet"))
	inv := cli(t, dir, "profile", "-m", "m", "--url", "http://127.0.0.1:1", "--endpoint-type", "completions", "--input-file", "trace.parquet",
		"--extra-inputs", "min_tokens:3", "--extra-inputs", `{"hash_ids": [1], "temperature": 0}`)
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--extra-inputs min_tokens, hash_ids: a baseten_trace sets it on every request")
}

// agenticCodeRows are the two rows of AIPerf's agentic-code-generator.md
// (Dataset Format): a session's first turn (its timestamp, group_id) and
// an incremental second turn (its delay, new hash ids).
const agenticCodeRows = `{"session_id":"sess-a1b2c3d4e5f6","input_length":1536,"output_length":320,"hash_ids":[0,1,2],"timestamp":0.0,"group_id":4}
{"session_id":"sess-a1b2c3d4e5f6","input_length":768,"output_length":180,"hash_ids":[1000,1001],"delay":2450.3}
`

// TestAgenticCodeTraceReplay runs the replay command line of AIPerf's
// agentic-code-generator.md against the mock on the rows its Dataset
// Format section shows: an agentic-code dataset.jsonl is a mooncake_trace,
// its extra fields (group_id, is_restart) ignored, each row sent once.
func TestAgenticCodeTraceReplay(t *testing.T) {
	// Qwen/Qwen3-0.6B's tokenizer.json (internal/tokenizer's copy) in a
	// Hugging Face cache of the test's own, where --tokenizer finds it
	hub := t.TempDir()
	snap := filepath.Join("models--Qwen--Qwen3-0.6B", "snapshots", "0123abcd")
	writeFile(t, hub, filepath.Join("models--Qwen--Qwen3-0.6B", "refs", "main"), "0123abcd")
	tok, err := os.ReadFile(filepath.Join(qwenDir(t, ""), "tokenizer.json"))
	require.NoError(t, err)
	writeFile(t, hub, filepath.Join(snap, "tokenizer.json"), string(tok))
	c := tutorial{
		doc: "docs/tutorials/agentic-code-generator.md (Replay With AIPerf): the generated dataset.jsonl replayed as a mooncake_trace",
		change: "dataset.jsonl is the two rows of its Dataset Format section instead of a generated run's (aiperf synthesize " +
			"agentic-code is not here); --ui dashboard is left out (no terminal in a test); the tokenizer is read from a local " +
			"Hugging Face cache (HF_HUB_CACHE)",
		env: map[string]string{"HF_HUB_CACHE": hub},
		args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--tokenizer", "Qwen/Qwen3-0.6B", "--url", "http://localhost:8000",
			"--endpoint-type", "chat", "--input-file", ".test/default_1000s_seed42_YYYYMMDD-HHMMSS/dataset.jsonl",
			"--custom-dataset-type", "mooncake_trace", "--concurrency", "50", "--workers-max", "200", "--streaming"},
		files: map[string]string{".test/default_1000s_seed42_YYYYMMDD-HHMMSS/dataset.jsonl": agenticCodeRows},
		mock:  mock.Config{Fast: true},
		after: func(t *testing.T, dir string, at map[string]tutorialServer) {
			assert.Equal(t, 2, at["localhost:8000"].requests, "2 rows, 2 requests")
			assert.Equal(t, map[string]int{"sess-a1b2c3d4e5f6": 2}, sessionCounts(t, dir))
		},
	}
	c.run(t, nil)
}

// --synthesis-max-isl and --synthesis-max-osl filter a Weka trace as
// AIPerf's weka-trace.md (Filtering) says; the rewriting --synthesis-*
// flags are refused for it, named or detected.
func TestWekaTraceSynthesisFilters(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeWekaTraces(t, dir)
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
		"--synthesis-max-isl", "120", "--synthesis-max-osl", "8")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assertSentLengths(t, dir, map[[2]float64]int{{100, 8}: 2, {70, 10}: 1})
	for _, args := range [][]string{{"--custom-dataset-type", "weka_trace"}, nil} {
		inv := cli(t, dir, append([]string{"profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--input-file", "traces",
			"--synthesis-speedup-ratio", "2"}, args...)...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, "weka_trace")
		assert.Contains(t, inv.stderr, "takes only --synthesis-max-isl and --synthesis-max-osl")
	}
}

// AIPerf's per-trace model rewriting: with three --model values, every
// trace's main agent is sent as the first and its Haiku subagents as the
// second; the third names no model of these traces (a model per session,
// round robin, would give the third session the third).
func TestWekaTraceModelRewriting(t *testing.T) {
	sent := &bodies{}
	m := startMockBehind(t, mock.Config{Fast: true}, sent.wrap)
	dir := t.TempDir()
	writeWekaTraces(t, dir)
	inv := cli(t, dir, "profile", "--model", "A", "--model", "B", "--model", "C", "--url", m.URL, "--endpoint-type", "chat",
		"--input-file", "traces", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	models := map[string]int{}
	for _, b := range sent.sorted() {
		var cb chatBody
		require.NoError(t, json.Unmarshal([]byte(b), &cb), b)
		models[fmt.Sprintf("%s/%d", cb.Model, cb.MaxTokens)]++
	}
	want := map[string]int{"A/20": 1, "A/30": 1, "A/12": 1, "B/10": 1, "B/1": 1, "B/5": 1}
	assert.Equal(t, want, models)

	// inputs.json holds the bodies sent, subagents' models included.
	var inputs struct {
		Data []struct {
			Payloads []chatBody `json:"payloads"`
		} `json:"data"`
	}
	readJSONInto(t, filepath.Join(dir, "out", "inputs.json"), &inputs)
	recorded := map[string]int{}
	for _, d := range inputs.Data {
		for _, cb := range d.Payloads {
			recorded[fmt.Sprintf("%s/%d", cb.Model, cb.MaxTokens)]++
		}
	}
	assert.Equal(t, want, recorded)
}

// The main agent's call after a subagent waits until the subagent's last
// call has returned (AIPerf's SPAWN_JOIN), though the trace records it
// earlier: with an 800 ms time to first token, agent_001 (calls at 0.3 s
// and after its first reply: the trace's subagent times read as relative to
// their markers, as agent_002's 0.1 s precedes its own) ends after 1.8 s,
// while trace_0001's second call is due at 0.6 s, once its first (about
// 0.9 s) has returned.
func TestWekaTraceMainAgentWaitsForSubagent(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 800, ITL: 1})
	dir := t.TempDir()
	writeFile(t, dir, "traces/trace_0001.json", datasetFixture(t, "weka/trace_0001.json"))
	inv := cli(t, dir, "profile", "-m", "m", "--url", m.URL, "--endpoint-type", "chat", "--streaming", "--input-file", "traces")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(onlyFile(t, dir, "profile_export.jsonl"))
	require.NoError(t, err)
	type span struct{ start, end int64 }
	at := map[string]span{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Metadata struct {
				Conv  string `json:"conversation_id"`
				Turn  int    `json:"turn_index"`
				Start int64  `json:"request_start_ns"`
				End   int64  `json:"request_end_ns"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		at[fmt.Sprintf("%s/%d", r.Metadata.Conv, r.Metadata.Turn)] = span{r.Metadata.Start, r.Metadata.End}
	}
	require.Len(t, at, 5)
	assert.GreaterOrEqual(t, at["trace_0001/1"].start, at["trace_0001::sa:agent_001/1"].end,
		"the main agent's second call waits for agent_001's last reply")
	assert.Less(t, at["trace_0001::sa:agent_002/0"].start, at["trace_0001/1"].end,
		"agent_002, spawned after the main agent's last call, runs in the background, on its own time")
}
