//go:build unix

package store_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/store"
)

// openAsEnv names the store the test binary, run as another user by
// TestRefusedOpenLeavesNoSideFiles, opens for writing.
const openAsEnv = "AIPERF_STORE_TEST_OPEN"

// nobody is the user the test runs its refused open as when it runs as
// root (who may write every file).
const nobody = 65534

// TestRefusedOpenLeavesNoSideFiles: a store in a directory everyone may
// write (a shared one, mode 1777) whose file another user may not write is
// refused for writing as read-only, and leaves the directory as it found it:
// no -wal or -shm file of that user's, which would lock the store's owner
// out ("s.db-shm beside it is not writable by this user"). The owner then
// opens it. As root the refused open runs in a child process as nobody.
func TestRefusedOpenLeavesNoSideFiles(t *testing.T) {
	if path := os.Getenv(openAsEnv); path != "" { // the child
		_, err := store.Open(path)
		require.Error(t, err)
		_, _ = io.WriteString(os.Stdout, "refused: "+err.Error()+"\n")
		return
	}
	dir, err := os.MkdirTemp("", "aiperf-shared-") // t.TempDir's parent is private to its owner
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o1777))
	path := filepath.Join(dir, "s.db")
	require.NoError(t, os.Rename(storeWithRuns(t, 1), path))

	var refusal string
	if os.Geteuid() == 0 {
		refusal = openAsNobody(t, dir, path)
	} else {
		require.NoError(t, os.Chmod(path, 0o444))
		_, err := store.Open(path)
		require.Error(t, err)
		refusal = err.Error()
		require.NoError(t, os.Chmod(path, 0o644))
	}
	assert.Contains(t, refusal, "store "+path+" is read-only (attempt to write a readonly database): make the file writable")
	for _, f := range []string{path + "-wal", path + "-shm"} {
		assert.NoFileExists(t, f, "a refused open leaves the store's directory as it found it")
	}
	db, err := store.Open(path)
	require.NoError(t, err, "the owner is not locked out")
	require.NoError(t, db.Close())
}

// openAsNobody runs the test binary, copied where nobody may run it, as
// nobody to open path for writing, and returns what it said.
func openAsNobody(t *testing.T, dir, path string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "store.test")
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	t.Cleanup(func() { os.Remove(bin) })
	cmd := exec.Command(bin, "-test.run=^TestRefusedOpenLeavesNoSideFiles$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), openAsEnv+"="+path, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "refused: "); ok {
			return rest
		}
	}
	require.Fail(t, "the child did not open the store", "%s", out)
	return ""
}
