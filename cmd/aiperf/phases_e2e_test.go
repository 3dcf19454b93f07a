package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// A config file's named phases get AIPerf's phase-scoped artifacts: each
// phase's own summary under phases/<name>/, the server's metrics over it,
// and phase_manifest.json listing them; the root exports stay the
// aggregate of the profiling phases.
func TestNamedPhasesWriteTheirOwnExports(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	phases := "  phases:\n    - {name: warmup, kind: warmup, concurrency: 1, requests: 2}\n" +
		"    - {name: baseline_traffic, kind: profiling, concurrency: 1, requests: 3}\n" +
		"    - {name: stress, kind: profiling, concurrency: 2, requests: 4}"
	writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "", phases))
	inv := cli(t, dir, "profile", "-f", "bench.yaml", "--ui", "none", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	out := filepath.Join(dir, "out")
	assert.Equal(t, 7.0, metricAvg(t, readJSON(t, filepath.Join(out, "profile_export_aiperf.json")), "request_count"),
		"the root export is both profiling phases")
	manifest := readJSON(t, filepath.Join(out, "phase_manifest.json"))
	entries, _ := manifest["phases"].([]any)
	require.Len(t, entries, 3)
	want := []struct {
		name, kind string
		profiling  any
		requests   float64
	}{{"warmup", "warmup", nil, 2}, {"baseline_traffic", "profiling", 0.0, 3}, {"stress", "profiling", 1.0, 4}}
	for i, w := range want {
		e := entries[i].(map[string]any)
		assert.Equal(t, float64(i), e["phase_index"])
		assert.Equal(t, w.profiling, e["profiling_index"], w.name)
		assert.Equal(t, w.name, e["phase_name"])
		assert.Equal(t, w.kind, e["phase_kind"])
		assert.Equal(t, w.requests, e["request_count"], w.name)
		assert.Equal(t, "phases/"+w.name+"/profile_export_aiperf.json", e["metrics_json"])
		own := readJSON(t, filepath.Join(out, e["metrics_json"].(string)))
		assert.Equal(t, w.requests, metricAvg(t, own, "request_count"), "%s's own export holds its requests alone", w.name)
		assert.FileExists(t, filepath.Join(out, e["metrics_csv"].(string)))
		if w.kind == "profiling" {
			require.Contains(t, e, "server_metrics_json", w.name)
			assert.FileExists(t, filepath.Join(out, e["server_metrics_json"].(string)))
		}
	}
}
