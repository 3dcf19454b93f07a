package store

import (
	"os"
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
	assert.False(t, processAlive(pid, ""), "a zombie holds nothing")
	require.NoError(t, cmd.Wait())
	assert.False(t, processAlive(pid, ""))

	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	assert.True(t, processAlive(sleeper.Process.Pid, ""))
	assert.False(t, zombie(sleeper.Process.Pid))
}

// TestAliveIsTheSameProcess: a claim is held by the process that wrote it,
// not by whichever holds its pid now: a process started since (a reused
// pid, a container's pid 1 restarted) is not its owner, nor is this very
// process of a claim without its start (an older aiperf's, which had this
// pid in another container). A claim without a start, of another pid, is
// judged by the pid alone, as it was.
func TestAliveIsTheSameProcess(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := sleeper.Process.Pid
	start := processStart(pid)
	require.NotEmpty(t, start)
	assert.NotEqual(t, start, selfStart(), "two processes, two instances")

	assert.True(t, processAlive(pid, start))
	assert.False(t, processAlive(pid, selfStart()), "its pid, another process's start")
	assert.True(t, processAlive(pid, ""), "an older claim: the pid is all there is")
	assert.True(t, processAlive(os.Getpid(), selfStart()), "this process's own claim")
	assert.False(t, processAlive(os.Getpid(), ""), "this pid, an older process's claim")
	assert.False(t, processAlive(os.Getpid(), start))
}
