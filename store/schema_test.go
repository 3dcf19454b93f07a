package store_test

import (
	"testing"

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
