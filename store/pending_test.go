package store_test

import (
	"context"
	"database/sql"
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
// (SQLite's own busy wait would hold it for 30 s, whatever the context
// says), and says why; once the lock is gone a batch goes in even from an
// interrupted run.
func TestPendingAddStopsWaitingWhenInterrupted(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	defer other.Close()
	lock, err := other.Begin() // another process's writer, holding the lock
	require.NoError(t, err)
	_, err = lock.Exec(`CREATE TABLE held (x)`)
	require.NoError(t, err)

	in := newRun(runOpts{name: "big", records: 4})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	err = p.Add(interrupted, in.Records[:2])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted while waiting for another process's lock on the store (context canceled)")

	require.NoError(t, lock.Rollback())
	q := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, q.Add(interrupted, in.Records[2:]), "no wait: the Ctrl-C has nothing to cut")
	id, n := q.Stored()
	assert.NotZero(t, id)
	assert.Equal(t, 2, n)
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
