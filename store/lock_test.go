package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// deadPID is the id of a process that has exited (and been reaped).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

func TestLockSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	host, err := os.Hostname()
	require.NoError(t, err)
	claim := store.SweepClaim{Name: "scan", PlanSHA256: "abc", ArtifactDir: "artifacts/scan"}
	absDir, err := filepath.Abs(claim.ArtifactDir)
	require.NoError(t, err)

	t.Run("a held sweep is refused, naming its owner, until released", func(t *testing.T) {
		db := MustOpenDB(t)
		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		assert.Empty(t, lock.TookOver)

		_, err = db.LockSweep(ctx, claim)
		var le *store.LockedError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, os.Getpid(), le.Owner.PID)
		assert.Equal(t, host, le.Owner.Host)
		assert.Equal(t, testNow, le.Owner.Since)
		assert.ErrorContains(t, err, `sweep "scan" is in use by another aiperf (pid `)
		assert.ErrorContains(t, err, "wait for it to end")
		assert.ErrorContains(t, err, `DELETE FROM sweep_locks WHERE token = '`)

		require.NoError(t, lock.Release(ctx))
		again, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		require.NoError(t, again.Release(ctx))
		assert.Equal(t, 0, count(t, db, `SELECT count(*) FROM sweep_locks`))
	})
	t.Run("the artifact directory is claimed too", func(t *testing.T) {
		db := MustOpenDB(t)
		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		defer lock.Release(ctx)
		other := claim
		other.PlanSHA256 = "def" // the same sweep with other --set values
		_, err = db.LockSweep(ctx, other)
		require.ErrorContains(t, err, "artifact directory "+absDir+" is in use by another aiperf")
		other.ArtifactDir = "elsewhere/scan"
		second, err := db.LockSweep(ctx, other)
		require.NoError(t, err, "another directory, another plan: no conflict")
		require.NoError(t, second.Release(ctx))
		assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM sweep_locks`), "the first claim is untouched")
	})
	t.Run("a claim whose owner on this host is gone is taken over", func(t *testing.T) {
		db := MustOpenDB(t)
		stale, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		dead := deadPID(t)
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?`, dead))

		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		require.Len(t, lock.TookOver, 2)
		assert.Equal(t, `sweep "scan"`, lock.TookOver[0].What)
		assert.Equal(t, "artifact directory "+absDir, lock.TookOver[1].What)
		assert.Equal(t, dead, lock.TookOver[0].PID)

		require.NoError(t, stale.Release(ctx), "the old owner's release")
		assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM sweep_locks WHERE pid = ?`, os.Getpid()),
			"does not remove the claims taken over")
		require.NoError(t, lock.Release(ctx))
	})
	t.Run("a claim held on another host is never taken over", func(t *testing.T) {
		db := MustOpenDB(t)
		_, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?, host = 'elsewhere'`, deadPID(t)))
		_, err = db.LockSweep(ctx, claim)
		var le *store.LockedError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, "elsewhere", le.Owner.Host)
	})
}

// TestLockSweepRace: of several connections claiming one sweep at once,
// exactly one wins.
func TestLockSweepRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	const n = 8
	dbs := make([]*store.DB, n)
	for i := range dbs {
		dbs[i] = openAt(t, path)
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		won, lost int
	)
	for _, db := range dbs {
		wg.Go(func() {
			_, err := db.LockSweep(ctx, store.SweepClaim{Name: "race", PlanSHA256: "x", ArtifactDir: "artifacts/race"})
			var le *store.LockedError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case assert.ErrorAs(t, err, &le):
				lost++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, won)
	assert.Equal(t, n-1, lost)
}

// TestListSweepsTellsAbandoned: a running sweep is abandoned when its
// claim's process on this host is gone, or it has no claim; one held on
// another host cannot be told and stays running.
func TestListSweepsTellsAbandoned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	_, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", PlanSHA256: "abc"})
	require.NoError(t, err)
	abandoned := func() bool {
		rows, err := db.ListSweeps(ctx, 0)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		return rows[0].Abandoned
	}
	assert.True(t, abandoned(), "no claim")
	lock, err := db.LockSweep(ctx, store.SweepClaim{Name: "scan", PlanSHA256: "abc", ArtifactDir: t.TempDir()})
	require.NoError(t, err)
	assert.False(t, abandoned(), "this process holds it")
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?`, deadPID(t)))
	assert.True(t, abandoned(), "its process exited")
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET host = 'elsewhere'`))
	assert.False(t, abandoned(), "another host's process cannot be told")
	require.NoError(t, lock.Release(ctx))

	other := MustOpenDB(t)
	_, err = other.BeginSweep(ctx, store.SweepMeta{Name: "old"}) // no plan digest: its claim cannot be found
	require.NoError(t, err)
	rows, err := other.ListSweeps(ctx, 0)
	require.NoError(t, err)
	assert.False(t, rows[0].Abandoned, "not known, so not said")
}

// TestDeleteRunsOfARunningSweep: a trial of a sweep that a live aiperf is
// running (its claim held) is not deleted, nor anything else given with
// it: that process would read its ended trials back as never run. Once
// the claim is released, or the sweep has ended, the run can go.
func TestDeleteRunsOfARunningSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	cell := testCell("scan", 1, 0)
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", PlanSHA256: "abc", Trials: 2, Cells: []plan.Cell{cell}})
	require.NoError(t, err)
	first, err := db.SaveRun(ctx, newRun(runOpts{records: 1, sweepID: id, cell: &cell, trial: 1}), "")
	require.NoError(t, err)
	lone, err := db.SaveRun(ctx, newRun(runOpts{records: 1}), "")
	require.NoError(t, err)
	lock, err := db.LockSweep(ctx, store.SweepClaim{Name: "scan", PlanSHA256: "abc", ArtifactDir: t.TempDir()})
	require.NoError(t, err)

	err = db.DeleteRuns(ctx, lone, first)
	var le *store.LockedError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, os.Getpid(), le.Owner.PID)
	assert.Contains(t, err.Error(), fmt.Sprintf("run %d is a trial of a sweep still running: sweep \"scan\" is in use by another aiperf", first))
	assert.Contains(t, err.Error(), "nothing was deleted")
	_, err = db.GetRun(ctx, lone, false)
	require.NoError(t, err, "all or nothing")

	require.NoError(t, lock.Release(ctx))
	require.NoError(t, db.DeleteRuns(ctx, lone, first))
}

// TestPendingRunTellsRunning: a pending run is read as running while its
// process writes it (its claim held), and cannot be deleted then; once its
// process is gone it is the interrupted run it was stored as, and one that
// completed holds no claim.
func TestPendingRunTellsRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "big", records: 4})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(ctx, in.Records[:2]))
	id, _ := p.Stored()
	status := func() string {
		rows, err := db.ListRuns(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		run, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		assert.Equal(t, rows[0].Status, run.Status, "runs list and runs show agree")
		return rows[0].Status
	}
	assert.Equal(t, result.StatusRunning, status(), "this process writes it")
	err := db.DeleteRuns(ctx, id)
	var le *store.LockedError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, err.Error(), fmt.Sprintf("run %d is still going: run %d is in use by another aiperf (pid %d", id, id, os.Getpid()))

	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET host = 'elsewhere'`))
	assert.Equal(t, result.StatusRunning, status(), "another host's process cannot be told")
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET host = ?, pid = ?`, hostname(t), deadPID(t)))
	assert.Equal(t, result.StatusInterrupted, status(), "its process exited")
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?`, os.Getpid()))

	_, err = p.Complete(ctx, in, "")
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, status())
	n, err := store.CountForTest(ctx, db, `SELECT COUNT(*) FROM sweep_locks`)
	require.NoError(t, err)
	assert.Zero(t, n, "Complete releases its claim")
	require.NoError(t, db.DeleteRuns(ctx, id))
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	require.NoError(t, err)
	return h
}
