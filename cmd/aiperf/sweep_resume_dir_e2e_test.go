package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/runner"
)

// trialsScript is a two-cell sweep whose trials come from --set trials.
const trialsScript = smallBase + `
sweep(name = "r", base = base, matrix = {"concurrency": [1, 2]}, trials = int(vars.get("trials", "1")))
`

// aggregateMeta is a cell's aggregate metadata, as the sweep wrote it.
func aggregateMeta(t *testing.T, path string) map[string]any {
	t.Helper()
	return readJSON(t, path)["metadata"].(map[string]any)
}

// TestSweepResumeIntoAnotherArtifactDirRefused: a sweep resumed with
// another --artifact-dir than it ran in is refused before anything is
// sent, naming the directory it ran in; there, each cell's aggregate
// counts every stored trial. Before, it ran the trials left in the other
// directory, and their aggregate left out the first trial (num_profile_runs
// 2, num_successful_runs 1, failed_runs []).
func TestSweepResumeIntoAnotherArtifactDirRefused(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "r.star", trialsScript)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t), "--ui", "none"}
	first := cli(t, dir, append(args, "--set", "trials=1", "--artifact-dir", "art")...)
	require.Equal(t, ExitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	sent := m.control().InferenceRequests

	other := cli(t, dir, append(args, "--set", "trials=2", "--artifact-dir", "art2", "--resume")...)
	assert.Equal(t, ExitUsage, other.code, "stdout:\n%s\nstderr:\n%s", other.stdout, other.stderr)
	assert.Contains(t, other.stderr, `sweep "r": --resume continues sweep #1, whose stored trials are under `+filepath.Join(dir, "art")+
		" (e.g. "+filepath.Join("art", "r", "concurrency_1", "trial_0001")+"), not under "+filepath.Join(dir, "art2")+
		": a resume goes on in the --artifact-dir its sweep was started with")
	assert.Contains(t, other.stderr, "nothing was sent: give --artifact-dir "+filepath.Join(dir, "art"))
	assert.Equal(t, sent, m.control().InferenceRequests, "nothing was sent")
	assert.NoDirExists(t, filepath.Join(dir, "art2", "r"))

	same := cli(t, dir, append(args, "--set", "trials=2", "--artifact-dir", "art", "--resume")...)
	require.Equal(t, ExitOK, same.code, "stdout:\n%s\nstderr:\n%s", same.stdout, same.stderr)
	meta := aggregateMeta(t, filepath.Join(dir, "art", "r", "concurrency_1", runner.AggregateFile))
	assert.Equal(t, 2.0, meta["num_profile_runs"])
	assert.Equal(t, 2.0, meta["num_successful_runs"])
	assert.Equal(t, []any{"run_0001", "run_0002"}, meta["run_labels"])
}

// TestSweepResumeWithFewerTrialsKeepsTheAggregate: a sweep run with 3
// trials and resumed with 1 runs nothing and drops nothing: each cell's
// aggregate still counts its 3 stored trials, as the sweep's table does.
// Before, the aggregate was overwritten with one trial's.
func TestSweepResumeWithFewerTrialsKeepsTheAggregate(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, "r.star", trialsScript)
	args := []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t), "--ui", "none"}
	first := cli(t, dir, append(args, "--set", "trials=3")...)
	require.Equal(t, ExitOK, first.code, "stdout:\n%s\nstderr:\n%s", first.stdout, first.stderr)
	agg := filepath.Join(dir, "artifacts", "r", "concurrency_1", runner.AggregateFile)
	before, err := os.ReadFile(agg)
	require.NoError(t, err)
	sent := m.control().InferenceRequests

	fewer := cli(t, dir, append(args, "--set", "trials=1", "--resume")...)
	require.Equal(t, ExitOK, fewer.code, "stdout:\n%s\nstderr:\n%s", fewer.stdout, fewer.stderr)
	assert.Equal(t, sent, m.control().InferenceRequests, "no trial ran again")
	assert.Contains(t, fewer.stderr, `note: sweep "r": the store holds 4 complete trials of it past trials = 1 (up to trial 3 of a cell)`)
	meta := aggregateMeta(t, agg)
	assert.Equal(t, 3.0, meta["num_profile_runs"])
	assert.Equal(t, 3.0, meta["num_successful_runs"])
	assert.Equal(t, []any{"run_0001", "run_0002", "run_0003"}, meta["run_labels"])
	after, err := os.ReadFile(agg)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after), "the 3-trial aggregate is the same")
	assert.Equal(t, []string{"3", "3"}, tableTrials(fewer.stdout), "the table counts 3 trials a cell too")
}

// tableTrials is the trials column of a sweep table, a row per cell.
func tableTrials(out string) []string {
	var trials []string
	for line := range strings.SplitSeq(out, "\n") {
		cols := strings.Split(line, "│")
		if len(cols) > 3 && strings.TrimSpace(cols[1]) != "" && strings.TrimSpace(cols[1]) != "concurrency" {
			trials = append(trials, strings.TrimSpace(cols[2]))
		}
	}
	return trials
}
