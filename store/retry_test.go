package store_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// logbook is a Retry.Log that tells the test when a line containing want
// was written.
type logbook struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newLogbook(want string) *logbook { return &logbook{want: want, seen: make(chan struct{})} }

func (l *logbook) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(string(p), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return l.buf.Write(p)
}

func (l *logbook) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// fullStore is a store in a real file whose disk is full until free is
// called.
func fullStore(t *testing.T) (db *store.DB, free func()) {
	t.Helper()
	db = openAt(t, filepath.Join(t.TempDir(), "aiperf.db"))
	release, err := store.FillForTest(context.Background(), db)
	require.NoError(t, err)
	return db, func() { require.NoError(t, release()) }
}

// A pending run whose first batch fails on a full disk keeps no trace of
// it: once the disk has room again, Complete stores the run with every
// record (it used to update a row the rollback had removed: "its row is
// gone", the run lost).
func TestPendingFirstBatchOnAFullDisk(t *testing.T) {
	ctx := context.Background()
	db, free := fullStore(t)
	in := newRun(runOpts{name: "brief-full", records: 2000})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	err := p.Add(ctx, in.Records[:1000])
	require.ErrorIs(t, err, store.ErrDiskFull)
	assert.Contains(t, err.Error(), "is full")
	id, n := p.Stored()
	assert.Zero(t, id, "no row is kept from a batch that was rolled back")
	assert.Zero(t, n)
	free()

	id, err = p.Complete(ctx, in, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, true)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, got.Status)
	assert.Len(t, got.Records, 2000)
	rows, err := db.ListRuns(ctx, store.RunFilter{})
	require.NoError(t, err)
	assert.Len(t, rows, 1)
}

// Storing a finished run on a full disk says so before it waits, tries
// again, and succeeds once the disk has room: no run is lost to a disk
// full for a moment. The records stored while the run went are kept.
func TestCompleteWaitsOutAFullDisk(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, filepath.Join(t.TempDir(), "aiperf.db"))
	in := newRun(runOpts{name: "full-at-the-end", records: 2000})
	p := db.BeginRun(&result.Run{Name: in.Name, Config: in.Config, StartTime: in.StartTime})
	require.NoError(t, p.Add(ctx, in.Records[:4]))
	release, err := store.FillForTest(ctx, db)
	require.NoError(t, err)
	require.ErrorIs(t, p.Add(ctx, in.Records[4:]), store.ErrDiskFull)
	pending, stored := p.Stored()
	assert.Equal(t, 4, stored, "the batch that failed is not counted")

	log := newLogbook("trying again")
	db.Retry = store.Retry{For: time.Hour, Every: time.Millisecond, Log: log}
	type done struct {
		id  int64
		err error
	}
	ended := make(chan done, 1)
	go func() {
		id, err := p.Complete(ctx, in, "")
		ended <- done{id, err}
	}()
	<-log.seen // it failed, said so, and waits
	require.NoError(t, release())
	d := <-ended
	require.NoError(t, d.err)
	assert.Equal(t, pending, d.id, "the pending row is completed")
	assert.Contains(t, log.String(), "warning: store run "+in.BenchmarkID+" failed: the disk holding store ")
	assert.Contains(t, log.String(), "is full")
	assert.Contains(t, log.String(), "succeeded on attempt")
	got, err := db.GetRun(ctx, d.id, true)
	require.NoError(t, err)
	assert.Equal(t, result.StatusComplete, got.Status)
	assert.Len(t, got.Records, 2000)
}

// A disk that stays full is given up on once Retry.For has passed, and the
// error says it was a full disk; a Ctrl-C during a wait gives up at once.
func TestSaveRunGivesUp(t *testing.T) {
	ctx := context.Background()
	db, _ := fullStore(t)
	in := newRun(runOpts{name: "never-room", records: 2000})

	log := newLogbook("trying again")
	db.Retry = store.Retry{For: 20 * time.Millisecond, Every: time.Millisecond, Log: log}
	_, err := db.SaveRun(ctx, in, "")
	require.ErrorIs(t, err, store.ErrDiskFull)
	assert.Contains(t, err.Error(), "gave up after")
	assert.Contains(t, err.Error(), "is full")
	assert.Contains(t, log.String(), "trying again every 1ms for up to 20ms", "it said so before it waited")

	cctx, cancel := context.WithCancel(ctx)
	log = newLogbook("trying again")
	db.Retry = store.Retry{For: time.Hour, Every: time.Hour, Log: log}
	failed := make(chan error, 1)
	go func() {
		_, err := db.SaveRun(cctx, in, "")
		failed <- err
	}()
	<-log.seen
	cancel()
	err = <-failed
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, store.ErrDiskFull)
	assert.Contains(t, err.Error(), "interrupted")
}

// A failure that cannot pass (here a trigger refusing every run) is not
// tried again.
func TestSaveRunDoesNotRetryAPermanentFailure(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, store.ExecForTest(ctx, db,
		`CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'refused'); END`))
	log := newLogbook("trying again")
	db.Retry = store.Retry{For: time.Hour, Every: time.Hour, Log: log}
	_, err := db.SaveRun(ctx, newRun(runOpts{name: "refused"}), "")
	require.Error(t, err)
	assert.False(t, errors.Is(err, store.ErrDiskFull))
	assert.Empty(t, log.String())
}
