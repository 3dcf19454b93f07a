package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// appliedMigrations lists the migrations recorded in the store (none in a
// new, empty file). Its first read is what finds a file that is not an
// SQLite database, or one whose header or schema is damaged.
func (db *DB) appliedMigrations(ctx context.Context) ([]string, error) {
	tables, err := db.names(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(tables, "migrations") {
		if len(tables) > 0 {
			return nil, &UnusableError{Path: db.path, Reason: fmt.Sprintf(
				"is an SQLite database but not an aiperf run store (it has tables %s and no migrations table)",
				strings.Join(tables, ", "))}
		}
		return nil, nil
	}
	names, err := db.names(ctx, `SELECT name FROM migrations ORDER BY name`)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(names, firstMigration) {
		return nil, &UnusableError{Path: db.path, Reason: "is an SQLite database but not an aiperf run store (its migrations table is not aiperf's)"}
	}
	return names, nil
}

// names runs a query of one text column and returns its values.
func (db *DB) names(ctx context.Context, query string) ([]string, error) {
	rows, err := db.db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// pending returns the embedded migrations not in applied, and an
// *UnusableError when applied holds migrations this binary does not know:
// the store was written by a newer aiperf.
func (db *DB) pending(applied []string) ([]string, error) {
	known := embedded()
	var unknown []string
	for _, name := range applied {
		if !slices.Contains(known, name) {
			unknown = append(unknown, path.Base(name))
		}
	}
	if len(unknown) > 0 {
		have, want := schemaVersion(applied), schemaVersion(known)
		reason := fmt.Sprintf("was written by a newer aiperf (schema %d > %d): upgrade aiperf", have, want)
		if have <= want {
			reason = fmt.Sprintf("was written by a different aiperf build (migrations %s are unknown to this one): use that build",
				strings.Join(unknown, ", "))
		}
		return nil, &UnusableError{Path: db.path, Reason: reason}
	}
	return slices.DeleteFunc(known, func(n string) bool { return slices.Contains(applied, n) }), nil
}

// embedded lists the embedded migrations in the order they apply.
func embedded() []string {
	names, _ := fs.Glob(migrationFS, "migration/*.sql")
	slices.Sort(names)
	return names
}

// schemaVersion is the number of the latest migration in names ("0003" of
// migration/0003_kv_reset_check.sql), 0 for none.
func schemaVersion(names []string) int {
	v := 0
	for _, name := range names {
		num, _, _ := strings.Cut(path.Base(name), "_")
		if n, err := strconv.Atoi(num); err == nil {
			v = max(v, n)
		}
	}
	return v
}

// migrate applies the pending migrations in name order, each in its own
// immediate transaction that skips it if the migrations table records it
// by then (so two processes opening a new file at once apply each
// migration once). A migration whose SQL fails on the store's tables (a
// column it adds is there, with its row lost) finds the store damaged.
func (db *DB) migrate(ctx context.Context, pending []string) error {
	for _, name := range pending {
		err := db.applyMigration(ctx, name)
		var se sqlite3.Error
		if errors.As(err, &se) && se.Code == sqlite3.ErrError { // its table or column there already, or one it alters gone
			return db.damaged(fmt.Sprintf("migration %s cannot be applied: %v; its tables do not match the migrations it records",
				path.Base(name), err), err)
		}
		if err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, name string) error {
	return db.inTxInterruptible(ctx, func(ctx context.Context, tx *sql.Tx) error {
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
		_, err = tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, formatTime(db.Now()))
		return err
	})
}

// errProbed rolls back the write probe.
var errProbed = errors.New("write probe")
