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

// TestMultiRunConvergence: --convergence-* on a plain --num-profile-runs
// run (AIPerf's adaptive multi-run) stops once the cell's statistic is
// stable after min(3, N) trials, says so, and aggregates the trials that
// ran; a config file's multi_run.convergence does the same. The mock's
// fixed 40 ms TTFT makes the request latency's spread between trials far
// below the cv threshold.
func TestMultiRunConvergence(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 40, ITL: 1})
	first := t.TempDir()
	inv := cli(t, first, quick(m.URL, "--tokenizer", tok, "--request-count", "3", "--num-profile-runs", "6",
		"--convergence-metric", "request_latency", "--convergence-mode", "cv", "--convergence-threshold", "0.9",
		"--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	const converged = "converged: base after 3 of 6 trials (convergence: request_latency.avg cv "
	assert.Contains(t, inv.stdout, converged, "the table's note, from the store")
	assert.NotContains(t, inv.stderr, converged, "said once")
	assert.Regexp(t, `│ base +│ +3 │`, inv.stdout, "three trials, none missing: the other three were not needed")
	assert.Equal(t, 9, m.control().InferenceRequests, "three trials of three requests")
	later := cli(t, first, "compare", "--sweep", "profile")
	require.Equal(t, ExitOK, later.code, later.stderr)
	assert.Contains(t, later.stdout, converged, "the store remembers why the cell stopped")
	require.Equal(t, ExitOK, cli(t, first, "runs", "delete", "2").code)
	later = cli(t, first, "compare", "--sweep", "profile")
	assert.Regexp(t, `│ base +│ +2/3 │`, later.stdout, "a trial deleted since is missing, from the three it converged after")
	assert.Contains(t, later.stdout, converged)
	agg := readJSON(t, filepath.Join("out", "aggregate", "profile_export_aiperf_aggregate.json"))
	assert.EqualValues(t, 3, agg["metadata"].(map[string]any)["num_profile_runs"])
	_, err := os.Stat(filepath.Join("out", "profile_runs", "run_0004"))
	assert.True(t, os.IsNotExist(err), "no fourth trial")

	dir := t.TempDir()
	m = startMock(t, mock.Config{TTFT: 40, ITL: 1})
	cfg := writeFile(t, dir, "bench.yaml", strings.Join([]string{
		`schemaVersion: "2.0"`,
		"multi_run: {num_runs: 5, convergence: {metric: request_latency, mode: cv, threshold: 0.9}}",
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + m.URL + "', streaming: true}",
		"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
		"  phases: {type: concurrency, concurrency: 1, requests: 2}",
	}, "\n"))
	inv = cli(t, dir, "config", "validate", cfg)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "1 cell × 5 trials; each cell stops adding trials once request_latency.avg cv < 0.9, after at least 3")
	inv = cli(t, dir, "profile", "--config", cfg, "--tokenizer", tok, "--ui", "none", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "converged: base after 3 of 5 trials")
	assert.Equal(t, 6, m.control().InferenceRequests)
}

// TestConvergenceFlagErrors: each misuse exits 2 naming the flag, before
// any request.
func TestConvergenceFlagErrors(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--convergence-metric", "request_latency"}, "--convergence-metric stops adding trials to a cell: give --num-profile-runs N (N ≥ 2)"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "ttft"}, `--convergence-metric "ttft" is not a metric of ours`},
		{[]string{"--num-profile-runs", "3", "--convergence-mode", "cv"}, "--convergence-mode need --convergence-metric"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-stat", "p42"}, `--convergence-stat "p42" must be one of`},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-mode", "distribution",
			"--export-level", "summary"}, "drop --export-level summary"},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-mode", "ks"}, `--convergence-mode "ks" is not ci_width, cv or distribution`},
		{[]string{"--num-profile-runs", "3", "--convergence-metric", "request_latency", "--convergence-threshold", "1.5"}, "--convergence-threshold 1.5 must be between 0 and 1"},
		{[]string{"--num-profile-runs", "4", "--convergence-metric", "goodput"}, "--convergence-metric goodput needs --goodput's SLOs"},
		{[]string{"--num-profile-runs", "4", "--convergence-metric", "request_throughput", "--convergence-stat", "p99"},
			"--convergence-stat p99: request_throughput has one value a run, which is its avg"},
		{[]string{"--num-profile-runs", "4", "--convergence-metric", "inter_chunk_latency", "--convergence-mode", "distribution"},
			"--convergence-mode distribution compares the per-request values of a metric, and inter_chunk_latency has none"},
	} {
		inv := cli(t, "", quick(m.URL, append([]string{"--request-count", "1"}, c.args...)...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", c.args, inv.stderr)
		assert.Contains(t, inv.stderr, c.want, c.args)
	}
	assert.Zero(t, m.control().InferenceRequests)

	bad := writeFile(t, t.TempDir(), "bad.yaml", strings.Join([]string{
		`schemaVersion: "2.0"`,
		"multi_run: {num_runs: 3, convergence: {metric: ttft}}",
		"benchmark: {model: m, endpoint: {url: '" + m.URL + "'}}",
	}, "\n"))
	inv := cli(t, "", "config", "validate", bad)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, `bad.yaml: multi_run.convergence (as the flag): --convergence-metric "ttft" is not a metric of ours`)
}

// TestConvergenceInAFileAndOnCells: a --convergence-* flag beats its key of
// multi_run.convergence, key by key; the criterion is checked against every
// cell of a file's sweep, the same way by config validate and by profile
// (exit 2, naming the cell, before any request); and a cell that runs all
// its trials without converging says on what.
func TestConvergenceInAFileAndOnCells(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 40, ITL: 1})
	dir := t.TempDir()
	file := func(name, streaming, convergence string, sweep ...string) string {
		return writeFile(t, dir, name, strings.Join(append([]string{
			`schemaVersion: "2.0"`,
			"multi_run: {num_runs: 4, convergence: " + convergence + "}",
			"benchmark:",
			"  model: mock-model",
			"  endpoint: {url: '" + m.URL + "', streaming: " + streaming + "}",
			"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
			"  phases: {type: concurrency, concurrency: 1, requests: 2}",
		}, sweep...), "\n"))
	}
	mixed := file("mixed.yaml", "true", "{metric: time_to_first_token}", "sweep: {parameters: {endpoint.streaming: [true, false]}}")
	for _, args := range [][]string{{"config", "validate", mixed}, {"profile", "--config", mixed, "--tokenizer", tok, "--ui", "none"}} {
		inv := cli(t, dir, args...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", args, inv.stderr)
		assert.Contains(t, inv.stderr, "--convergence-metric time_to_first_token is a streaming-only metric (cell streaming_false)", args)
	}
	streamed := file("streamed.yaml", "false", "{metric: time_to_first_token}", "sweep: {parameters: {endpoint.streaming: [true]}}")
	inv := cli(t, dir, "config", "validate", streamed)
	assert.Equal(t, ExitOK, inv.code, "every cell streams: %s", inv.stderr)
	assert.Zero(t, m.control().InferenceRequests)

	strict := file("strict.yaml", "true", "{metric: request_latency, mode: cv, threshold: 0.9}")
	inv = cli(t, dir, "profile", "--config", strict, "--tokenizer", tok, "--ui", "none", "--artifact-dir", "strict",
		"--convergence-threshold", "0.000001")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 8, m.control().InferenceRequests, "the flag's threshold, not the file's 0.9: all four trials ran")
	assert.Regexp(t, `not converged: base after 4 of 4 trials \(convergence: request_latency.avg cv \S+ ≥ 1e-06\)`, inv.stderr)
}
