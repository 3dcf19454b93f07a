package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// runIn runs aiperf in dir with exactly args (no --store added).
func runIn(t *testing.T, dir string, args ...string) invocation {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr lockedBuffer
	code := run(context.Background(), args, &stdout, &stderr)
	return invocation{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestStoreFlagValuesRefused: a --store that would lose the runs or put
// them where no reader finds them is a usage error before any traffic (an
// empty one wrote a file named "?_journal_mode=WAL&..."; :memory: printed
// "Stored" and threw the run away; file:x.db wrote x.db).
func TestStoreFlagValuesRefused(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store="}, "--store is empty: give the path of the store file"},
		{[]string{"--store", ":memory:"}, "--store :memory: is an in-memory database, whose runs would be lost when aiperf exits: " +
			"give the path of a store file, or --no-store to record nothing"},
		{[]string{"--store", "file:x.db"}, "--store file:x.db is an SQLite URI: give the path of the store file (x.db)"},
	} {
		dir := t.TempDir()
		inv := runIn(t, dir, append(tc.args, quick(m.URL, "--request-count", "2")...)...)
		assert.Equal(t, ExitUsage, inv.code, "%v: %s", tc.args, inv.stderr)
		assert.Contains(t, inv.stderr, "aiperf: error: "+tc.want, tc.args)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "%v: nothing written", tc.args)
	}
	assert.Zero(t, m.control().InferenceRequests, "nothing was sent")

	dir := t.TempDir()
	inv := runIn(t, dir, "--store", "", "runs", "list")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--store is empty")
}

// TestEmptyStoreEnvIsUnset: AIPERF_STORE set but empty is the default
// store, for the run and for the reads after it.
func TestEmptyStoreEnvIsUnset(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	t.Setenv("AIPERF_STORE", "")
	inv := runIn(t, dir, quick(m.URL, "--request-count", "2", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "Stored: run 1 in artifacts/aiperf.db")
	assert.FileExists(t, filepath.Join(dir, "artifacts", "aiperf.db"))
	inv = runIn(t, dir, "runs", "list", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, `"id": 1`)
}

// TestStorePathWithQuestionMark: a store path with "?" is the file it
// names, for the run and for the reads after it (it exited 1).
func TestStorePathWithQuestionMark(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := runIn(t, dir, append([]string{"--store", "a?b.db"}, quick(m.URL, "--request-count", "2", "--artifact-dir", "out")...)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "a?b.db"))
	inv = runIn(t, dir, "--store", "a?b.db", "runs", "show", "1")
	assert.Equal(t, ExitOK, inv.code, inv.stderr)
}

// TestStoreReadOnAFullDisk: runs list, show and compare read a store on a
// full disk, and leave its directory as they found it (they were refused:
// "cannot be written: its disk is full", leaving -wal and -shm behind).
func TestStoreReadOnAFullDisk(t *testing.T) {
	disk := smallDisk(t)
	m := startMock(t, mock.Config{Fast: true})
	path := filepath.Join(disk, "aiperf.db")
	for range 2 {
		inv := runIn(t, t.TempDir(), append([]string{"--store", path}, quick(m.URL, "--request-count", "2", "--artifact-dir", "out")...)...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
	}
	fillDisk(t, disk)
	for _, args := range [][]string{{"runs", "list", "--format", "json"}, {"runs", "show", "1"}, {"compare", "1", "2"}} {
		inv := runIn(t, t.TempDir(), append([]string{"--store", path}, args...)...)
		assert.Equal(t, ExitOK, inv.code, "%v: %s", args, inv.stderr)
		for _, side := range []string{path + "-wal", path + "-shm"} {
			assert.NoFileExists(t, side, args)
		}
	}
}

// TestStoredLineNamesItsStore: the "Stored: run N" line's command shows the
// run just stored: with --store when the run went to a store that a bare
// `aiperf runs show N` would not open (it named the default store's run 1,
// another run, after a --store run).
func TestStoredLineNamesItsStore(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	t.Setenv("AIPERF_STORE", "")
	profile := func(name string, flags ...string) string {
		args := append(flags, quick(m.URL, "--request-count", "2", "--name", name, "--artifact-dir", name)...)
		inv := runIn(t, dir, args...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		_, line, _ := strings.Cut(inv.stdout, "Stored: ")
		return "Stored: " + line
	}
	assert.Equal(t, "Stored: run 1 in artifacts/aiperf.db (aiperf runs show 1)\n", profile("default-run"))
	assert.Equal(t, "Stored: run 1 in other dir/o.db\n  aiperf runs show 1 --store 'other dir/o.db'\n",
		profile("mine", "--store", "other dir/o.db"))
	inv := runIn(t, dir, "runs", "show", "1", "--store", "other dir/o.db") // as printed
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "mine")
	assert.NotContains(t, inv.stdout, "default-run")

	t.Setenv("AIPERF_STORE", "env.db") // a bare runs show opens env.db
	assert.Equal(t, "Stored: run 1 in env.db (aiperf runs show 1)\n", profile("from-env"))
	assert.Equal(t, "Stored: run 2 in artifacts/aiperf.db\n  aiperf runs show 2 --store artifacts/aiperf.db\n",
		profile("default-again", "--store", "artifacts/aiperf.db"))
}
