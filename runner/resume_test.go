package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// childLike answers each trial as a child process does: its result.json in
// the trial's directory, then the run.
func childLike(ttft float64) *fakeExecutor {
	e := &fakeExecutor{}
	e.respond = func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		run := completeRun(spec, ttft)
		e.mu.Lock()
		dir := e.calls[len(e.calls)-1].dir
		e.mu.Unlock()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return run, runner.WriteResult(filepath.Join(dir, runner.ResultFile), run)
	}
	return e
}

// sweepInStore begins sw in a real store and returns options writing under
// root.
func sweepInStore(t *testing.T, sw plan.Sweep, e runner.Executor, root string) (*store.DB, runner.Options) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	id, err := db.BeginSweep(context.Background(), store.SweepMeta{Name: sw.Name, PlanSHA256: sw.Digest(), Trials: sw.Trials, Cells: sw.Cells})
	require.NoError(t, err)
	return db, runner.Options{Executor: e, Store: db, SweepID: id, Confidence: 0.95,
		TrialDir: func(tr plan.Trial) string { return filepath.Join(root, tr.Dir()) },
		CellDir:  func(c plan.Cell) string { return filepath.Join(root, "scan", c.Label) }}
}

// A resume given another --artifact-dir than the sweep ran in is refused
// before any trial, naming the directory it ran in: there, each cell's
// aggregate counts every stored trial; elsewhere it would count the new
// ones only.
func TestResumeIntoAnotherArtifactDirIsRefused(t *testing.T) {
	sw := testSweep(2, 0, 1, 2)
	first := t.TempDir()
	e := childLike(10)
	_, o := sweepInStore(t, sw, e, first)
	sw1 := sw
	sw1.Trials = 1
	_, err := runner.Run(context.Background(), sw1, o) // as an interrupted sweep: trial 1 of each cell stored
	require.NoError(t, err)

	other := t.TempDir()
	o.TrialDir = func(tr plan.Trial) string { return filepath.Join(other, tr.Dir()) }
	o.CellDir = func(c plan.Cell) string { return filepath.Join(other, "scan", c.Label) }
	o.Resume = true
	require.ErrorIs(t, runner.CheckResume(context.Background(), sw, o), runner.ErrRefused)
	out, err := runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, runner.ErrRefused)
	assert.EqualError(t, err, `sweep "scan": --resume continues sweep #1, whose stored trials are under `+first+` (e.g. `+
		filepath.Join(first, "scan", sw.Cells[0].Label, "trial_0001")+`), not under `+other+`: a resume goes on in the --artifact-dir its `+
		`sweep was started with, where each cell's aggregate counts them; nothing was sent: give --artifact-dir `+first)
	assert.Zero(t, out.Completed+out.Failed+out.Skipped)
	assert.Len(t, e.keys(), 2, "no trial ran in the other directory")
	assert.NoDirExists(t, filepath.Join(other, "scan"))

	o.TrialDir = func(tr plan.Trial) string { return filepath.Join(first, tr.Dir()) }
	o.CellDir = func(c plan.Cell) string { return filepath.Join(first, "scan", c.Label) }
	out, err = runner.Run(context.Background(), sw, o)
	require.NoError(t, err, "in the directory it was started with, it goes on")
	assert.Equal(t, 2, out.Skipped)
	assert.Equal(t, 2, out.Completed)
	agg := readAggregate(t, filepath.Join(first, "scan", sw.Cells[0].Label, runner.AggregateFile))
	assert.Equal(t, []string{"run_0001", "run_0002"}, agg.Metadata.RunLabels)
	assert.Equal(t, 2, agg.Metadata.NumProfileRuns)
}

// A stored trial whose result.json is gone from its directory refuses the
// resume too: the cell's aggregate could not count it.
func TestResumeWithAStoredTrialsFilesRemovedIsRefused(t *testing.T) {
	sw := testSweep(1, 0, 1)
	root := t.TempDir()
	e := childLike(10)
	_, o := sweepInStore(t, sw, e, root)
	_, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)
	dir := o.TrialDir(sw.TrialList()[0])
	require.NoError(t, os.Remove(filepath.Join(dir, runner.ResultFile)))
	o.Resume = true
	_, err = runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, runner.ErrRefused)
	assert.ErrorContains(t, err, "1 of its stored trials have no result.json where this run looks for them ("+sw.Cells[0].Label+" trial 1: "+dir+")")
	assert.Len(t, e.keys(), 1)
}

// A resume with fewer trials than the sweep stored (3, resumed with 1)
// runs none of them again and drops none: each cell's aggregate counts
// every stored trial, as the store and the sweep's table do.
func TestResumeWithFewerTrialsKeepsEveryStoredTrialInTheAggregate(t *testing.T) {
	sw := testSweep(3, 0, 1, 2)
	root := t.TempDir()
	e := childLike(10)
	_, o := sweepInStore(t, sw, e, root)
	_, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)

	fewer := sw
	fewer.Trials = 1
	o.Resume = true
	var warnings bytes.Buffer
	o.Warnings = &warnings
	out, err := runner.Run(context.Background(), fewer, o)
	require.NoError(t, err)
	assert.Equal(t, runner.Outcome{Total: 2, Skipped: 2}, out)
	assert.Len(t, e.keys(), 6, "nothing ran again")
	assert.Contains(t, warnings.String(), `note: sweep "scan": the store holds 4 complete trials of it past trials = 1 (up to trial 3 of a cell)`)
	for _, c := range sw.Cells {
		agg := readAggregate(t, filepath.Join(root, "scan", c.Label, runner.AggregateFile))
		assert.Equal(t, 3, agg.Metadata.NumProfileRuns, c.Label)
		assert.Equal(t, 3, agg.Metadata.NumSuccessfulRuns, c.Label)
		assert.Equal(t, []string{"run_0001", "run_0002", "run_0003"}, agg.Metadata.RunLabels, c.Label)
	}
}
