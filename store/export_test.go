package store

import "context"

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
