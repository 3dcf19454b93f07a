package artifacts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCollate pools what AIPerf pools: the error-free profiling records'
// numeric values (a null, a list, a warmup or failed request, a line that
// is not a record left out), a run without records counted but adding
// nothing, the failed runs listed.
func TestCollate(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	require.NoError(t, os.WriteFile(a, []byte(`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":10,"unit":"ms"},"inter_chunk_latency":{"value":[1,2],"unit":"ms"},"time_to_first_token":{"value":null}},"error":null}
{"metadata":{"benchmark_phase":"warmup"},"metrics":{"request_latency":{"value":1000}},"error":null}
{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":2000}},"error":{"code":500,"type":"E","message":"m"}}
not json

{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":20,"unit":"ms"},"time_to_first_token":{"value":4}},"error":null}
`), 0o644))
	b := filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.WriteFile(b, []byte(`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":30}}}`+"\n"), 0o644))
	c, err := Collate("v", []CollatedRun{{"run_0001", a}, {"run_0002", b}, {"run_0003", ""}},
		[]FailedRun{{"run_0004", "boom"}}, 1.5)
	require.NoError(t, err)
	assert.Equal(t, CollatedMetadata{AggregationType: "detailed", NumProfileRuns: 4, NumSuccessfulRuns: 3,
		FailedRuns: []FailedRun{{"run_0004", "boom"}}, RunLabels: []string{"run_0001", "run_0002", "run_0003"}, CooldownSeconds: 1.5}, c.Metadata)
	assert.Equal(t, map[string]CollatedMetric{
		"request_latency": {
			Combined: CollatedStats{Mean: 20, Std: 10, P50: 20, P90: 28, P95: 29, P99: 29.8, Count: 3},
			PerRun:   []CollatedPerRun{{"run_0001", 15, 2}, {"run_0002", 30, 1}},
		},
		"time_to_first_token": {
			Combined: CollatedStats{Mean: 4, P50: 4, P90: 4, P95: 4, P99: 4, Count: 1},
			PerRun:   []CollatedPerRun{{"run_0001", 4, 1}},
		},
	}, c.Metrics)
}
