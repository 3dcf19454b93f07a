package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// productionQueries is the 5-line trace of AIPerf's trace-benchmarking
// tutorial, as its `cat > production_queries.jsonl` creates it.
const productionQueries = `{"text_input": "What is the capital of France?", "output_length": 20}
{"text_input": "Explain quantum computing in simple terms.", "output_length": 100}
{"text_input": "Write a Python function to calculate fibonacci numbers.", "output_length": 150}
{"text_input": "Summarize the main causes of World War II.", "output_length": 200}
{"text_input": "How do neural networks learn?", "output_length": 80}
`

// TestTraceTutorials runs the command lines of AIPerf's trace tutorials
// unchanged against the mock.
func TestTraceTutorials(t *testing.T) {
	for name, c := range map[string]tutorial{
		"trace benchmarking": {
			doc: "docs/tutorials/trace-benchmarking.md (Running Basic Trace Benchmark): each line becomes exactly one request",
			args: []string{"profile", "--model", "Qwen/Qwen3-0.6B", "--endpoint-type", "chat",
				"--endpoint", "/v1/chat/completions", "--streaming", "--url", "localhost:8000",
				"--input-file", "production_queries.jsonl", "--custom-dataset-type", "mooncake_trace",
				"--concurrency", "2", "--warmup-request-count", "1"},
			files: map[string]string{"production_queries.jsonl": productionQueries},
			mock:  mock.Config{Fast: true},
			check: func(t *testing.T, dir string) {
				exp := onlyExport(t, dir)
				assert.Equal(t, 5.0, metricAvg(t, exp, "request_count"), "5 lines, 5 requests")
				sent := map[string]int{}
				osl := map[float64]int{}
				for _, r := range profilingRecords(t, dir) {
					sent[r.Metadata.ConversationID]++
					var n float64
					require.NoError(t, json.Unmarshal(r.Metrics["output_sequence_length"].Value, &n))
					osl[n]++
				}
				assert.Equal(t, map[string]int{"production_queries.jsonl:1": 1, "production_queries.jsonl:2": 1,
					"production_queries.jsonl:3": 1, "production_queries.jsonl:4": 1, "production_queries.jsonl:5": 1}, sent,
					"every line exactly once")
				assert.Equal(t, map[float64]int{20: 1, 100: 1, 150: 1, 200: 1, 80: 1}, osl, "each line's output_length")
			},
		},
	} {
		t.Run(name, func(t *testing.T) { c.run(t, nil) })
	}
}

// exportRecord is the part of a profile_export.jsonl record the trace
// tests read.
type exportRecord struct {
	Metadata struct {
		ConversationID string `json:"conversation_id"`
		Phase          string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
}

// profilingRecords reads the profiling phase's records of the one run
// under dir/artifacts.
func profilingRecords(t *testing.T, dir string) []exportRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "artifacts", "*", "profile_export.jsonl"))
	require.Len(t, files, 1)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	defer f.Close()
	var out []exportRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r exportRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Metadata.Phase == "profiling" {
			out = append(out, r)
		}
	}
	require.NoError(t, sc.Err())
	return out
}
