package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotFound is wrapped by every error about a run, sweep or name that is
// not in the store; test for it with errors.Is.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is wrapped by the error about a reference that names several
// things where one was expected, such as a sweep with several cells given
// as one group of runs; test for it with errors.Is.
var ErrAmbiguous = errors.New("ambiguous")

// timeFormat stores times as fixed-width UTC text, which sorts correctly.
const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// DB is an open run store.
type DB struct {
	db   *sql.DB
	path string

	// Retry is how storing a finished run waits out a transient failure
	// (zero: it does not).
	Retry Retry

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// Close closes the database.
func (db *DB) Close() error {
	if err := db.db.Close(); err != nil {
		return fmt.Errorf("close store %q: %w", db.path, err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns its verdict ("ok"
// for a sound database).
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	rows, err := db.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return "", fmt.Errorf("check store integrity: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", fmt.Errorf("check store integrity: %w", err)
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("check store integrity: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// inTx runs fn in one immediate transaction stamped with a single now,
// committing when fn succeeds and rolling back otherwise. A failure for
// want of space says so (ErrDiskFull).
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return db.named(err)
	}
	if err := fn(tx, db.Now().UTC()); err != nil {
		tx.Rollback()
		return db.named(err)
	}
	return db.named(tx.Commit())
}

// wrap adds what was being done to an unexpected error; a not-found or
// ambiguous error already names the reference at fault and is returned as
// it is.
func wrap(err error, format string, args ...any) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrAmbiguous) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) time.Time {
	t, err := time.Parse(timeFormat, s)
	if err != nil { // written by hand or by another tool: any RFC 3339 time, or SQLite's CURRENT_TIMESTAMP (UTC)
		if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			t, _ = time.Parse(time.DateTime, s)
		}
	}
	return t
}

// nullTime parses a nullable time column.
func nullTime(s sql.NullString) time.Time {
	if !s.Valid {
		return time.Time{}
	}
	return parseTime(s.String)
}

// querier is what both write transactions and read snapshots offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inSnapshot runs fn inside a deferred (read) transaction on one connection,
// so several queries see one consistent state without blocking writers. A
// failure that found the store damaged names it (namedDamage).
// (database/sql's transactions all use the DSN's BEGIN IMMEDIATE.)
func (db *DB) inSnapshot(ctx context.Context, fn func(q querier) error) error {
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	end := "COMMIT"
	err = db.namedDamage(fn(conn))
	if err != nil {
		end = "ROLLBACK"
	}
	if _, endErr := conn.ExecContext(context.WithoutCancel(ctx), end); endErr != nil {
		// Never hand a connection with an open transaction back to the pool.
		conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(err, endErr)
	}
	return err
}
