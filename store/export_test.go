package store

import (
	"context"
	"fmt"
)

// CountForTest runs a count(*) query.
func CountForTest(ctx context.Context, db *DB, query string, args ...any) (int, error) {
	var n int
	err := db.db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// PragmaForTest reads a pragma's value as text.
func PragmaForTest(ctx context.Context, db *DB, name string) (string, error) {
	var v string
	err := db.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
	return v, err
}

// MigrationCount is the number of embedded migration files.
func MigrationCount() int {
	files, _ := migrationFS.ReadDir("migration")
	return len(files)
}

// ExecForTest runs a statement, to set up states the API never produces.
func ExecForTest(ctx context.Context, db *DB, query string, args ...any) error {
	_, err := db.db.ExecContext(ctx, query, args...)
	return err
}

// SchemaVersion is the schema version of this binary: the number of its
// latest migration.
func SchemaVersion() int { return schemaVersion(embedded()) }

// FillForTest makes the store's file full: every write that needs one more
// page fails with SQLITE_FULL, as on a full disk, until the returned func
// frees it. It holds the store to one connection, since the limit
// (PRAGMA max_page_count) is a connection's.
func FillForTest(ctx context.Context, db *DB) (free func() error, err error) {
	db.db.SetMaxOpenConns(1)
	var pages int
	if err := db.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return nil, err
	}
	if _, err := db.db.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		return nil, err
	}
	return func() error {
		_, err := db.db.ExecContext(ctx, "PRAGMA max_page_count = 1073741823")
		return err
	}, nil
}

// OnLockWaitForTest returns a channel closed when a write on the store at
// path next finds it locked by another connection and waits.
func OnLockWaitForTest(path string) <-chan struct{} {
	ch := make(chan struct{})
	lockWaits.Store(path, ch)
	return ch
}

// NoRoomForTest replaces the free-space check of OpenReadOnly until the
// returned func restores it.
func NoRoomForTest(f func(dir string) bool) (restore func()) {
	old := noRoom
	noRoom = f
	return func() { noRoom = old }
}
