package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestGoodputOnAnyRecordMetric: --goodput takes any per-request metric, as
// AIPerf's, each in AIPerf's direction: an objective on the OSL or the
// prefill throughput per user (LARGER_IS_BETTER) is a floor, so every
// request of 16 tokens meets output_sequence_length:10 and is counted
// good exactly when its own per-request values meet both. A misspelt tag
// is refused with its nearest tag (exit 2) before anything is sent.
func TestGoodputOnAnyRecordMetric(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--endpoint-type", "chat", "--streaming", "--url", m.URL,
		"--request-count", "6", "--concurrency", "2", "--isl", "32", "--osl", "16", "--no-store", "--ui", "none",
		"--goodput", "output_sequence_length:10 prefill_throughput_per_user:1", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	good := 0.0
	lines := jsonlMetrics(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 6)
	for _, l := range lines {
		if l["output_sequence_length"] >= 10 && l["prefill_throughput_per_user"] >= 1 {
			good++
		}
	}
	assert.Equal(t, 6.0, good, "16 tokens each, and a prefill faster than 1 token/s")
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, good, metricAvg(t, export, "good_request_count"))
	assert.Equal(t, good/6, metricAvg(t, export, "good_request_fraction"))

	sent := m.control().InferenceRequests
	inv = cli(t, t.TempDir(), "profile", "-m", "mock-model", "--endpoint-type", "chat", "--streaming", "--url", m.URL,
		"--request-count", "6", "--no-store", "--ui", "none", "--goodput", "prefill_throughput_per_usr:1")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, `unknown metric "prefill_throughput_per_usr" (did you mean "prefill_throughput_per_user"?)`)
	assert.Equal(t, sent, m.control().InferenceRequests, "refused before any traffic")
}
