package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnusableNamesALock: a store another process keeps locked past the
// wait is refused as unusable, saying so (the wait itself is 30 s).
func TestUnusableNamesALock(t *testing.T) {
	t.Parallel()
	db := &DB{path: filepath.Join(t.TempDir(), "x.db")}
	var ue *UnusableError
	require.ErrorAs(t, db.unusable(sqlite3.Error{Code: sqlite3.ErrBusy}), &ue)
	assert.Contains(t, ue.Error(), "is locked by another process (waited 30s)")
	assert.Contains(t, ue.Error(), "let that process finish")
}

// TestUnusableNamesASideFile: a -shm file another user left, which this
// user may not write, is named instead of the writable store. (root may
// write anything: the test needs another user.)
func TestUnusableNamesASideFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write every file")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.db")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, os.WriteFile(path+"-shm", nil, 0o444))
	db := &DB{path: path}
	var ue *UnusableError
	require.ErrorAs(t, db.unusable(sqlite3.Error{Code: sqlite3.ErrReadonly}), &ue)
	assert.Contains(t, ue.Error(), path+"-shm beside it is not writable by this user")
}
