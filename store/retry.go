package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
)

// ErrDiskFull is wrapped by every write error caused by a full disk
// (SQLITE_FULL, ENOSPC); test for it with errors.Is.
var ErrDiskFull = errors.New("disk full")

// fullError is a write that failed for want of space: its message says so
// and names the store.
type fullError struct {
	path string
	err  error
}

func (e *fullError) Error() string {
	return fmt.Sprintf("the disk holding store %s is full (%v): free some space on it", e.path, e.err)
}

// Unwrap returns ErrDiskFull and the underlying error.
func (e *fullError) Unwrap() []error { return []error{ErrDiskFull, e.err} }

// diskFull reports whether err is SQLite's "database or disk is full" or
// the system's ENOSPC.
func diskFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC) {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// transient reports whether a failed write may succeed when tried again:
// a full disk, an I/O error, a lock held past the busy timeout.
func transient(err error) bool {
	if diskFull(err) {
		return true
	}
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrIoErr || se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// named turns a write error caused by a full disk into one that says so,
// and one that found the store damaged into one that names it and says
// what to do (namedDamage).
func (db *DB) named(err error) error {
	if err == nil || errors.Is(err, ErrDiskFull) || !diskFull(err) {
		return db.namedDamage(err)
	}
	return &fullError{path: db.path, err: err}
}

// Retry is how the writes that store a finished run (SaveRun and
// Pending.Complete) wait out a failure that may pass — a disk full for a
// moment, an I/O error, a lock held past the busy timeout — so that a run
// is not lost to it. The zero Retry writes once.
type Retry struct {
	For   time.Duration // how long to keep trying after the first failure
	Every time.Duration // the pause between attempts
	// Log, when set, is told when a write failed and is tried again (before
	// any wait), and whether it then succeeded.
	Log io.Writer
}

// DefaultRetry is the Retry of the commands that store runs: a disk full
// for up to two minutes costs no run.
var DefaultRetry = Retry{For: 2 * time.Minute, Every: time.Second}

// retry runs write, and while it fails with a transient error tries it
// again every db.Retry.Every until db.Retry.For has passed, saying so on
// db.Retry.Log. write gets the context its wait for another process's lock
// is to end with (inTxInterruptible): ctx, or, when ctx had ended before the
// first attempt, one that never ends. So a cancellation of ctx during a
// wait — for a lock, or between attempts — gives up at once, unless ctx had
// ended before the first attempt (an interrupted run is still stored: a
// second Ctrl-C exits at once). what names the write, as "store run 3".
//
// cut says that ctx's cancellation already ended a wait for a lock of this
// run's (a batch stored while it went): that Ctrl-C came while the store
// was waited for, so this write waits no more either — it is tried once
// (and succeeds if the lock is gone by then).
func (db *DB) retry(ctx context.Context, what string, cut bool, write func(wait context.Context) error) error {
	wait := waitContext(ctx, cut)
	err := write(wait)
	r := db.Retry
	if err == nil || r.For <= 0 || !transient(err) {
		return err
	}
	if wait.Err() != nil { // cancelled while it waited for a lock, or wrote
		return interrupted(wait, 1, err)
	}
	every := max(r.Every, time.Millisecond)
	if r.Log != nil {
		fmt.Fprintf(r.Log, "warning: %s failed: %v; trying again every %s for up to %s\n", what, err, every, r.For)
	}
	deadline := time.Now().Add(r.For)
	timer := time.NewTimer(every)
	defer timer.Stop()
	for attempt := 2; ; attempt++ {
		select {
		case <-timer.C:
		case <-wait.Done():
			return interrupted(wait, attempt-1, err)
		}
		if err = write(wait); err == nil {
			if r.Log != nil {
				fmt.Fprintf(r.Log, "note: %s succeeded on attempt %d\n", what, attempt)
			}
			return nil
		}
		if !transient(err) {
			return err
		}
		if wait.Err() != nil {
			return interrupted(wait, attempt, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("gave up after %d attempts in %s: %w", attempt, r.For, err)
		}
		timer.Reset(min(every, left))
	}
}

// waitContext is the context a write's wait for a lock ends with: ctx, or,
// when ctx has already ended before the write began, one that never ends —
// that cancellation did not come during a wait, so the write still waits
// (a second Ctrl-C exits) — unless cut says a wait of the same run's was
// already ended by it.
func waitContext(ctx context.Context, cut bool) context.Context {
	if ctx.Err() != nil && !cut {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// interrupted is the error of a write given up on after attempts because
// ctx was cancelled; err, the last failure, may already say so (a wait for
// a lock cut short).
func interrupted(ctx context.Context, attempts int, err error) error {
	if errors.Is(err, context.Cause(ctx)) {
		return fmt.Errorf("gave up after %d attempts: %w", attempts, err)
	}
	return fmt.Errorf("gave up after %d attempts, interrupted (%w): %w", attempts, context.Cause(ctx), err)
}
