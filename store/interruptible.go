package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errLockWaitCut is wrapped by the error of a write whose wait for another
// process's lock ctx ended.
var errLockWaitCut = errors.New("interrupted while waiting for another process's lock on the store")

// lockWaits holds, by store path, the channel a test waits on to learn that
// a write is waiting for another process's lock (OnLockWaitForTest): the
// test can then cancel the wait without racing it.
var lockWaits sync.Map

// lockWaited tells the test waiting on path's channel, if any, that a write
// on path waits for a lock.
func lockWaited(path string) {
	if ch, ok := lockWaits.LoadAndDelete(path); ok {
		close(ch.(chan struct{}))
	}
}

// pollBusy is how long one attempt of an interruptible transaction lets
// SQLite wait for another process's lock before the wait goes back to Go,
// where a cancellation can end it: SQLite's own busy wait does not see a
// cancelled context.
const pollBusy = 100 * time.Millisecond

// inTxInterruptible is inTx whose wait for another process's write lock
// (up to busyTimeout, as _busy_timeout for the rest) ends at once when ctx
// is cancelled, with an error saying so. A transaction once begun runs to
// its commit or rollback, whatever ctx does: fn gets a context without
// ctx's cancellation.
func (db *DB) inTxInterruptible(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	wctx := context.WithoutCancel(ctx)
	conn, err := db.db.Conn(wctx)
	if err != nil {
		return db.named(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(wctx, fmt.Sprintf("PRAGMA busy_timeout = %d", pollBusy.Milliseconds())); err != nil {
		return db.named(err)
	}
	defer func() { // back to the pool as it was, or not at all
		if _, err := conn.ExecContext(wctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds())); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	deadline := time.Now().Add(busyTimeout)
	for {
		tx, err := conn.BeginTx(wctx, nil)
		if err == nil {
			if err := fn(wctx, tx); err != nil {
				tx.Rollback()
				return db.named(err)
			}
			return db.named(tx.Commit())
		}
		if !busy(err) || time.Now().After(deadline) {
			return db.named(err)
		}
		lockWaited(db.path)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w): %w", errLockWaitCut, context.Cause(ctx), err)
		default:
		}
	}
}
