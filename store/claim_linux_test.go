package store_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// livePID is the id of a running process that is not this one (a sleep,
// killed when the test ends).
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// TestClaimOfAReusedPidIsTakenOver: a killed aiperf's claim whose pid a
// live process holds again is taken over, not refused as "in use by
// another aiperf": the claim records its process's start, and the process
// with that pid now started at another time. Such a claim used to be held
// for good: a sweep killed as a container's pid 1 could never be resumed
// (the resuming aiperf, pid 1 again, refused its own pid), and a killed
// run whose pid another program took stayed "running", and could not be
// deleted, without hand-written SQL.
func TestClaimOfAReusedPidIsTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	claim := store.SweepClaim{Name: "scan", PlanSHA256: "abc", ArtifactDir: t.TempDir()}

	t.Run("a sweep's claim with this process's pid, from an older aiperf", func(t *testing.T) {
		db := MustOpenDB(t)
		_, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		// The pid 1 of a container restarted: an older aiperf's claim (no start).
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET process = ''`))
		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		assert.Len(t, lock.TookOver, 2)
		require.NoError(t, lock.Release(ctx))
	})
	t.Run("a sweep's claim whose pid another process holds now", func(t *testing.T) {
		db := MustOpenDB(t)
		cell := testCell("scan", 1, 0)
		_, err := db.BeginSweep(ctx, store.SweepMeta{Name: "scan", PlanSHA256: "abc", Trials: 1, Cells: []plan.Cell{cell}})
		require.NoError(t, err)
		_, err = db.LockSweep(ctx, claim)
		require.NoError(t, err)
		reused := livePID(t)
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?`, reused))
		sweeps, err := db.ListSweeps(ctx, 0)
		require.NoError(t, err)
		require.Len(t, sweeps, 1)
		assert.True(t, sweeps[0].Abandoned)
		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		require.Len(t, lock.TookOver, 2)
		assert.Equal(t, reused, lock.TookOver[0].PID)
		require.NoError(t, lock.Release(ctx))
	})
	t.Run("an older claim of another live process is still held", func(t *testing.T) {
		db := MustOpenDB(t)
		_, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?, process = ''`, livePID(t)))
		_, err = db.LockSweep(ctx, claim)
		var le *store.LockedError
		require.ErrorAs(t, err, &le, "its start unknown: the pid is all there is")
	})
	t.Run("a killed run's claim whose pid another process holds now", func(t *testing.T) {
		db := MustOpenDB(t)
		in := newRun(runOpts{name: "big", records: 4})
		p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
		require.NoError(t, p.Add(ctx, in.Records[:2]))
		id, _ := p.Stored()
		require.NoError(t, store.ExecForTest(ctx, db, `UPDATE sweep_locks SET pid = ?`, livePID(t)))
		rows, err := db.ListRuns(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		assert.Equal(t, result.StatusInterrupted, rows[0].Status, "not running: its process is gone")
		run, err := db.GetRun(ctx, id, false)
		require.NoError(t, err)
		assert.Equal(t, result.StatusInterrupted, run.Status)
		require.NoError(t, db.DeleteRuns(ctx, id))
	})
	t.Run("this process's own claims hold", func(t *testing.T) {
		db := MustOpenDB(t)
		lock, err := db.LockSweep(ctx, claim)
		require.NoError(t, err)
		_, err = db.LockSweep(ctx, claim)
		var le *store.LockedError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, os.Getpid(), le.Owner.PID)
		require.NoError(t, lock.Release(ctx))
	})
}
