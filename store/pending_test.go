package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// A pending run is in the store with its finished records while it goes,
// stored as an interrupted run (what it stays if its process dies) and
// read as running while its process lives (TestPendingRunTellsRunning); Complete
// turns it into the finished run, its records stored once, exactly as
// SaveRun would have stored them.
func TestPendingRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "big", records: 10})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, CLICommand: in.CLICommand, StartTime: in.StartTime})
	require.NoError(t, p.Add(ctx, in.Records[6:]), "in the order requests ended, not issued")
	require.NoError(t, p.Add(ctx, in.Records[:6]))

	rows, err := db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, result.StatusRunning, rows[0].Status)
	assert.Equal(t, store.PendingError, rows[0].Error)
	assert.Equal(t, 10, rows[0].RecordCount, "what runs list and show say it holds")
	assert.True(t, rows[0].EndedAt.IsZero(), "no end: its duration is unknown")
	going, err := db.GetRun(ctx, rows[0].ID, true)
	require.NoError(t, err)
	assert.Len(t, going.Records, 10)
	assert.Equal(t, "big", going.Name)

	id, err := p.Complete(ctx, in, "artifacts/big")
	require.NoError(t, err)
	assert.Equal(t, rows[0].ID, id, "the same row")
	want, err := db.SaveRun(ctx, in, "artifacts/big") // the same run stored at once
	require.NoError(t, err)
	a, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	b, err := db.GetRun(ctx, want, true)
	require.NoError(t, err)
	assert.Equal(t, b, a)
	rows, err = db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, rows[0].RecordCount, rows[1].RecordCount)
}

// A pending run whose batches failed, or that missed records, is completed
// with the run's own records; one that never stored a batch is saved.
func TestPendingRunFallsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, add := range map[string]func(p *store.Pending, in *result.Run) error{
		"a batch failed": func(p *store.Pending, in *result.Run) error {
			require.NoError(t, p.Add(ctx, in.Records[:4]))
			err := p.Add(ctx, in.Records[3:]) // record 3 again: the batch fails whole
			require.Error(t, err)
			assert.Equal(t, err, p.Add(ctx, in.Records[4:]), "nothing is stored after a failure")
			return nil
		},
		"records missed": func(p *store.Pending, in *result.Run) error { return p.Add(ctx, in.Records[:4]) },
		"never added":    func(*store.Pending, *result.Run) error { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			db := MustOpenDB(t)
			in := newRun(runOpts{name: "big", records: 10})
			p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
			require.NoError(t, add(p, in))
			id, err := p.Complete(ctx, in, "")
			require.NoError(t, err)
			got, err := db.GetRun(ctx, id, true)
			require.NoError(t, err)
			assert.Len(t, got.Records, 10)
			assert.Equal(t, result.StatusComplete, got.Status)
			rows, err := db.ListRuns(ctx, store.RunFilter{})
			require.NoError(t, err)
			assert.Len(t, rows, 1)
		})
	}
}

// TestPendingAddStopsWaitingWhenInterrupted: a batch waiting for another
// process's write lock on the store gives up when the run is interrupted
// during that wait (SQLite's own busy wait would hold it for 30 s, whatever
// the context says), and says why; once the lock is gone a batch goes in
// even from an interrupted run.
func TestPendingAddStopsWaitingWhenInterrupted(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	release := holdLock(t, path)
	in := newRun(runOpts{name: "big", records: 4})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	interrupted := cutAdd(t, path, p, in.Records[:2])
	assert.ErrorContains(t, p.Add(interrupted, in.Records[2:]),
		"interrupted while waiting for another process's lock on the store (context canceled)")

	release()
	q := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, q.Add(interrupted, in.Records[2:]), "no wait: the Ctrl-C has nothing to cut")
	id, n := q.Stored()
	assert.NotZero(t, id)
	assert.Equal(t, 2, n)
}

// TestPendingAddAfterInterruptWaits: a batch begun after the run was
// interrupted (the last one, flushed once the load closed) finding the
// store locked waits for the lock, as the final save does: that Ctrl-C did
// not come during a wait. It gave up on the first busy reply, and the run,
// taken for one cut during a wait, was then not stored complete.
func TestPendingAddAfterInterruptWaits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	in := newRun(runOpts{name: "big", records: 4})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(context.Background(), in.Records[:1]), "the first record, stored at once")

	release := holdLock(t, path)
	waiting := store.OnLockWaitForTest(path)
	interrupted, cancel := context.WithCancel(context.Background())
	cancel() // the Ctrl-C, before the batch
	ended := make(chan error, 1)
	go func() { ended <- p.Add(interrupted, in.Records[1:]) }()
	<-waiting
	release()
	require.NoError(t, <-ended, "it waited for the lock")
	_, n := p.Stored()
	assert.Equal(t, 4, n)

	id, err := p.Complete(interrupted, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(context.Background(), id, true)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, got.Status)
	assert.Len(t, got.Records, 4)
}

// TestRunRowLoadFromConfigPhases: a run whose load a config file gave as a
// phase list (no --concurrency or --request-rate) shows its profiling
// phase's concurrency and rate, as runs list and compare read them.
func TestRunRowLoadFromConfigPhases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "yaml", records: 2})
	in.Config.Concurrency, in.Config.RequestRate = nil, nil
	in.Config.Phases = []plan.Phase{{Name: "warmup", Kind: plan.KindWarmup, Concurrency: 1},
		{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 8, Rate: 20}}
	_, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err)
	rows, err := db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.NotNil(t, rows[0].Concurrency)
	assert.Equal(t, 8, *rows[0].Concurrency)
	require.NotNil(t, rows[0].RequestRate)
	assert.Equal(t, 20.0, *rows[0].RequestRate)
}
