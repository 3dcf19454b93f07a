package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// passSearch is a monotonic search over concurrency 1 to 16 whose SLA
// every probe meets, 4 requests a probe unless args say otherwise.
func passSearch(url, tok string, args ...string) []string {
	return append([]string{"profile", "-m", "mock-model", "-u", url, "--streaming", "--ui", "none", "--tokenizer", tok,
		"--isl", "16", "--osl", "2", "--num-dataset-entries", "4", "--search-space", "concurrency:1,16:int",
		"--search-planner", "monotonic_sla", "--search-sla", "request_latency:avg:lt:100000", "--search-max-iterations", "20",
		"--artifact-dir", "s"}, args...)
}

// TestSearchResumeAfterRunsDeleteNamesTheDeletedTrial: a search resumed
// after `aiperf runs delete` of a trial its later probes were chosen from
// is refused before anything is sent, naming the probe and the cause.
// Before, it blamed a changed planner, seed or trial rule.
func TestSearchResumeAfterRunsDeleteNamesTheDeletedTrial(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := passSearch(m.URL, tinyTokenizer(t), "--request-count", "16")
	first := cli(t, dir, args...)
	require.Equal(t, ExitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "search"})
	require.NoError(t, err)
	var id int64
	for _, r := range runs {
		if r.CellLabel == "search_iter_0001__concurrency_2" {
			id = r.ID
		}
	}
	require.NotZero(t, id, "probe 1 ran at concurrency 2")
	del := cli(t, dir, "runs", "delete", strconv.FormatInt(id, 10))
	require.Equal(t, ExitOK, del.code, del.stderr)
	sent := m.control().InferenceRequests

	again := cli(t, dir, append(args, "--resume")...)
	assert.Equal(t, ExitUsage, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	assert.Contains(t, again.stderr, `search "search": probe 1 (concurrency 2) has 0 trials in the store, fewer than it ran`)
	assert.Contains(t, again.stderr, "a stored trial of the search was deleted (aiperf runs delete), and the probes after it were chosen from it")
	assert.Contains(t, again.stderr, "nothing was sent: start it anew without --resume")
	assert.NotContains(t, again.stderr, "planner, seed or trial rule")
	assert.Equal(t, sent, m.control().InferenceRequests, "nothing was sent")
	sw, err := db.ListSweeps(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, "complete", sw[0].Status, "the refused resume left the search as it was")
}

// TestSearchStoppedUndrivenSaysWhereAndWhy: a search that stops before a
// load its --request-count cannot drive says so in its answer, printed
// under --ui none and stored, and compares its trials with a grid of the
// loads it drove: 1 to 4 at 4 requests a probe, not 1 to 16.
func TestSearchStoppedUndrivenSaysWhereAndWhy(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, passSearch(m.URL, tinyTokenizer(t), "--request-count", "4")...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	want := "concurrency: 4 passed (one trial), nothing failed; concurrency above 4 not driven: --request-count 4 cannot drive them; " +
		"3 probes, 3 trials against 4 for a 4-cell grid"
	assert.Contains(t, inv.stdout, "search search: "+want)
	db := openStore(t, dir)
	sw, err := db.ListSweeps(context.Background(), 0)
	require.NoError(t, err)
	require.Len(t, sw, 1)
	assert.Equal(t, want, sw[0].Answer)
	var doc search.HistoryDoc
	readJSONInto(t, filepath.Join(dir, "s", runner.HistoryFile), &doc)
	require.NotNil(t, doc.ConvergenceReason)
	assert.Equal(t, runner.ReasonUndriven, *doc.ConvergenceReason)
	assert.Equal(t, search.GridDoc{Cells: 4, Trials: 4}, doc.GridEquivalent)
	require.NotNil(t, doc.Undriven)
	assert.Equal(t, 4.0, doc.Undriven.Driven[0].Hi)
}

// TestSearchScriptRefusals: search()'s cooldown is bounded as sweep()'s; a
// planner naming one option twice is refused; a profile's api_key reads
// back redacted, so no sweep is named after it. Each at its line, exit 2,
// nothing sent, the secret nowhere in the output.
func TestSearchScriptRefusals(t *testing.T) {
	subprocesses(t) // should a sweep wrongly start a trial, the child is aiperf, not this test binary again
	m := startMock(t, mock.Config{Fast: true})
	const base = `base = profile(model = "mock-model", url = vars["url"], request_count = 8, api_key = vars.get("key", "none"))
`
	for name, tc := range map[string]struct{ src, msg string }{
		"a cooldown over a year": {`search(name = "s", base = base, space = {"concurrency": [1, 4]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = 1e10)`,
			`x.star:2:7: search: cooldown_seconds must be at most 31536000 seconds (one year), got 1e+10`},
		"an infinite cooldown": {`search(name = "s", base = base, space = {"concurrency": [1, 4]}, sla = ["request_latency:p99:lt:9"], cooldown_seconds = float("inf"))`,
			`x.star:2:7: search: cooldown_seconds must be a finite number, got +Inf`},
		"one option twice": {"def f(h):\n    return {\"phases.profiling.concurrency\": 2, \"concurrency\": 3}\n" +
			`search(name = "s", base = base, space = {"concurrency": [1, 4]}, sla = ["request_latency:p99:lt:9"], planner = f)`,
			`phases.profiling.concurrency and concurrency name one parameter, concurrency: give it once`},
		"a sweep named by the key": {`sweep(name = base.api_key, base = base)`, `x.star:2:6: sweep: name "<redacted>" may only use letters`},
		"the key as a value":       {`sweep(name = "e", base = base, matrix = {"model": [base.api_key, "b"]})`, `model: <redacted> is what a profile's secret reads back as`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			script := writeFile(t, dir, "x.star", base+tc.src+"\n")
			for _, verb := range [][]string{{"plan"}, {"sweep", "--ui", "none"}} {
				inv := cli(t, dir, append(verb, script, "--set", "url="+m.URL, "--set", "key=SECRETKEYVALUE123456")...)
				assert.Equal(t, ExitUsage, inv.code, "%s\nstdout:\n%s\nstderr:\n%s", verb, inv.stdout, inv.stderr)
				assert.Contains(t, inv.stderr, tc.msg, verb)
				assert.NotContains(t, inv.stdout+inv.stderr, "SECRETKEYVALUE123456", verb)
			}
			assert.Zero(t, m.control().InferenceRequests, "nothing was sent")
		})
	}
}
