package runner_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// lockedStore is a store another process holds locked: SaveRun waits
// until its context ends (as the store's wait for a lock does), and says
// when it waits.
type lockedStore struct {
	fakeStore
	waiting chan struct{}
}

func (s *lockedStore) SaveRun(ctx context.Context, _ *result.Run, _ string) (int64, error) {
	close(s.waiting)
	<-ctx.Done()
	return 0, errors.New("gave up after 1 attempts: interrupted while waiting for another process's lock on the store")
}

// A Ctrl-C while a finished trial waits for the store's lock ends the wait
// at once; the sweep stops, says where the trial's result is kept, and a
// --resume stores that result without running the trial again.
func TestStoreWaitEndsAtACtrlCAndResumeStoresTheResult(t *testing.T) {
	sw := testSweep(1, 0, 1)
	e := &fakeExecutor{}
	locked := &lockedStore{waiting: make(chan struct{})}
	o, _ := options(t, e, locked)
	launch := e.respond
	e.respond = func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
		run := completeRun(spec, 10)
		if launch != nil {
			run, _ = launch(ctx, n, spec)
		}
		dir := o.TrialDir(sw.TrialList()[0])
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, runner.WriteResult(filepath.Join(dir, runner.ResultFile), run)) // as the child does
		return run, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-locked.waiting
		cancel()
	}()
	out, err := runWithin(t, ctx, sw, o)
	require.Error(t, err)
	assert.True(t, out.StoreFailed)
	assert.Contains(t, err.Error(), "interrupted while waiting for another process's lock")
	dir := o.TrialDir(sw.TrialList()[0])
	assert.Contains(t, err.Error(), "the trial is not stored, its exports and result.json are in "+dir+" (--resume stores it from there)")

	s := &fakeStore{}
	o.Store, o.Resume = s, true
	var progress bytes.Buffer
	o.Progress = &progress
	out, err = runWithin(t, context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, 1, out.Completed)
	assert.Len(t, e.keys(), 1, "the trial did not run again")
	require.Len(t, s.runs(), 1)
	assert.Equal(t, result.StatusComplete, s.runs()[0].Status)
	assert.Contains(t, progress.String(), "completed in an earlier run but not stored: storing its result.json (not run again)")
}

// A result.json that is not this sweep's complete trial (another sweep's,
// or a failed one) is not stored: the trial runs again.
func TestResumeRunsATrialWhoseResultIsNotItsOwn(t *testing.T) {
	sw := testSweep(1, 0, 1)
	e, s := &fakeExecutor{}, &fakeStore{}
	o, _ := options(t, e, s)
	o.Resume = true
	spec := runner.Spec{Info: result.TrialInfo{Sweep: sw.Name, SweepID: o.SweepID + 1, CellID: sw.Cells[0].ID, Trial: 1}}
	dir := o.TrialDir(sw.TrialList()[0])
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, runner.WriteResult(filepath.Join(dir, runner.ResultFile), completeRun(spec, 10)))
	_, err := runWithin(t, context.Background(), sw, o)
	require.NoError(t, err)
	assert.Len(t, e.keys(), 1, "it ran")
}

// A cell some of whose trials' KV-cache resets could not be verified is
// warned of once, when its last trial ends.
func TestUnverifiableResetIsWarnedOncePerCell(t *testing.T) {
	sw := testSweep(3, 0, 1, 2)
	e, s := &fakeExecutor{}, &fakeStore{}
	o, _ := options(t, e, s)
	e.respond = func(_ context.Context, n int, spec runner.Spec) (*result.Run, error) {
		run := completeRun(spec, 10)
		if spec.Info.CellID == sw.Cells[0].ID && n != 1 {
			run.Audit.KVReset = result.ResetUnverifiable
		}
		return run, nil
	}
	var warnings bytes.Buffer
	o.Warnings = &warnings
	_, err := runWithin(t, context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, `warning: sweep "scan" cell `+sw.Cells[0].Label+": KV cache reset unverifiable in 2 of 3 trials (the server's usage "+
		"and counters could not tell whether the cache was cleared: see `aiperf runs show` or the trial's aiperf.log)\n", warnings.String())
	assert.Equal(t, 1, strings.Count(warnings.String(), "\n"))
}
