package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// damagedReason begins the reason of a damaged store's refusal, and
// damagedRemedy is what to do about it.
const (
	damagedReason = "is damaged"
	damagedRemedy = "restore it from a backup, or move it aside to start a new store"
)

// damaged is the refusal of the store as damaged: what says how (and err,
// if any, is the failure that found it).
func (db *DB) damaged(what string, err error) *UnusableError {
	return &UnusableError{Path: db.path, Err: err, Reason: fmt.Sprintf("%s (%s): %s", damagedReason, what, damagedRemedy)}
}

// damageError is a read or write that found the store's file damaged: deep
// inside it, where opening does not look (it reads the header, the schema
// and the first pages of the tables a run goes into).
type damageError struct {
	err  error          // what was being done, down to SQLite's error
	said *UnusableError // the damage, named, with what to do
}

// Error is err's text with SQLite's error in it replaced by the store's
// damage and what to do ("get run 2: count the records: store s.db is
// damaged (database disk image is malformed): restore it ...").
func (e *damageError) Error() string {
	msg, cause := e.err.Error(), e.said.Err.Error()
	if i := strings.LastIndex(msg, cause); i >= 0 {
		return msg[:i] + e.said.Error() + msg[i+len(cause):]
	}
	return msg + ": " + e.said.Error()
}

// Unwrap returns the failure.
func (e *damageError) Unwrap() error { return e.err }

// namedDamage turns err, when SQLite found the store damaged
// (SQLITE_CORRUPT, SQLITE_NOTADB), into a *damageError; others pass as
// they are.
func (db *DB) namedDamage(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrCorrupt && se.Code != sqlite3.ErrNotADB || errors.As(err, new(*damageError)) {
		return err
	}
	return &damageError{err: err, said: db.damaged(se.Error(), se)}
}

// checkSchema refuses a store missing a table or a column that its
// migrations, all applied by now, create: one dropped by hand, or lost
// with its migration's row kept. Such a store opened, and the run was lost
// after its traffic, when its save reached that table (or was reported
// stored and could not be read back).
func (db *DB) checkSchema(ctx context.Context) error {
	want, err := migratedSchema()
	if err != nil {
		return fmt.Errorf("read the schema the migrations create: %w", err)
	}
	have, err := tableColumns(ctx, db.db)
	if err != nil {
		return err
	}
	for _, t := range want {
		i := slices.IndexFunc(have, func(h table) bool { return h.name == t.name })
		missing := "table " + t.name
		if i >= 0 {
			missing = ""
			for _, c := range t.columns {
				if !slices.Contains(have[i].columns, c) {
					missing = "column " + t.name + "." + c
					break
				}
			}
		}
		if missing != "" {
			return db.damaged(missing+" is missing", nil)
		}
	}
	return nil
}

// table is a table's name and its columns.
type table struct {
	name    string
	columns []string
}

// migratedSchema is every table and column the embedded migrations create,
// read once from an empty in-memory database they are applied to.
var migratedSchema = sync.OnceValues(func() ([]table, error) {
	ctx := context.Background()
	mem, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1) // every connection to :memory: is a database of its own
	for _, name := range embedded() {
		body, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			return nil, err
		}
		if _, err := mem.ExecContext(ctx, string(body)); err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return tableColumns(ctx, mem)
})

// tableColumns lists the tables of q's database with their columns (read
// from its schema alone: no table's pages).
func tableColumns(ctx context.Context, q querier) ([]table, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []table
	for rows.Next() {
		var name, column string
		if err := rows.Scan(&name, &column); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].name != name {
			out = append(out, table{name: name})
		}
		out[len(out)-1].columns = append(out[len(out)-1].columns, column)
	}
	return out, rows.Err()
}
