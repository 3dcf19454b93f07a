package runner_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// A parent killed outright (SIGKILL: no chance to interrupt its child) still
// leaves no trial running unattended: the kernel sends the child SIGINT, and
// the child stops cleanly and writes its interrupted result.
func TestOrphanedChildIsInterrupted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial_0001")
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentMode+"="+dir, "GORACE=atexit_sleep_ms=0")
	require.NoError(t, parent.Start())
	defer parent.Process.Kill()

	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the child started")
	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()

	var run *result.Run
	require.Eventually(t, func() bool {
		var err error
		run, err = runner.ReadResult(filepath.Join(dir, runner.ResultFile))
		return err == nil
	}, 30*time.Second, 5*time.Millisecond, "the orphaned child wrote its result")
	assert.Equal(t, result.StatusInterrupted, run.Status)
}
