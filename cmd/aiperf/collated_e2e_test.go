package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/artifacts"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/stats"
)

// assertCollated: DIR/aggregate/profile_export_aiperf_collated.json is
// AIPerf's collated export of the n trials under DIR/profile_runs: each
// metric's per-request values of every trial's profile_export.jsonl pooled
// (count, mean, sample std, numpy percentiles), and each trial's count and
// mean.
func assertCollated(t *testing.T, dir string, n int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "aggregate", artifacts.FileCollated))
	require.NoError(t, err)
	var c artifacts.Collated
	require.NoError(t, json.Unmarshal(b, &c))
	assert.Equal(t, "1.0.0", c.SchemaVersion)
	assert.Contains(t, c.Description, "Collated per-request metrics")
	assert.Equal(t, "detailed", c.Metadata.AggregationType)
	assert.Equal(t, n, c.Metadata.NumProfileRuns)
	assert.Equal(t, n, c.Metadata.NumSuccessfulRuns)
	assert.Empty(t, c.Metadata.FailedRuns)
	var pooled []float64
	latency := c.Metrics["request_latency"]
	require.Len(t, latency.PerRun, n)
	for k := 1; k <= n; k++ {
		label := fmt.Sprintf("run_%04d", k)
		assert.Equal(t, label, c.Metadata.RunLabels[k-1])
		var own []float64
		for _, l := range jsonlLines(t, filepath.Join(dir, "profile_runs", label, "profile_export.jsonl")) {
			own = append(own, l.Metrics["request_latency"].Value.(float64))
		}
		assert.Equal(t, artifacts.CollatedPerRun{Label: label, Mean: stats.Mean(own), Count: len(own)}, latency.PerRun[k-1])
		pooled = append(pooled, own...)
	}
	want := metrics.Compute(pooled)
	got := latency.Combined
	assert.Equal(t, len(pooled), got.Count)
	assert.InDelta(t, want.Avg, got.Mean, 1e-9)
	assert.InDelta(t, stats.StdDev(pooled), got.Std, 1e-9)
	assert.Equal(t, []float64{want.P50, want.P90, want.P95, want.P99}, []float64{got.P50, got.P90, got.P95, got.P99})
	assert.NotContains(t, c.Metrics, "inter_chunk_latency", "a list-valued metric is not pooled, as AIPerf")
}
