package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// TestSearchUndrivenSpaceRefused: a search whose every load is above the
// requests a probe sends (--search-space concurrency:50,100 with
// --request-count 8) can drive none of its probes: it is refused before
// anything is sent, exit 2, naming the flags and what to do, with no store
// row and no artifacts. Before, it ran, stopped before its first probe,
// printed nothing under --ui none and exited 0, stored as complete.
func TestSearchUndrivenSpaceRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--request-count", "8", "--ui", "none",
		"--search-space", "concurrency:50,100:int", "--search-max-iterations", "3", "--search-metric", "request_throughput",
		"--search-direction", "maximize", "--search-sla", "request_latency:p99:lt:1000", "--artifact-dir", "und")
	require.Equal(t, ExitUsage, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, `search "search": --search-space concurrency:50,100:int: no probe of the space can be driven: `+
		"at concurrency 50, its concurrency 50 is more than the 8 requests it sends: at most 8 are ever in flight; nothing was sent: "+
		"give a --request-count of at least 100 (the space's highest load: a search may probe any load first), "+
		"a space starting at a load of 8 or below, or a --benchmark-duration")
	assert.NoFileExists(t, filepath.Join(dir, "und", runner.HistoryFile))
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))

	script := writeFile(t, dir, "s.star", `
base = profile(model = "mock-model", url = vars["url"], request_count = 8)
search(name = "s", base = base, space = {"concurrency": [50, 100]}, sla = ["request_latency:p99:lt:1000"])
`)
	inv = cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--ui", "none")
	require.Equal(t, ExitUsage, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, `s.star:3: search "s": space concurrency:50,100:int: no probe of the space can be driven`)
	assert.Contains(t, inv.stderr, "give the base profile a request_count of at least 100 (the space's highest load)")
	c := m.control()
	assert.Zero(t, c.InferenceRequests+c.ResetCount, "nothing was sent")
}

// TestSearchThatDrivesNothingFails: a search whose space holds loads it
// can drive (concurrency 1 to 100, 8 requests a probe) but whose first
// probe is one it cannot (the bayesian planner's first point, 69 under seed
// 0) stops before it having driven nothing: under --ui none it still says
// why, exits 1 (a runtime failure) and is stored as failed, not complete.
func TestSearchThatDrivesNothingFails(t *testing.T) {
	subprocesses(t) // were a probe run, its trial would run as aiperf
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--request-count", "8", "--ui", "none",
		"--search-space", "concurrency:1,100:int", "--search-planner", "bayesian", "--search-random-seed", "0",
		"--search-max-iterations", "3", "--search-metric", "request_throughput", "--search-direction", "maximize",
		"--search-sla", "request_latency:p99:lt:1000", "--artifact-dir", "und")
	require.Equal(t, ExitFailure, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, `search "search": no probe was driven: it stopped (undriven_load) before its first probe, concurrency 69, `+
		"which cannot be driven: its concurrency 69 is more than the 8 requests it sends")
	assert.Contains(t, inv.stderr, "give a --request-count of at least the loads searched, or a --benchmark-duration")
	var doc search.HistoryDoc
	readJSONInto(t, filepath.Join(dir, "und", runner.HistoryFile), &doc)
	require.NotNil(t, doc.ConvergenceReason)
	assert.Equal(t, runner.ReasonUndriven, *doc.ConvergenceReason)
	db := openStore(t, dir)
	sw, err := db.ListSweeps(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, sw, 1)
	assert.Equal(t, store.KindSearch, sw[0].Kind)
	assert.Equal(t, "failed", sw[0].Status)
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
}
