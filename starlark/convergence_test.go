package starlark_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/starlark"
)

// TestSweepConvergence: sweep(convergence = {...}) is each cell's
// criterion, checked as the --convergence-* flags are.
func TestSweepConvergence(t *testing.T) {
	sweeps := loadScript(t, `
sweep(name = "c", base = profile(model = "m", streaming = True), trials = 5,
      convergence = {"metric": "time_to_first_token", "stat": "p99", "mode": "cv", "threshold": 0.1})
`, starlark.Options{})
	require.Len(t, sweeps, 1)
	assert.Equal(t, &search.Convergence{Metric: "time_to_first_token", Stat: "p99", Mode: "cv", Threshold: 0.1}, sweeps[0].Convergence)

	for src, want := range map[string]string{
		`sweep(name = "c", base = profile(model = "m"), convergence = {"metric": "request_latency"})`:                                                    "give --num-profile-runs N (N ≥ 2) as the cap",
		`sweep(name = "c", base = profile(model = "m"), trials = 3, convergence = {"metric": "ttft"})`:                                                   `"ttft" is not a metric of ours`,
		`sweep(name = "c", base = profile(model = "m"), trials = 3, convergence = {"metric": "request_latency", "x": 1})`:                                "convergence: unknown key",
		`sweep(name = "c", base = profile(model = "m"), trials = 3, convergence = {"metric": "request_latency", "mode": "distribution", "stat": "p99"})`: "distribution compares every request's value",
		`sweep(name = "c", base = profile(model = "m", streaming = True), trials = 4, matrix = {"streaming": [True, False]},
		       convergence = {"metric": "time_to_first_token"})`: "time_to_first_token is a streaming-only metric (cell streaming_false)",
	} {
		_, err := loadFiles(t, map[string]string{"sweeps.star": src}, starlark.Options{})
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), want, src)
	}
}
