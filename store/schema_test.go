package store_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"testing"

	"github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/store"
)

// A store missing a table or a column that its recorded migrations create
// (dropped by hand, the migration's row kept) is refused when opened, as a
// damaged one, before any traffic. It used to open: the run was then lost
// when its save reached that table, or reported stored (a missing
// control_calls) and not readable back.
func TestOpenFindsMissingTablesAndColumns(t *testing.T) {
	t.Parallel()
	for drop, want := range map[string]string{
		`DROP TABLE server_series`:                             "is damaged (table server_series is missing)",
		`DROP TABLE control_calls`:                             "is damaged (table control_calls is missing)",
		`ALTER TABLE records DROP COLUMN first_chunk_tokens`:   "is damaged (column records.first_chunk_tokens is missing)",
		`ALTER TABLE sweep_locks DROP COLUMN process`:          "is damaged (column sweep_locks.process is missing)",
		`CREATE TABLE mine (x); ALTER TABLE runs ADD COLUMN y`: "",
	} {
		t.Run(drop, func(t *testing.T) {
			path := execOn(t, storeWithRuns(t, 1), drop)
			db, err := store.Open(path)
			if want == "" {
				if err == nil {
					db.Close()
				}
				require.NoError(t, err, "a table or column of the user's own is no damage")
				return
			}
			unusable(t, err, path, want+": restore it from a backup, or move it aside to start a new store")
		})
	}
}

// A store whose migration's row is lost (the column it adds kept) cannot
// take that migration again: it is refused as damaged, for writing and for
// reading (which would upgrade it), saying what to do. The migration's raw
// error ("duplicate column name") used to pass through, exit 1.
func TestOpenRefusesAMigrationThatCannotApply(t *testing.T) {
	t.Parallel()
	path := execOn(t, storeWithRuns(t, 1), `DELETE FROM migrations WHERE name = 'migration/0018_audit_tallies.sql'`)
	want := "is damaged (migration 0018_audit_tallies.sql cannot be applied: duplicate column name: audit_tallies; " +
		"its tables do not match the migrations it records): restore it from a backup"
	_, err := store.Open(path)
	unusable(t, err, path, want)
	_, err = store.OpenReadOnly(path)
	unusable(t, err, path, want)
	assert.NotContains(t, err.Error(), "cannot be upgraded", "no upgrade would help")
}

// Damage deep inside a store, which opening does not read (a leaf page of
// the records), is found by the read or delete that reaches it; the error
// names the store and says what to do, as opening's does, keeping what was
// being done. It was SQLite's bare "database disk image is malformed".
func TestDamageFoundByAReadSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storeWithRuns(t, 3)
	var root, pageSize int64
	{
		db, err := sql.Open("sqlite3", path)
		require.NoError(t, err)
		require.NoError(t, db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'records'`).Scan(&root))
		require.NoError(t, db.QueryRow(`PRAGMA page_size`).Scan(&pageSize))
		require.NoError(t, db.Close())
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	page := make([]byte, pageSize) // the root of the records' b-tree
	_, err = f.ReadAt(page, (root-1)*pageSize)
	require.NoError(t, err)
	require.Equal(t, byte(0x02), page[0], "an interior page: the records span several")
	// Its first cell's child, the first run's first records (the last
	// child is written by opening's probe, which would find it).
	cell := binary.BigEndian.Uint16(page[12:])
	leaf := int64(binary.BigEndian.Uint32(page[cell:]))
	junk := make([]byte, pageSize)
	for i := range junk {
		junk[i] = 0xff
	}
	_, err = f.WriteAt(junk, (leaf-1)*pageSize)
	require.NoError(t, err)

	db, err := store.Open(path)
	require.NoError(t, err, "opening does not read that page")
	defer db.Close()
	want := "store " + path + " is damaged (database disk image is malformed): restore it from a backup, or move it aside to start a new store"
	_, err = db.GetRun(ctx, 1, true)
	require.ErrorContains(t, err, "get run 1: records: "+want)
	err = db.DeleteRuns(ctx, 1)
	require.ErrorContains(t, err, "delete runs (nothing was deleted): "+want)
	var se sqlite3.Error
	require.ErrorAs(t, err, &se, "SQLite's error is still there")
}
