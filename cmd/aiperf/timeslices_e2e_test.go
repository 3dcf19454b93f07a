package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestTimeslicesExport: --slice-duration writes the client metrics per
// window in AIPerf's JSON and tidy CSV; the slices' request counts add up
// to the run's, each slice recomputed from its own requests.
func TestTimeslicesExport(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--benchmark-duration", "1.5", "--slice-duration", "0.5",
		"--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	slices := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf_timeslices.json"))
	list, ok := slices["timeslices"].([]any)
	require.True(t, ok)
	require.GreaterOrEqual(t, len(list), 3, "1.5 s in windows of 0.5 s")
	require.Contains(t, slices, "input_config")
	total := 0.0
	for i, x := range list {
		s := x.(map[string]any)
		assert.EqualValues(t, i, s["timeslice_index"])
		assert.EqualValues(t, 5e8, s["end_ns"].(float64)-s["start_ns"].(float64))
		total += metricAvg(t, s, "request_count")
		ttft := s["time_to_first_token"].(map[string]any)
		assert.Equal(t, "ms", ttft["unit"])
		assert.Contains(t, ttft, "p99")
	}
	assert.Equal(t, metricAvg(t, export, "request_count"), total, "every profiling request in one slice")

	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_aiperf_timeslices.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\r\n")
	assert.Equal(t, "Timeslice,Metric,Unit,Stat,Value", lines[0])
	for _, stat := range []string{"avg", "min", "max", "p50", "p90", "p95", "p99", "std"} {
		assert.Positive(t, indexOf(lines, "0,Time to First Token,ms,"+stat+","), "a row of %s", stat)
	}
	assert.Contains(t, string(b), "\r\n0,Request Count,requests,avg,")

	// A prefix names them too, as AIPerf: NAME_timeslices.{json,csv}.
	inv = cli(t, dir, quick(m.URL, "--request-count", "4", "--slice-duration", "1", "--artifact-dir", "pre",
		"--profile-export-prefix", "run.json", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "pre", "run_timeslices.json"))
	assert.FileExists(t, filepath.Join(dir, "pre", "run_timeslices.csv"))
}

// indexOf is the index of the first line starting with prefix (-1: none).
func indexOf(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}
