package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// A file dataset's trace-replay keys, AIPerf's FileDataset names, set the
// profile's trace-replay controls; a bad value names the key.
func TestTraceReplayKeys(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  dataset:",
		"    type: file",
		"    path: trace.jsonl",
		"    format: mooncake_trace",
		"    trace_session_sample_ratio: 0.5",
		"    max_idle_gap_cap_seconds: 3",
		"    open_loop_replay: false",
		"    open_loop_strict: false",
		"    omit_kv_hints: false",
		"    force_min_tokens: true",
		"    trace_idle_gap_cap_seconds: 0.5",
		"    ignore_trace_delays: false",
		"    use_think_time_only: false",
		"    max_context_length: 4096",
	)
	require.NoError(t, err)
	r := f.Profile.TraceReplay
	assert.Equal(t, plan.Ptr(0.5), r.TraceSessionSampleRatio)
	assert.Equal(t, plan.Ptr(3.0), r.MaxIdleGapCapSeconds)
	assert.Equal(t, plan.Ptr(false), r.OpenLoopReplay)
	assert.Equal(t, plan.Ptr(true), r.ForceMinTokens)
	assert.False(t, r.OpenLoop())
	assert.Equal(t, plan.Ptr(0.5), r.TraceIdleGapCapSeconds)
	assert.Equal(t, plan.Ptr(4096), r.MaxContextLength)

	_, err = parse(
		"benchmark:",
		"  dataset:",
		"    type: file",
		"    path: trace.jsonl",
		"    open_loop_replay: sometimes",
	)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `bench.yaml:5: benchmark.dataset.open_loop_replay: expected false | true, got string "sometimes"`)
}
