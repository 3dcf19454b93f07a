package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/store"
)

// storeWithRuns writes a closed store file holding n runs and returns its
// path.
func storeWithRuns(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "aiperf.db")
	db, err := store.Open(path)
	require.NoError(t, err)
	for i := range n {
		_, err := db.SaveRun(context.Background(), newRun(runOpts{name: fmt.Sprint("r", i), records: 200}), "")
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	return path
}

// unusable asserts err is an *store.UnusableError about path whose message
// contains want.
func unusable(t *testing.T, err error, path, want string) {
	t.Helper()
	var ue *store.UnusableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, path, ue.Path)
	assert.ErrorContains(t, err, "store "+path+" ")
	assert.ErrorContains(t, err, want)
}

func TestOpenRefusesUnusableStores(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T) string // returns the store path
		want  string
	}{
		{"directory", func(t *testing.T) string { return t.TempDir() }, "is a directory, not a database file: give a file path such as "},
		{"text file", func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "notes.txt")
			require.NoError(t, os.WriteFile(path, []byte("these are my notes, not a database\n"), 0o644))
			return path
		}, "is not an SQLite database (file is not a database)"},
		{"truncated", func(t *testing.T) string {
			path := storeWithRuns(t, 3)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()/2))
			return path
		}, "is damaged (database disk image is malformed): restore it from a backup"},
		{"header overwritten", func(t *testing.T) string {
			path := storeWithRuns(t, 1)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("garbage garbage garbage garbage!"), 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			return path
		}, "is not an SQLite database"},
		{"another application's database", func(t *testing.T) string {
			return execOn(t, filepath.Join(t.TempDir(), "app.db"), "CREATE TABLE contacts (name TEXT)", "DROP TABLE migrations")
		}, "is an SQLite database but not an aiperf run store (it has tables "},
		{"newer schema", func(t *testing.T) string {
			return execOn(t, storeWithRuns(t, 1),
				`INSERT INTO migrations (name, applied_at) VALUES ('migration/0099_future.sql', '2030-01-01')`)
		}, fmt.Sprintf("was written by a newer aiperf (schema 99 > %d): upgrade aiperf", store.SchemaVersion())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t)
			before := snapshot(t, path)
			_, err := store.Open(path)
			unusable(t, err, path, tc.want)
			_, err = store.OpenReadOnly(path)
			unusable(t, err, path, tc.want)
			assert.Equal(t, before, snapshot(t, path), "a refused store is left as it was")
		})
	}
	t.Run("read-only open of a missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.db")
		_, err := store.OpenReadOnly(path)
		unusable(t, err, path, "does not exist")
		assert.NoFileExists(t, path)
	})
}

// snapshot is the content of a file, or the names in a directory.
func snapshot(t *testing.T, path string) string {
	t.Helper()
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		entries, err := os.ReadDir(path)
		require.NoError(t, err)
		return fmt.Sprint(entries)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// olderStore is a store file as the previous aiperf (schema 3) left it.
func olderStore(t *testing.T) string {
	t.Helper()
	return execOn(t, storeWithRuns(t, 1),
		`DROP TABLE sweep_locks`, `DELETE FROM migrations WHERE name IN ('migration/0004_sweep_locks.sql',
		'migration/0019_claim_process.sql')`) // the later one alters its table
}

// execOn opens (creating) the store at path, runs statements on it, closes
// it and returns path.
func execOn(t *testing.T, path string, stmts ...string) string {
	t.Helper()
	db, err := store.Open(path)
	require.NoError(t, err)
	for _, s := range stmts {
		require.NoError(t, store.ExecForTest(context.Background(), db, s), s)
	}
	require.NoError(t, db.Close())
	return path
}

// readRuns opens path read-only and returns its runs.
func readRuns(t *testing.T, path string) (*store.DB, []store.RunRow) {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	runs, err := db.ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	return db, runs
}

func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("reads and never writes", func(t *testing.T) {
		db, runs := readRuns(t, storeWithRuns(t, 2))
		assert.Len(t, runs, 2)
		_, err := db.SaveRun(ctx, newRun(runOpts{name: "x", records: 1}), "")
		require.ErrorContains(t, err, "readonly")
	})
	t.Run("leaves no -wal or -shm files", func(t *testing.T) {
		path := storeWithRuns(t, 2)
		for _, f := range []string{path + "-wal", path + "-shm"} {
			require.NoFileExists(t, f, "a closed writer leaves none")
		}
		db, err := store.OpenReadOnly(path)
		require.NoError(t, err)
		_, err = db.ListRuns(ctx, store.RunFilter{})
		require.NoError(t, err)
		require.NoError(t, db.Close())
		for _, f := range []string{path + "-wal", path + "-shm"} {
			assert.NoFileExists(t, f, "a read leaves the store's directory as it found it")
		}
	})
	t.Run("upgrades an older store", func(t *testing.T) {
		db, runs := readRuns(t, olderStore(t))
		assert.Len(t, runs, 1)
		assert.Equal(t, store.MigrationCount(), count(t, db, `SELECT count(*) FROM migrations`))
		assert.Equal(t, 0, count(t, db, `SELECT count(*) FROM sweep_locks`))
	})
}

// TestReadOnlyStore: a store the user may not write is refused for writing
// before anything is recorded, and still opens for reading, in a read-only
// directory too (where SQLite cannot create the WAL's -shm file).
func TestReadOnlyStore(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only files: run as another user")
	}
	ctx := context.Background()
	t.Run("file", func(t *testing.T) {
		path := storeWithRuns(t, 2)
		require.NoError(t, os.Chmod(path, 0o444))
		_, err := store.Open(path)
		unusable(t, err, path, "is read-only (attempt to write a readonly database): make the file writable")
		_, runs := readRuns(t, path)
		assert.Len(t, runs, 2)
	})
	t.Run("directory", func(t *testing.T) {
		path := storeWithRuns(t, 2)
		dir := filepath.Dir(path)
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		_, err := store.Open(path)
		unusable(t, err, path, "cannot be written: its directory "+dir+" is read-only")
		db, runs := readRuns(t, path)
		assert.Len(t, runs, 2)
		run, err := db.GetRun(ctx, runs[0].ID, true)
		require.NoError(t, err)
		assert.Len(t, run.Records, 200)
	})
	t.Run("older store cannot be upgraded", func(t *testing.T) {
		path := olderStore(t)
		require.NoError(t, os.Chmod(path, 0o444))
		_, err := store.OpenReadOnly(path)
		unusable(t, err, path, fmt.Sprintf("has schema 3 and this aiperf needs schema %d, but it cannot be upgraded: is read-only", store.SchemaVersion()))
	})
}

func TestUnusableErrorUnwraps(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none.db")
	_, err := store.OpenReadOnly(path)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}
