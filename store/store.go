package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

//go:embed migration/*.sql
var migrationFS embed.FS

// ErrNotFound is wrapped by every error about a run, sweep or name that is
// not in the store; test for it with errors.Is.
var ErrNotFound = errors.New("not found")

// ErrAmbiguous is wrapped by the error about a reference that names several
// things where one was expected, such as a sweep with several cells given
// as one group of runs; test for it with errors.Is.
var ErrAmbiguous = errors.New("ambiguous")

// dsnOptions are the connection settings measured in deps.md §2: WAL with
// synchronous=NORMAL, a 30 s busy timeout and BEGIN IMMEDIATE transactions,
// which together let several processes write one file without "database is
// locked" errors.
const dsnOptions = "_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=on"

// timeFormat stores times as fixed-width UTC text, which sorts correctly.
const timeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// DB is an open run store.
type DB struct {
	db   *sql.DB
	path string

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// Open opens (creating if needed) the store at path, creating its parent
// directories, and applies pending migrations. The path ":memory:" opens a
// private in-memory database.
func Open(path string) (*DB, error) {
	if strings.Contains(path, "?") {
		return nil, fmt.Errorf("open store %q: path must not contain '?'", path)
	}
	if path != ":memory:" {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("open store %q: %w", path, err)
			}
		}
	}
	sqlDB, err := sql.Open("sqlite3", path+"?"+dsnOptions)
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	if path == ":memory:" {
		// Every connection to :memory: is a different database.
		sqlDB.SetMaxOpenConns(1)
	}
	db := &DB{db: sqlDB, path: path, Now: time.Now}
	if err := db.migrate(context.Background()); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	return db, nil
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

// migrate applies every embedded migration not yet recorded in the
// migrations table, in name order, each in its own immediate transaction (so
// two processes opening a new file at once apply each migration once).
func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.applyMigration(ctx, name); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, name string) error {
	return db.inTx(ctx, func(tx *sql.Tx, now time.Time) error {
		if _, err := tx.ExecContext(ctx,
			`CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		body, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, formatTime(now))
		return err
	})
}

// inTx runs fn in one immediate transaction stamped with a single now,
// committing when fn succeeds and rolling back otherwise.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	tx, err := db.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx, db.Now().UTC()); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
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
	t, _ := time.Parse(timeFormat, s)
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
// so several queries see one consistent state without blocking writers.
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
	err = fn(conn)
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
