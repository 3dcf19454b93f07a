package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// holdLock makes another connection (another process's writer) hold the
// write lock of the store at path until the returned func releases it.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	other, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	require.NoError(t, err)
	tx, err := other.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`CREATE TABLE held (x)`)
	require.NoError(t, err)
	var done bool
	release = func() {
		if !done {
			done = true
			require.NoError(t, tx.Rollback())
			require.NoError(t, other.Close())
		}
	}
	t.Cleanup(release)
	return release
}

// A run's final save that waits for another process's lock gives up at a
// Ctrl-C during that wait (SQLite's own 30 s busy wait did not see it, and
// the retry then took the run for an interrupted one and tried for two
// minutes); a run interrupted before its save began still waits, and is
// stored once the lock is gone.
func TestSaveRunLockWait(t *testing.T) {
	t.Parallel()
	for _, pending := range []bool{false, true} {
		name := map[bool]string{false: "SaveRun", true: "Pending.Complete"}[pending]
		t.Run(name+" gives up at a Ctrl-C while it waits", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			db, release, waiting, ended := lockedCompletion(t, ctx, pending, "", &store.Retry{For: time.Hour, Every: time.Hour})
			<-waiting
			cancel()
			err := <-ended
			require.ErrorIs(t, err, context.Canceled)
			assert.Contains(t, err.Error(), "interrupted while waiting for another process's lock on the store")
			release()
			rows, err := db.ListRuns(context.Background(), store.RunFilter{})
			require.NoError(t, err)
			if pending {
				require.Len(t, rows, 1, "the records stored while it went stay")
				assert.Equal(t, result.StatusRunning, rows[0].Status, "its writer lives: interrupted once it exits")
				assert.Equal(t, 4, rows[0].RecordCount)
			} else {
				assert.Empty(t, rows)
			}
		})
		t.Run(name+" of an interrupted run waits the lock out", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the first Ctrl-C stopped the run
			db, release, waiting, ended := lockedCompletion(t, ctx, pending, result.StatusInterrupted, nil)
			<-waiting
			release()
			require.NoError(t, <-ended)
			rows, err := db.ListRuns(context.Background(), store.RunFilter{})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assert.Equal(t, 8, rows[0].RecordCount)
		})
	}
}

// lockedCompletion begins a run of 8 records with status on a new store
// (4 of them stored first when pending; retry, when given, its retries),
// makes another connection hold the store's lock, and completes the run
// with ctx in the background: it returns the store, the lock's release, a
// channel closed once the save waits for the lock, and the save's error.
func lockedCompletion(t *testing.T, ctx context.Context, pending bool, status string, retry *store.Retry) (
	db *store.DB, release func(), waiting <-chan struct{}, ended <-chan error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db = openAt(t, path)
	if retry != nil {
		db.Retry = *retry
	}
	in := newRun(runOpts{name: "locked", records: 8, status: status})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	if pending {
		require.NoError(t, p.Add(context.Background(), in.Records[:4]))
	}
	release = holdLock(t, path)
	waiting = store.OnLockWaitForTest(path)
	done := make(chan error, 1)
	go func() { _, err := p.Complete(ctx, in, ""); done <- err }()
	return db, release, waiting, done
}

// Opening a store another process holds locked gives up at a Ctrl-C during
// the wait, with the interruption (not an *UnusableError: exit 130, not 2).
func TestOpenLockWaitIsInterruptible(t *testing.T) {
	t.Parallel()
	path := storeWithRuns(t, 1)
	holdLock(t, path)
	waiting := store.OnLockWaitForTest(path)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		db, err := store.OpenContext(ctx, path)
		if err == nil {
			db.Close()
		}
		ended <- err
	}()
	<-waiting
	cancel()
	err := <-ended
	require.ErrorIs(t, err, context.Canceled)
	var ue *store.UnusableError
	assert.False(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, err.Error(), "interrupted while waiting for another process's lock on the store")
}

// Deleting runs from a locked store gives up at a Ctrl-C during the wait,
// deletes nothing and says so.
func TestDeleteRunsLockWaitIsInterruptible(t *testing.T) {
	t.Parallel()
	path := storeWithRuns(t, 2)
	db := openAt(t, path)
	release := holdLock(t, path)
	waiting := store.OnLockWaitForTest(path)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- db.DeleteRuns(ctx, 1) }()
	<-waiting
	cancel()
	err := <-ended
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "nothing was deleted")
	release()
	assert.Equal(t, 2, count(t, db, `SELECT count(*) FROM runs`))
}

// Damage to the root page of a table a run is stored in is found when the
// store is opened, before any traffic, not when the run is saved.
func TestOpenFindsDamagedRunTables(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"runs", "records", "run_stats"} {
		t.Run(table, func(t *testing.T) {
			path := storeWithRuns(t, 3)
			var root, pageSize int64
			{
				db, err := sql.Open("sqlite3", path)
				require.NoError(t, err)
				require.NoError(t, db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root))
				require.NoError(t, db.QueryRow(`PRAGMA page_size`).Scan(&pageSize))
				require.NoError(t, db.Close())
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			junk := make([]byte, pageSize)
			for i := range junk {
				junk[i] = 0xff
			}
			_, err = f.WriteAt(junk, (root-1)*pageSize)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			_, err = store.Open(path)
			unusable(t, err, path, "is damaged")
		})
	}
}

// A run that has not ended (still going, or its process killed) has no
// ended_at in the JSON of runs list, not year 1.
func TestRunRowWithoutEndOmitsEndedAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "killed", records: 2})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(ctx, in.Records))
	_, err := db.SaveRun(ctx, newRun(runOpts{name: "done", records: 2}), "")
	require.NoError(t, err)
	rows, err := db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, row := range rows {
		b, err := json.Marshal(row)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		if row.Name == "killed" {
			assert.NotContains(t, m, "ended_at", string(b))
		} else {
			assert.Contains(t, m, "ended_at")
		}
	}
}

// A statistic that is not a finite number is not stored (a NaN used to drop
// the metric's every statistic, or fail the save). Listing reads one found
// in a store as absent; a run read back keeps it (±Inf), and one not stored
// reads as NaN, not 0, so that showing and exporting say so (n/a, null).
func TestNonFiniteStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	in := newRun(runOpts{name: "nan", records: 3})
	in.Profiling.Metrics[0].Stats.Std = math.NaN() // time_to_first_token
	in.Profiling.Metrics[4].Value = math.NaN()     // request_throughput
	in.Profiling.Metrics[3].Value = math.Inf(1)    // output_token_throughput
	id, err := db.SaveRun(ctx, in, "")
	require.NoError(t, err, "a NaN does not cost the run")
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	var ttft *metrics.Metric
	for i, m := range got.Profiling.Metrics {
		assert.NotEqual(t, metrics.TagRequestThroughput, m.Tag, "a NaN scalar is not stored")
		if m.Tag == metrics.TagTTFT {
			ttft = &got.Profiling.Metrics[i]
		}
	}
	require.NotNil(t, ttft)
	require.NotNil(t, ttft.Stats)
	assert.Equal(t, 30.0, ttft.Stats.P99, "the finite statistics of the metric are kept")
	assert.True(t, math.IsNaN(ttft.Stats.Std), "the one not stored reads as NaN, not 0")

	// one written by another tool
	other, err := db.SaveRun(ctx, newRun(runOpts{name: "inf", records: 3}), "")
	require.NoError(t, err)
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE run_stats SET value = 9e999 WHERE run_id = ? AND metric = ? AND stat IN ('p99', 'value')`,
		other, metrics.TagTTFT))
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE run_stats SET value = -9e999 WHERE run_id = ? AND metric = ?`,
		other, metrics.TagRequestThroughput))
	rows, err := db.ListRuns(ctx, store.RunFilter{Stats: []string{"time_to_first_token.p99", "time_to_first_token.avg", "request_throughput.value"}})
	require.NoError(t, err)
	_, err = json.Marshal(rows)
	require.NoError(t, err, "runs list --format json")
	for _, row := range rows {
		if row.ID == other {
			assert.NotContains(t, row.Stats, "time_to_first_token.p99")
			assert.Contains(t, row.Stats, "time_to_first_token.avg")
			assert.NotContains(t, row.Stats, "request_throughput.value")
		}
	}
	run, err := db.GetRun(ctx, other, false)
	require.NoError(t, err)
	stored, throughput := metricOf(t, run, metrics.TagTTFT), metricOf(t, run, metrics.TagRequestThroughput)
	require.NotNil(t, stored.Stats)
	assert.True(t, math.IsInf(stored.Stats.P99, 1), "a stored +Inf is kept, not read as 0")
	assert.Equal(t, 40.0, stored.Stats.Max, "the finite statistics of the metric are kept")
	assert.True(t, math.IsInf(throughput.Value, -1), "a metric whose only value is -Inf is kept")

	// A count past an int's range is not wrapped to a negative count.
	require.NoError(t, store.ExecForTest(ctx, db, `UPDATE run_stats SET value = 1e300 WHERE run_id = ? AND metric = ? AND stat = 'count'`,
		other, metrics.TagTTFT))
	run, err = db.GetRun(ctx, other, false)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, metricOf(t, run, metrics.TagTTFT).Stats.Count, 0)
}

// metricOf is run's profiling metric tag.
func metricOf(t *testing.T, run *result.Run, tag string) metrics.Metric {
	t.Helper()
	m, ok := run.Profiling.Get(tag)
	require.True(t, ok, "metric %s is there", tag)
	return m
}

// A read on a full disk works and leaves the store's directory as it found
// it (no -wal or -shm file): it used to be refused as "cannot be written:
// its disk is full", leaving both behind.
func TestOpenReadOnlyOnAFullDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("a full disk needs a small tmpfs, which this user cannot mount (%v)", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	path := filepath.Join(dir, "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	_, err = db.SaveRun(context.Background(), newRun(runOpts{name: "r", records: 20}), "")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	for block := make([]byte, 4096); err == nil; {
		_, err = f.Write(block)
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, f.Close())

	for _, checked := range []bool{true, false} { // false: the disk filled after the free-space check
		if !checked {
			restore := store.NoRoomForTest(func(string) bool { return false })
			defer restore()
		}
		r, err := store.OpenReadOnly(path)
		require.NoError(t, err, "checked=%v", checked)
		rows, err := r.ListRuns(context.Background(), store.RunFilter{})
		require.NoError(t, err)
		assert.Len(t, rows, 1)
		require.NoError(t, r.Close())
		if checked {
			for _, side := range []string{path + "-wal", path + "-shm"} {
				assert.NoFileExists(t, side, "a read leaves the directory as it found it")
			}
		}
	}
}

// A Ctrl-C that ended a batch's wait for a lock came while the store was
// waited for: the run's Complete does not wait for that lock again (it used
// to, up to 30 s and then two minutes of retries), and the records its
// batches stored stay. Once the lock is gone, it stores the run whole.
func TestCompleteAfterACutLockWait(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db := openAt(t, path)
	db.Retry = store.Retry{For: time.Hour, Every: time.Hour}
	in := newRun(runOpts{name: "cut", records: 8, status: result.StatusInterrupted})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(context.Background(), in.Records[:4]))
	release := holdLock(t, path)
	ctx := cutAdd(t, path, p, in.Records[4:])
	_, err := p.Complete(ctx, in, "")
	require.ErrorIs(t, err, context.Canceled, "no second wait for the lock")
	release()
	rows, err := db.ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, 4, rows[0].RecordCount, "the batch stored before stays")

	q := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	release = holdLock(t, path)
	ctx = cutAdd(t, path, q, in.Records[:4])
	release()
	id, err := q.Complete(ctx, in, "")
	require.NoError(t, err, "the lock is gone: stored at once")
	got, err := db.GetRun(context.Background(), id, true)
	require.NoError(t, err)
	assert.Len(t, got.Records, 8)
}

// cutAdd adds records to p while another connection holds the store at
// path locked, and cancels the batch's context (a Ctrl-C) once it waits
// for that lock; it returns the cancelled context.
func cutAdd(t *testing.T, path string, p *store.Pending, records []metrics.Record) context.Context {
	t.Helper()
	waiting := store.OnLockWaitForTest(path)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- p.Add(ctx, records) }()
	<-waiting
	cancel()
	require.ErrorContains(t, <-ended, "interrupted while waiting for another process's lock")
	return ctx
}
