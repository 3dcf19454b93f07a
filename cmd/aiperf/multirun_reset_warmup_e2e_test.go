package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// warmupsPerTrial counts, for each trial in the mock's control log, the
// inference requests sent before its profiler start: its warmup. A trial
// starts at its reset when there is one, else after the previous trial's
// profiler stop.
func warmupsPerTrial(m *mockServer) []int {
	var out []int
	n, open := 0, true
	for _, e := range m.control().Events {
		switch e.Kind {
		case mock.EventReset:
			n, open = 0, true
		case mock.EventRequestStart:
			n++
		case mock.EventStartProfile:
			if open {
				out = append(out, n)
			}
			open = false
		case mock.EventStopProfile:
			n, open = 0, true
		}
	}
	return out
}

// TestResetKeepsWarmupEveryTrial: with a KV-cache reset before each trial,
// every trial of --num-profile-runs runs its warmup (the reset emptied the
// cache the first trial's warmup filled), said once in a note; without a
// reset only the first does (AIPerf's default); the flag given explicitly
// with a reset is not applied, with a warning.
func TestResetKeepsWarmupEveryTrial(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	base := func(url string, extra ...string) []string {
		return quick(url, append([]string{"--tokenizer", tok, "--request-count", "2", "--warmup-request-count", "3",
			"--num-profile-runs", "3", "--server-profiler", "--artifact-dir", "out"}, extra...)...)
	}

	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, "", base(m.URL, "--reset-kv-cache")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, []int{3, 3, 3}, warmupsPerTrial(m), "every trial warms up after its reset")
	assert.Equal(t, 3, m.control().ResetCount)
	assert.Equal(t, 3*3+3*2, m.control().InferenceRequests)
	assert.Equal(t, 1, strings.Count(inv.stderr, plan.ResetKeepsWarmupNote), "the note, once: %s", inv.stderr)

	m = startMock(t, mock.Config{Fast: true})
	inv = cli(t, "", base(m.URL)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, []int{3, 0, 0}, warmupsPerTrial(m), "without a reset only the first trial warms up")
	assert.NotContains(t, inv.stderr, plan.ResetKeepsWarmupNote)

	m = startMock(t, mock.Config{Fast: true})
	inv = cli(t, "", base(m.URL, "--reset-kv-cache", "--no-profile-run-disable-warmup-after-first")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, []int{3, 3, 3}, warmupsPerTrial(m))
	assert.NotContains(t, inv.stderr, plan.ResetKeepsWarmupNote, "nothing to say: the user asked for every warmup")

	// AIPerf accepts the two together: the flag is not applied, and the
	// warning says why.
	m = startMock(t, mock.Config{Fast: true})
	inv = cli(t, "", base(m.URL, "--reset-kv-cache", "--profile-run-disable-warmup-after-first")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "warning: --profile-run-disable-warmup-after-first is not applied with a KV-cache reset")
	assert.Equal(t, []int{3, 3, 3}, warmupsPerTrial(m))
}

// TestYAMLMultiRunResetKeepsWarmup is the reported case: a config file
// with reset_kv_cache, a warmup phase, a grid of two cells and
// multi_run.num_runs 2 runs trial-major; every trial of every cell now
// warms up after its reset (before, trial 2 of each cell was profiled with
// no warmup on the cache its reset had just emptied). config expand agrees
// and says so; without the reset, trials 2 keep skipping the warmup.
func TestYAMLMultiRunResetKeepsWarmup(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	yaml := func(url string, reset bool) string {
		hooks := "server_profiler: true"
		if reset {
			hooks = "reset_kv_cache: true, " + hooks
		}
		return strings.Join([]string{
			`schemaVersion: "2.0"`,
			"multi_run: {num_runs: 2}",
			"benchmark:",
			"  model: mock-model",
			"  endpoint: {url: '" + url + "', " + hooks + "}",
			"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
			"  phases: [{name: warmup, concurrency: 1, requests: 5}, {name: profiling, concurrency: 1, requests: 2}]",
			"sweep:",
			"  type: grid",
			"  parameters:",
			"    phases.profiling.concurrency: [1, 2]",
		}, "\n")
	}
	for _, reset := range []bool{true, false} {
		m := startMock(t, mock.Config{Fast: true})
		dir := t.TempDir()
		path := writeFile(t, dir, "y1.yaml", yaml(m.URL, reset))

		exp := cli(t, dir, "config", "expand", path)
		require.Equal(t, ExitOK, exp.code, exp.stderr)
		assert.Equal(t, reset, strings.Contains(exp.stderr, plan.ResetKeepsWarmupNote), "reset %v: config expand's note", reset)
		assert.Equal(t, map[bool]int{true: 4, false: 2}[reset], strings.Count(exp.stdout, "warmup("),
			"reset %v: the trials config expand lists with a warmup: %s", reset, exp.stdout)

		inv := cli(t, dir, "profile", "--config", path, "--tokenizer", tok, "--ui", "none", "--artifact-dir", "out")
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		if reset {
			assert.Equal(t, []int{5, 5, 5, 5}, warmupsPerTrial(m), "every trial of both cells warms up after its reset")
			assert.Equal(t, 4, m.control().ResetCount)
			assert.Equal(t, 1, strings.Count(inv.stderr, plan.ResetKeepsWarmupNote), "the note, once: %s", inv.stderr)
		} else {
			assert.Equal(t, []int{5, 5, 0, 0}, warmupsPerTrial(m), "trial-major: each cell's trial 1 warms up")
			assert.NotContains(t, inv.stderr, plan.ResetKeepsWarmupNote)
		}
		assert.Equal(t, 4, m.control().ProfilerStarts)
	}
}

// TestResetWarmupNoteNeedsAWarmup: a config file resetting the KV cache in
// a multi-run with no warmup says nothing of keeping warmups (there is
// none to keep), in config validate, config expand and the run; every
// trial runs without one.
func TestResetWarmupNoteNeedsAWarmup(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	path := writeFile(t, dir, "cold.yaml", strings.Join([]string{
		`schemaVersion: "2.0"`,
		"multi_run: {num_runs: 2}",
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + m.URL + "', reset_kv_cache: true, server_profiler: true}",
		"  tokenizer: " + tinyTokenizer(t),
		"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
		"  phases: {type: concurrency, concurrency: 1, requests: 2}",
		"sweep: {type: grid, parameters: {concurrency: [1, 2]}}",
	}, "\n"))
	for _, cmd := range []string{"validate", "expand"} {
		inv := cli(t, dir, "config", cmd, path)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.NotContains(t, inv.stderr, "disable_warmup_after_first", "config %s", cmd)
	}
	inv := cli(t, dir, "profile", "--config", path, "--ui", "none", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "disable_warmup_after_first")
	assert.Equal(t, []int{0, 0, 0, 0}, warmupsPerTrial(m))

	inv = cli(t, dir, "profile", "--config", path, "--ui", "none", "--artifact-dir", "out2", "--profile-run-disable-warmup-after-first")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "--profile-run-disable-warmup-after-first is not applied",
		"no warmup: the flag has nothing to drop, nothing to warn of")
}
