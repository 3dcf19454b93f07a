package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// The parent mode's child mode (default stop), and whether the parent
// interrupts its child once it started (as a sweep's first Ctrl-C does).
const (
	parentChildMode  = "RUNNER_TEST_PARENT_CHILD"
	parentInterrupts = "RUNNER_TEST_PARENT_INTERRUPTS"
)

// cancelOnceStarted cancels ctx once the child says "started" in dir.
func cancelOnceStarted(ctx context.Context, cancel context.CancelFunc, dir string) {
	for ctx.Err() == nil {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			cancel()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// watchParent is the "watch" child: a trial child watched by
// runner.ExitWithParent, whose clean stop, begun at its first SIGINT
// ("interrupted" in dir), goes on until the test writes "finish" in dir
// (as a profiler stop that hangs); it then writes its interrupted result.
// Exiting at once, it writes "exited" first.
func watchParent(dir string, sigs chan os.Signal, writeRun func(string)) int {
	stop := runner.ExitWithParent(func() {
		_ = os.WriteFile(filepath.Join(dir, "exited"), nil, 0o644)
		os.Exit(130)
	})
	defer stop()
	<-sigs
	_ = os.WriteFile(filepath.Join(dir, "interrupted"), nil, 0o644)
	for {
		if _, err := os.Stat(filepath.Join(dir, "finish")); err == nil {
			writeRun(result.StatusInterrupted)
			return 130
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startParent starts a sweep parent (this binary in parentMode) whose
// trial child runs in mode in dir.
func startParent(t *testing.T, dir, mode string, interrupts bool) *exec.Cmd {
	t.Helper()
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), parentMode+"="+dir, parentChildMode+"="+mode, "GORACE=atexit_sleep_ms=0")
	if interrupts {
		parent.Env = append(parent.Env, parentInterrupts+"=1")
	}
	require.NoError(t, parent.Start())
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	return parent
}

// awaitFile waits for dir/name (the limit only guards against a hang).
func awaitFile(t *testing.T, dir, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}, time.Minute, 5*time.Millisecond, "%s in %s", name, dir)
}

// childPID is the pid the Local executor recorded for the child in dir.
func childPID(t *testing.T, dir string) int {
	t.Helper()
	awaitFile(t, dir, runner.PIDFile)
	b, err := os.ReadFile(filepath.Join(dir, runner.PIDFile))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// gone reports whether pid has exited (an unreaped zombie has).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// A parent that dies after interrupting its trial child (a second Ctrl-C
// exits it at once) leaves no trial running: the child, in a clean stop
// that would go on unattended, exits at once.
func TestChildExitsWithAParentThatInterruptedIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial_0001")
	parent := startParent(t, dir, "watch", true)
	pid := childPID(t, dir)
	awaitFile(t, dir, "interrupted")
	require.NoError(t, parent.Process.Kill())
	require.Eventually(t, func() bool { return gone(pid) }, time.Minute, 5*time.Millisecond, "the child outlived its parent")
	assert.FileExists(t, filepath.Join(dir, "exited"), "it exited at once")
	assert.NoFileExists(t, filepath.Join(dir, runner.ResultFile))
}

// A parent killed before it interrupted its child still leaves the child
// its clean stop: that SIGINT is the child's first.
func TestChildOfAKilledParentStillStopsCleanly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial_0001")
	parent := startParent(t, dir, "watch", false)
	awaitFile(t, dir, "started")
	require.NoError(t, parent.Process.Kill())
	awaitFile(t, dir, "interrupted")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "finish"), nil, 0o644))
	awaitFile(t, dir, runner.ResultFile)
	assert.NoFileExists(t, filepath.Join(dir, "exited"))
}

// The trial child of a dead parent that still runs is known: a resume
// refuses to start its trial again in its directory until it has ended.
func TestTrialRunningKnowsAnOrphanedChild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trial_0001")
	parent := startParent(t, dir, "hang", false)
	pid := childPID(t, dir)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	awaitFile(t, dir, "started") // its SIGINT handler is set
	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()

	got, running := runner.TrialRunning(dir)
	require.True(t, running, "the orphan (pid %d) runs", pid)
	assert.Equal(t, pid, got)
	_, running = runner.TrialRunning(filepath.Join(filepath.Dir(dir), "trial_0002"))
	assert.False(t, running, "another trial's directory")
	t.Setenv(childMode, "ok")
	run, err := runner.Local{Binary: os.Args[0]}.Launch(context.Background(), runner.Spec{Profile: plan.NewProfile()}, dir)
	assert.Nil(t, run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("the trial process of an earlier run (pid %d) still runs in %s", pid, dir))

	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return gone(pid) }, time.Minute, 5*time.Millisecond)
	_, running = runner.TrialRunning(dir)
	assert.False(t, running, "once it has ended")
	_, err = runner.Local{Binary: os.Args[0]}.Launch(context.Background(), runner.Spec{Profile: plan.NewProfile()}, dir)
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(dir, runner.PIDFile), "removed once the child ended")
}
