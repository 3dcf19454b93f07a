package store

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZombieIsNotAlive: a process that exited but that its parent has not
// yet reaped (a zombie, as a sweep's is under a harness that waits late)
// does not hold its sweep's claim; once reaped it is gone too.
func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	// Not reaped yet: the child is a zombie as soon as it exits. Wait for
	// that state, not for a time.
	require.Eventually(t, func() bool { return zombie(pid) }, time.Minute, time.Millisecond)
	assert.False(t, processAlive(pid), "a zombie holds nothing")
	require.NoError(t, cmd.Wait())
	assert.False(t, processAlive(pid))

	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	assert.True(t, processAlive(sleeper.Process.Pid))
	assert.False(t, zombie(sleeper.Process.Pid))
}
