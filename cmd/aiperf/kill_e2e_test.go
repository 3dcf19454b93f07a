package main

import (
	"context"
	"encoding/json"
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

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// killScript has a cell "long" whose trial runs until it is killed between
// two quick cells, all resetting the cache and profiling.
const killScript = smallBase + `
sweep(name = vars["name"],
      base = base.replace(api_key = vars["key"], reset_kv_cache = True, server_profiler = True),
      scenarios = [
          {"name": "short", "request_count": 2},
          {"name": "long", "request_count": 100000},
          {"name": "after", "request_count": 3},
      ])
`

// startKillSweep starts a mock requiring secret and writes killScript in a
// fresh directory; it returns the mock, the directory and the sweep's args.
func startKillSweep(t *testing.T, name, secret string) (*mockServer, string, []string) {
	t.Helper()
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 20, APIKey: secret})
	dir := t.TempDir()
	script := writeFile(t, dir, name+".star", killScript)
	return m, dir, []string{"sweep", script, "--set", "url=" + m.URL, "--set", "key=" + secret,
		"--set", "tok=" + tinyTokenizer(t), "--set", "name=" + name}
}

// filesNamed lists the files called name under dir.
func filesNamed(t *testing.T, dir, name string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			out = append(out, path)
		}
		return err
	}))
	return out
}

// TestSweepParentKilledLeavesNoSpec: a sweep parent killed outright (SIGKILL)
// mid-trial cannot clean up after itself; the trial spec, which holds the API
// key, is still gone: the child removed it when it read it. A spec left by
// an earlier run is removed by the next run of the sweep.
func TestSweepParentKilledLeavesNoSpec(t *testing.T) {
	const secret = "sk-killed-parent-secret-0042"
	m, dir, args := startKillSweep(t, "killed", secret)

	parent := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...)...)
	parent.Dir = dir
	require.NoError(t, parent.Start())
	defer parent.Process.Kill()
	require.Eventually(t, func() bool {
		c := m.control()
		return c.ProfilerStarts == 2 && c.InferenceRequests > 4
	}, hangGuard, 5*time.Millisecond, "the second trial is under load")
	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()

	// The orphaned child is interrupted (it stops its profiler), writes its
	// result and exits.
	longDir := filepath.Join(dir, "artifacts", "killed", "long", "trial_0001")
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(longDir, runner.ResultFile))
		return err == nil && m.control().ProfilerStops == 2
	}, hangGuard, 5*time.Millisecond, "the orphaned child finished")
	awaitOrphansGone(t, dir) // it wrote its result; a resume while it still runs is refused
	assert.Empty(t, filesNamed(t, dir, runner.SpecFile), "no trial spec outlives a killed parent")
	assertNoSecretInStore(t, dir, secret)

	// A spec left behind (by a parent killed between writing it and its
	// child reading it) is removed by the next run, even in a trial that
	// does not run again: resume, and interrupt once the long trial runs.
	shortDir := filepath.Join(dir, "artifacts", "killed", "short", "trial_0001")
	writeFile(t, shortDir, runner.SpecFile, `{"profile":{"api_key":"`+secret+`"}}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil && m.control().ProfilerStarts < 3 {
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
	}()
	again := cliCtx(ctx, t, dir, append(args, "--resume")...)
	require.Equal(t, ExitInterrupted, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	assert.Contains(t, again.stderr, "short trial 1: already stored, skipped")
	assert.Empty(t, filesNamed(t, dir, runner.SpecFile), "the stale spec is gone")
}

// TestSweepDeadTrialProfilerStoppedByRunner: a trial child killed (SIGKILL)
// after its profiler started cannot stop it; the sweep runner sees the mark
// it left and sends the stop on its behalf before the next trial starts, and
// the trial's stored run says so.
func TestSweepDeadTrialProfilerStoppedByRunner(t *testing.T) {
	const secret = "sk-dead-child-secret-0043"
	m, dir, args := startKillSweep(t, "dead", secret)
	mark := filepath.Join(dir, "artifacts", "dead", "long", "trial_0001", runner.ProfilerMarkFile)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan int, 1)
	go func() {
		defer close(killed)
		for ctx.Err() == nil {
			if m.control().ProfilerStarts == 2 {
				if mk, err := hooks.ReadMark(mark); err == nil {
					_ = syscall.Kill(mk.PID, syscall.SIGKILL) // the trial child dies with its profiler running
					killed <- mk.PID
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	inv := cliCtx(ctx, t, dir, args...)
	cancel() // the sweep is over: stop looking for the mark
	require.NotZero(t, <-killed, "the long trial's child was killed; stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	require.Equal(t, ExitSomeFailed, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)
	assert.Contains(t, inv.stderr, "long trial 1: trial process: signal: killed\n", "no line of its log as if it were the cause")
	assert.NotContains(t, inv.stdout+inv.stderr, secret)
	assert.NoFileExists(t, mark, "the mark is gone once the stop was sent")

	c := m.control()
	assert.Equal(t, 3, c.ProfilerStarts)
	assert.Equal(t, 3, c.ProfilerStops, "every start got its stop")
	segs := trialSegments(m.kinds())
	require.Len(t, segs, 3)
	assert.Equal(t, string(mock.EventStopProfile), lastNonRequest(segs[1]),
		"the dead trial's profiler is stopped before the next trial resets the cache")
	assert.Equal(t, []string{"reset", "start_profile"}, segs[2][:2])

	db := openStore(t, dir)
	runs, err := db.ListRuns(context.Background(), store.RunFilter{Sweep: "dead"})
	require.NoError(t, err)
	require.Len(t, runs, 3)
	var dead store.RunRow
	for _, r := range runs {
		if r.CellLabel == "long" {
			dead = r
		} else {
			assert.Equal(t, result.StatusComplete, r.Status, r.CellLabel)
		}
	}
	assert.Equal(t, result.StatusFailed, dead.Status)
	stored := readStoredRun(t, dir, int(dead.ID))
	require.Len(t, stored.ControlHooks, 1, "the stop the runner sent is recorded on the dead trial")
	call := stored.ControlHooks[0]
	assert.Equal(t, hooks.HookProfilerStop, call.Hook)
	assert.True(t, call.OK)
	assert.Equal(t, m.URL, call.Origin)
	assert.Equal(t, "stopped by the sweep runner after the trial process died", call.Warning)
	assertNoSecretInStore(t, dir, secret)
}

// lastNonRequest is the last event kind of a trial's segment that is not a
// request's start or end (a killed child's requests may end after it died).
func lastNonRequest(seg []string) string {
	for i := len(seg) - 1; i >= 0; i-- {
		if !strings.HasPrefix(seg[i], "request_") {
			return seg[i]
		}
	}
	return ""
}

// TestProfileKilledKeepsItsRecords: `aiperf profile` stores the records it
// finished while its load goes (read as running until then), so one killed
// outright (SIGKILL) leaves an interrupted run with them in the store, and
// no secret.
func TestProfileKilledKeepsItsRecords(t *testing.T) {
	const secret = "sk-killed-profile-secret-0042"
	subprocesses(t)
	m := startMock(t, mock.Config{APIKey: secret})
	dir := t.TempDir()
	path := filepath.Join(dir, "aiperf.db")
	cmd := exec.Command(builtBinary(t, "aiperf"), "--store", path, "profile", "-m", "mock-model", "-u", m.URL, "--api-key", secret,
		"--tokenizer", tinyTokenizer(t), "--concurrency", "8", "--request-count", "1000000", "--ui", "none",
		"--artifact-dir", filepath.Join(dir, "out"))
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	stored := func() *store.RunRow {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			return nil
		}
		defer db.Close()
		rows, err := db.ListRuns(context.Background(), store.RunFilter{})
		if err != nil || len(rows) != 1 {
			return nil
		}
		return &rows[0]
	}
	require.Eventually(t, func() bool { row := stored(); return row != nil && row.RecordCount > 1 }, hangGuard, 20*time.Millisecond,
		"the first record, then the first batch, are stored while the load goes")
	assert.Equal(t, result.StatusRunning, stored().Status, "read as running while its process lives")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	db, err := store.OpenReadOnly(path)
	require.NoError(t, err)
	defer db.Close()
	row := stored()
	require.NotNil(t, row)
	assert.Equal(t, result.StatusInterrupted, row.Status)
	assert.Equal(t, store.PendingError, row.Error)
	run, err := db.GetRun(context.Background(), row.ID, true)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(run.Records), 1+4096)
	assert.Equal(t, row.RecordCount, len(run.Records))
	for _, r := range run.Records {
		require.Equal(t, 200, r.Status)
	}
	// runs show says why there are no figures: not that nothing was sent.
	show := cli(t, dir, "runs", "show", strconv.FormatInt(row.ID, 10))
	require.Equal(t, ExitOK, show.code, show.stderr)
	lineContaining(t, show.stdout, fmt.Sprintf("No profiling figures: the run's process exited before it summarised its records "+
		"(%d profiling records stored).", row.RecordCount))
	assert.NotContains(t, show.stdout, "no profiling request was sent")
	// runs export refuses it: no figures, and AIPerf's shape would pass it for a run that ran whole.
	export := cli(t, dir, "runs", "export", strconv.FormatInt(row.ID, 10), "--format", "csv")
	assert.Equal(t, ExitUsage, export.code, export.stderr)
	assert.Contains(t, export.stderr, fmt.Sprintf("run %d did not finish: the run's process exited before it summarised", row.ID))
	assert.Empty(t, export.stdout)
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if !errors.Is(err, fs.ErrNotExist) {
			require.NoError(t, err)
		}
		assert.NotContains(t, string(b), secret, f)
	}
}

// TestSweepSecondInterruptLeavesNoTrialBehind: the first Ctrl-C of a sweep
// interrupts its trial child, whose clean stop then hangs on a profiler
// stop that never answers; the second Ctrl-C exits the parent at once, and
// the child goes with it (it would otherwise finish its stop unattended,
// adopted by init, while a --resume ran the same trial in its directory).
func TestSweepSecondInterruptLeavesNoTrialBehind(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 2000, ITL: 1})
	url, stopping := holdProfilerStop(t, m)
	dir := t.TempDir()
	script := writeFile(t, dir, "orphan.star", smallBase+`
sweep(name = "orphan", base = base.replace(server_profiler = True, server_profiler_timeout_seconds = 3600))
`)
	cmd, _, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), "sweep", script,
		"--set", "url="+url, "--set", "tok="+tinyTokenizer(t))
	require.Eventually(t, func() bool { return m.control().InferenceRequests > 0 }, hangGuard, 10*time.Millisecond)
	child := trialPID(t, filepath.Join(dir, "artifacts", "orphan", "base", "trial_0001"))
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) }) // should the test fail: before the mock waits for it

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	<-stopping             // the child's clean stop is under way, blocked on the profiler
	time.Sleep(sameSignal) // not the first one delivered twice
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), stderr.String())
	assert.Contains(t, stderr.String(), "interrupted again: exiting now")
	require.Eventually(t, func() bool { return processGone(child) }, hangGuard, 10*time.Millisecond,
		"the trial child (pid %d) outlived its parent", child)
}

// trialPID is the pid of the trial child running in dir, from the mark its
// server profiler leaves there.
func trialPID(t *testing.T, dir string) int {
	t.Helper()
	var mark hooks.Mark
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, runner.ProfilerMarkFile))
		return err == nil && json.Unmarshal(b, &mark) == nil && mark.PID > 0
	}, hangGuard, 10*time.Millisecond, "the trial's profiler mark")
	return mark.PID
}

// processGone reports whether pid has exited (a zombie no one reaped yet
// has too).
func processGone(pid int) bool {
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
