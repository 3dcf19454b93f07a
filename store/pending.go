package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// PendingError is the error a pending run's row carries until the run
// completes it: true both while the run goes and after its process died.
const PendingError = "not finished: the run was still going when this was read, or its process ended before it finished " +
	"(the records it had finished are stored)"

// Pending is a run stored while its load goes, so that a large run has
// only its summary left to write when the load ends: its row is added with
// the first batch of records, marked interrupted (what it is if the process
// dies), and each batch is its own short transaction. Complete rewrites the
// row and adds the rest; a run that never completes stays an interrupted
// run with the records it had finished.
type Pending struct {
	db     *DB
	skel   *result.Run // the row until Complete
	id     int64       // 0 until the first batch
	stored int         // records added
	err    error       // the first failure: no batch after it
	cut    bool        // a batch's wait for a lock was ended by ctx (a Ctrl-C)
	token  string      // the claim "run ID" that tells readers the row is still being written
}

// BeginRun returns the pending run of r, whose name, configuration, command
// line and start time its row shows until Complete.
func (db *DB) BeginRun(r *result.Run) *Pending {
	skeleton := *r
	skeleton.Status, skeleton.Error, skeleton.Records = result.StatusInterrupted, PendingError, nil
	return &Pending{db: db, skel: &skeleton}
}

// Add stores a batch of finished records (in any order); it adds the run's
// row with the first. A wait for another process's lock on the store ends
// when ctx is cancelled during it (a Ctrl-C of the run): the batch then
// fails, and Complete does not wait for that lock again. A batch begun
// after ctx ended (the last one, flushed once the interrupted load closed)
// waits as Complete would: that Ctrl-C came while nothing was waited for.
// Nothing of a batch that fails is kept, in the file or here: after a
// failure Add does nothing and returns that failure, and Complete stores
// every record itself.
func (p *Pending) Add(ctx context.Context, records []metrics.Record) error {
	if p.err != nil || len(records) == 0 {
		return p.err
	}
	id := p.id
	err := p.db.inTxInterruptible(waitContext(ctx, false), func(wctx context.Context, tx *sql.Tx) error { // only the wait for a lock is cut
		if id == 0 {
			var err error
			if id, err = saveRun(wctx, tx, p.skel, "", 0, nil); err != nil {
				return err
			}
			if err := p.claim(wctx, tx, id); err != nil {
				return err
			}
		}
		if err := insertRecords(wctx, tx, id, records); err != nil {
			return err
		}
		_, err := tx.ExecContext(wctx, `UPDATE runs SET record_count = record_count + ? WHERE id = ?`, len(records), id)
		return err
	})
	if err != nil { // rolled back: the row and the records are not in the file
		p.cut = errors.Is(err, errLockWaitCut)
		p.err = fmt.Errorf("store records in %s while the run goes: %w", p.db.path, err)
		return p.err
	}
	p.id, p.stored = id, p.stored+len(records)
	return nil
}

// Stored is what the pending run has in the store: its row's id (0: none)
// and how many records it holds. Until Complete succeeds the row is an
// interrupted run.
func (p *Pending) Stored() (id int64, records int) { return p.id, p.stored }

// Complete stores the finished run r over its pending row, in one
// transaction, and returns its id. The records Add stored are kept when
// they are all of r's; otherwise (a batch failed, or r has records Add did
// not see) they are replaced by r's. A transient failure is tried again as
// db.Retry says; a wait for a lock ends as SaveRun's does. When a Ctrl-C
// already ended a batch's wait for a lock, Complete does not wait for it
// again: it writes at once if the lock is gone, and otherwise gives up
// (the run stays as the interrupted run its batches stored).
func (p *Pending) Complete(ctx context.Context, r *result.Run, artifactDir string) (int64, error) {
	if p.id == 0 {
		return p.db.SaveRun(ctx, r, artifactDir)
	}
	var id int64
	err := p.db.retry(ctx, "store run "+describeRun(r), p.cut, func(wait context.Context) error {
		return p.db.inTxInterruptible(wait, func(ctx context.Context, tx *sql.Tx) error {
			var records []metrics.Record // nil: those stored are the run's
			if p.err != nil || p.stored != len(r.Records) {
				if _, err := tx.ExecContext(ctx, `DELETE FROM records WHERE run_id = ?`, p.id); err != nil {
					return fmt.Errorf("replace the records stored while the run went: %w", err)
				}
				records = r.Records
			}
			var err error
			if id, err = saveRun(ctx, tx, r, artifactDir, p.id, records); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `DELETE FROM sweep_locks WHERE key = ? AND token = ?`, runKey(p.id), p.token)
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("save run %s: %w", describeRun(r), err)
	}
	return id, nil
}

// claim marks row id as written by this process (a claim "run ID" in
// sweep_locks), so that a reader tells a run still going (its owner alive)
// from one whose process ended before Complete (the claim outlives it).
func (p *Pending) claim(ctx context.Context, tx *sql.Tx, id int64) error {
	p.token = rand.Text()
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO sweep_locks (key, what, pid, host, started_at, token, process)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, runKey(id), fmt.Sprintf("run %d", id), os.Getpid(), hostname(), formatTime(time.Now()), p.token,
		selfStart())
	return err
}

// runKey is the claim key of a run being written.
func runKey(id int64) string { return "run " + strconv.FormatInt(id, 10) }

// stillGoing reports whether a run stored as interrupted is a pending run
// whose process is still writing it: its claim (pid on host, started at
// start; host "" when it has none) is held by a live process, or by one on
// another host, where that cannot be checked.
func stillGoing(status string, pid int, host, start string) bool {
	if status != result.StatusInterrupted || host == "" {
		return false
	}
	return !ownerGone(host, hostname(), pid, start)
}
