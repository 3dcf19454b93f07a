package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
			sessions := map[string]int{}
			for _, r := range profilingRecords(t, dir) {
				sessions[r.Metadata.ConversationID]++
			}
			assert.Equal(t, map[string]int{"s1": 3, "s2": 2, "trace.parquet:5": 1}, sessions, "rows grouped by provided_session_id")
		},
	}
	c.run(t, nil)
}

// A Baseten trace with malformed rows is refused before any traffic:
// every problem listed with its row and column, exit 2.
func TestBasetenTraceRefusesBadRows(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.parquet", datasetFixture(t, "bad/baseten.parquet"))
	inv := cli(t, dir, "profile", "--model", "m", "--url", "http://127.0.0.1:1", "--endpoint-type", "completions",
		"--input-file", "bad.parquet", "--custom-dataset-type", "baseten_trace")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	for _, want := range []string{"5 problems", "bad.parquet:2: prompt: required", "bad.parquet:3: input_tokens: expected a non-negative integer, got -4",
		"bad.parquet:5: block_size: expected an integer of at least 1, got 0"} {
		assert.Contains(t, inv.stderr, want)
	}
}
