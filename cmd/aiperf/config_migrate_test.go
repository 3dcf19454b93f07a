package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const oldShape = "models: [m]\nendpoint: {urls: [\"http://127.0.0.1:19370\"]}\nphases: [{name: profiling, requests: 4}]\n"

// readString is the content of dir/name.
func readString(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}

// TestConfigMigrateInPlaceKeepsExistingBackup: --in-place never
// overwrites an existing FILE.bak: the original goes to the first free
// FILE.bak.N, which it names, and the file is rewritten.
func TestConfigMigrateInPlaceKeepsExistingBackup(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "old.yaml", oldShape)
	writeFile(t, dir, "old.yaml.bak", "my precious notes\n")
	writeFile(t, dir, "old.yaml.bak.1", "older notes\n")

	inv := cli(t, dir, "config", "migrate", "--in-place", "old.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, "my precious notes\n", readString(t, dir, "old.yaml.bak"), "the existing .bak is left as it is")
	assert.Equal(t, "older notes\n", readString(t, dir, "old.yaml.bak.1"))
	assert.Equal(t, oldShape, readString(t, dir, "old.yaml.bak.2"), "the original is kept")
	assert.True(t, strings.HasPrefix(readString(t, dir, "old.yaml"), "schemaVersion: \"2.0\"\n"), "the file is rewritten")
	assert.Contains(t, inv.stderr, filepath.Join(dir, "old.yaml.bak")+" exists: it is left as it is")
	assert.Contains(t, inv.stderr, "(the original is "+filepath.Join(dir, "old.yaml.bak.2")+")")
}

// TestConfigMigrateInPlaceNotThroughSymlink: a FILE.bak that is a
// symlink (dangling or not) is not written through; the file it points
// at is untouched.
func TestConfigMigrateInPlaceNotThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "old.yaml", oldShape)
	target := writeFile(t, dir, "victim.txt", "do not touch\n")
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "old.yaml.bak")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "missing.txt"), filepath.Join(dir, "old.yaml.bak.1")))

	inv := cli(t, dir, "config", "migrate", "--in-place", "old.yaml")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, "do not touch\n", readString(t, dir, "victim.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "missing.txt"), "a dangling symlink is not followed")
	assert.Equal(t, oldShape, readString(t, dir, "old.yaml.bak.2"))
	assert.Contains(t, inv.stderr, "(the original is "+filepath.Join(dir, "old.yaml.bak.2")+")")
}

// TestConfigMigrateInPlaceNoFreeBackup: with every backup name taken the
// file is left as it is and the error (exit 2) says what is in the way.
func TestConfigMigrateInPlaceNoFreeBackup(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "old.yaml", oldShape)
	writeFile(t, dir, "old.yaml.bak", "notes\n")
	for i := 1; i < maxBackups; i++ {
		writeFile(t, dir, "old.yaml.bak."+strconv.Itoa(i), "notes\n")
	}
	inv := cli(t, dir, "config", "migrate", "--in-place", "old.yaml")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	old := filepath.Join(dir, "old.yaml")
	assert.Contains(t, inv.stderr, old+".bak and "+old+".bak.1 to .bak.99 all exist: "+old+" is left as it is")
	assert.Equal(t, oldShape, readString(t, dir, "old.yaml"))
	assert.Equal(t, "notes\n", readString(t, dir, "old.yaml.bak"))
}
