package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestRepliesNotStreamedHaveNoStreamingMetrics: under --streaming, a
// payload that does not ask for a stream (--extra-inputs stream:false, an
// inputs_json payload without "stream": true) is answered with one JSON
// body, which times no first token: its requests have no TTFT, ITL or
// decode time in the exports (they were the whole latency and 0 ms), an
// SLO on them counts none good, and a warning says how many replies were
// not streamed. The same run streamed has them all, every request good.
func TestRepliesNotStreamedHaveNoStreamingMetrics(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	run := func(extra ...string) (invocation, map[string]any, []map[string]float64) {
		dir := t.TempDir()
		args := append([]string{"profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none", "--no-store",
			"--request-count", "3", "--osl", "8", "--artifact-dir", "out",
			"--goodput", "inter_token_latency:60000 time_to_first_token:60000"}, extra...)
		inv := cli(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		out := filepath.Join(dir, "out")
		return inv, readJSON(t, filepath.Join(out, "profile_export_aiperf.json")), jsonlMetrics(t, filepath.Join(out, "profile_export.jsonl"))
	}
	streamingOnly := []string{"time_to_first_token", "time_to_second_token", "inter_token_latency",
		"full_response_inter_token_latency", "decode_duration", "full_decode_duration", "output_token_throughput_per_user",
		"prefill_throughput_per_user"}

	inv, export, lines := run("--extra-inputs", "stream:false")
	for _, tag := range streamingOnly {
		_, has := export[tag]
		assert.False(t, has, "the export has %s", tag)
	}
	require.Len(t, lines, 3)
	for i, l := range lines {
		for _, tag := range streamingOnly {
			_, has := l[tag]
			assert.False(t, has, "record %d has %s", i, tag)
		}
		assert.Equal(t, 8.0, l["output_sequence_length"])
		assert.Positive(t, l["request_latency"])
	}
	assert.Equal(t, 0.0, metricAvg(t, export, "good_request_count"), "no TTFT or ITL to meet the SLOs")
	assert.Contains(t, inv.stdout+inv.stderr, "3 replies under --streaming were not streamed: each arrived as one JSON body")

	inv, export, _ = run()
	for _, tag := range []string{"time_to_first_token", "inter_token_latency", "decode_duration"} {
		_, has := export[tag]
		assert.True(t, has, "the export has no %s", tag)
	}
	assert.Equal(t, 3.0, metricAvg(t, export, "good_request_count"))
	assert.NotContains(t, inv.stdout+inv.stderr, "were not streamed")
}
