package main

import (
	"net/http"
	"path/filepath"
	"sync/atomic"
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

// A phase that never began (its profiler start was refused, after the
// first phase ran) is marked so in the manifest and in its export, where
// figures would be: no zero request count, no CSV, no server metrics over
// a window it never had. The phase that ran keeps its own.
func TestNamedPhaseThatNeverBeganIsMarked(t *testing.T) {
	var starts atomic.Int32
	m := startMockBehind(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/start_profile" && starts.Add(1) == 2 {
				http.Error(w, "second start broke", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	phases := "  phases:\n    - {name: p1, kind: profiling, concurrency: 1, requests: 3}\n" +
		"    - {name: p2, kind: profiling, concurrency: 1, requests: 3}"
	writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "\n    server_profiler: true", phases))
	inv := cli(t, dir, "profile", "-f", "bench.yaml", "--ui", "none", "--no-store")
	require.Equal(t, ExitFailure, inv.code, inv.stderr)

	out := filepath.Join(dir, "out")
	entries, _ := readJSON(t, filepath.Join(out, "phase_manifest.json"))["phases"].([]any)
	require.Len(t, entries, 2)
	ran, never := entries[0].(map[string]any), entries[1].(map[string]any)
	assert.Equal(t, 3.0, ran["request_count"])
	assert.NotContains(t, ran, "never_began")
	assert.Equal(t, true, never["never_began"])
	assert.Contains(t, never["never_began_reason"], "the run failed before it began: server profiler start")
	assert.Contains(t, never["never_began_reason"], "second start broke")
	for _, key := range []string{"request_count", "error_request_count", "metrics_csv", "server_metrics_json"} {
		assert.NotContains(t, never, key)
	}
	own := readJSON(t, filepath.Join(out, "phases", "p2", "profile_export_aiperf.json"))
	assert.Equal(t, true, own["never_began"])
	assert.Equal(t, never["never_began_reason"], own["never_began_reason"])
	assert.Equal(t, false, own["was_cancelled"])
	assert.NotContains(t, own, "request_count", "no figures for a phase that never ran")
	assert.NoFileExists(t, filepath.Join(out, "phases", "p2", "profile_export_aiperf.csv"))
	assert.NoFileExists(t, filepath.Join(out, "phases", "p2", "server_metrics.json"))
	assert.Equal(t, 3.0, metricAvg(t, readJSON(t, filepath.Join(out, "phases", "p1", "profile_export_aiperf.json")), "request_count"))
}
