package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SweepClaim names what a sweep is about to use: the sweep itself (its name
// and plan digest, as --resume finds it) and the directory its trials are
// written under.
type SweepClaim struct {
	Name        string
	PlanSHA256  string
	ArtifactDir string
}

// LockOwner is the process holding a claim.
type LockOwner struct {
	What  string // `sweep "scan"`, or `artifact directory /abs/dir`
	PID   int
	Host  string
	Since time.Time
	// Start is the process's instance (processStart): "" in a claim written
	// before it was kept, or where /proc cannot tell.
	Start string
}

// LockedError is what LockSweep returns when a claim is held by a process
// that is still running, or that runs on another host, where that cannot
// be checked.
type LockedError struct {
	Store string // the store's path
	Owner LockOwner
	token string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is in use by another aiperf (pid %d on host %s, since %s): wait for it to end; "+
		"if that process is gone (one on another host cannot be checked), remove its claim with: sqlite3 %s \"DELETE FROM sweep_locks WHERE token = '%s'\"",
		e.Owner.What, e.Owner.PID, e.Owner.Host, e.Owner.Since.Local().Format("2006-01-02 15:04:05 MST"), e.Store, e.token)
}

// SweepLock is a claim held by this process; Release gives it up.
type SweepLock struct {
	db    *DB
	token string
	// TookOver lists the claims taken from owners on this host that are no
	// longer running: processes killed before they could release them.
	TookOver []LockOwner
}

// LockSweep claims c for this process in one immediate transaction, so of
// two processes racing for a sweep or a directory exactly one wins. A claim
// held by a live process (or by one on another host) is a *LockedError; one
// whose owner on this host has exited is taken over and listed in TookOver.
func (db *DB) LockSweep(ctx context.Context, c SweepClaim) (*SweepLock, error) {
	dir, err := filepath.Abs(c.ArtifactDir)
	if err != nil {
		return nil, fmt.Errorf("lock sweep %q: %w", c.Name, err)
	}
	host := hostname()
	pid := os.Getpid()
	keys := []struct{ key, what string }{
		{sweepKey(c.Name, c.PlanSHA256), fmt.Sprintf("sweep %q", c.Name)},
		{"artifacts " + dir, "artifact directory " + dir},
	}
	lock := &SweepLock{db: db, token: rand.Text()}
	err = db.inTx(ctx, func(tx *sql.Tx, now time.Time) error {
		lock.TookOver = nil
		for _, k := range keys {
			o, token, err := claimOwner(ctx, tx, k.key)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case !o.gone(host):
				return &LockedError{Store: db.path, Owner: o, token: token}
			default:
				lock.TookOver = append(lock.TookOver, o)
			}
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO sweep_locks (key, what, pid, host, started_at, token, process) VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET what = excluded.what, pid = excluded.pid, host = excluded.host,
					started_at = excluded.started_at, token = excluded.token, process = excluded.process`,
				k.key, k.what, pid, host, formatTime(now), lock.token, selfStart()); err != nil {
				return err
			}
		}
		return nil
	})
	var le *LockedError
	if errors.As(err, &le) {
		return nil, le
	}
	if err != nil {
		return nil, fmt.Errorf("lock sweep %q: %w", c.Name, err)
	}
	return lock, nil
}

// Release gives up the claims of l (those another process took over in the
// meantime stay with it).
func (l *SweepLock) Release(ctx context.Context) error {
	err := l.db.inTx(ctx, func(tx *sql.Tx, _ time.Time) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sweep_locks WHERE token = ?`, l.token)
		return err
	})
	if err != nil {
		return fmt.Errorf("release sweep lock: %w", err)
	}
	return nil
}

// ownerGone reports whether a claim's owner, process start with pid on
// host, is known to have exited: only a process of this host (here) can be
// looked at.
func ownerGone(host, here string, pid int, start string) bool {
	return host == here && !processAlive(pid, start)
}

// gone reports whether o, seen from host here, is known to have exited.
func (o LockOwner) gone(here string) bool { return ownerGone(o.Host, here, o.PID, o.Start) }

// hostname is this machine's name as claims record it ("" when unknown).
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// sweepKey is the claim key of a sweep (name and plan digest).
func sweepKey(name, planSHA string) string { return "sweep " + name + " " + planSHA }

// claimOwner reads the owner of the claim key (sql.ErrNoRows: none) and
// its token.
func claimOwner(ctx context.Context, tx *sql.Tx, key string) (o LockOwner, token string, err error) {
	var since string
	err = tx.QueryRowContext(ctx, `SELECT what, pid, host, started_at, token, process FROM sweep_locks WHERE key = ?`, key).
		Scan(&o.What, &o.PID, &o.Host, &since, &token, &o.Start)
	o.Since = parseTime(since)
	return o, token, err
}

// notRunning refuses run id when it is a trial of a sweep or search that a
// live aiperf is running (its claim held): that process would read its
// trials back as never run, and answer from what is left.
func (db *DB) notRunning(ctx context.Context, tx *sql.Tx, id int64) error {
	if o, token, err := claimOwner(ctx, tx, runKey(id)); err == nil && !o.gone(hostname()) {
		return fmt.Errorf("run %d is still going: %w", id, &LockedError{Store: db.path, Owner: o, token: token})
	} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	var name, plan string
	err := tx.QueryRowContext(ctx, `SELECT s.name, COALESCE(s.plan_sha256, '') FROM runs r
		JOIN sweeps s ON s.id = r.sweep_id AND s.status = ? WHERE r.id = ?`, sweepRunning, id).Scan(&name, &plan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	o, token, err := claimOwner(ctx, tx, sweepKey(name, plan))
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && o.gone(hostname()):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("run %d is a trial of a sweep still running: %w", id, &LockedError{Store: db.path, Owner: o, token: token})
}
