package starlark_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/starlark"
)

// profile(...) takes the trace-replay controls by their AIPerf names.
func TestTraceReplayOptions(t *testing.T) {
	sweeps := loadScript(t, `
sweep(name = "replay", base = profile(model = "m", input_file = "trace.jsonl", custom_dataset_type = "mooncake_trace",
    trace_session_sample_ratio = 0.25, max_idle_gap_cap_seconds = 2, trace_idle_gap_cap_seconds = 1,
    open_loop_replay = False, force_min_tokens = True))
`, starlark.Options{})
	require.Len(t, sweeps, 1)
	require.NotEmpty(t, sweeps[0].Cells)
	r := sweeps[0].Cells[0].Profile.TraceReplay
	assert.Equal(t, plan.Ptr(0.25), r.TraceSessionSampleRatio)
	assert.Equal(t, plan.Ptr(2.0), r.MaxIdleGapCapSeconds)
	assert.Equal(t, plan.Ptr(1.0), r.TraceIdleGapCapSeconds)
	assert.False(t, r.OpenLoop())
	assert.Equal(t, plan.Ptr(true), r.ForceMinTokens)
}
