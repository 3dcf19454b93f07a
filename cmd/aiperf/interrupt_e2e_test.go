package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// lockedBuffer is an output stream the test reads while a process (or an
// in-process run, from several goroutines) writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startAiperf starts this test binary as the aiperf binary in dir, with
// the store at path, its output read while it runs.
func startAiperf(t *testing.T, dir, path string, args ...string) (cmd *exec.Cmd, stdout, stderr *lockedBuffer) {
	t.Helper()
	cmd = exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", path}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), beMain+"=1")
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stdout, stderr
}

// awaitOutput waits until out says sub: the rendezvous with a process in
// the state the test wants (the limit only guards against a hang).
func awaitOutput(t *testing.T, out *lockedBuffer, sub string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), sub) }, 2*time.Minute, 5*time.Millisecond,
		"the process never said %q; it said:\n%s", sub, out)
}

// holdingMock is the mock behind a handler that holds the requests hold
// picks (an inference request by its number from 1, an admin call by its
// path with n 0) until the client gives up on them or they are released,
// and tells the test when it holds one: the rendezvous at which the test
// interrupts aiperf.
type holdingMock struct {
	*mockServer
	url       string
	held      chan string // the path of each request held
	inference atomic.Int64
	release   chan struct{}
	once      sync.Once
}

func startHoldingMock(t *testing.T, cfg mock.Config, hold func(path string, n int64) bool) *holdingMock {
	t.Helper()
	m := &holdingMock{mockServer: startMock(t, cfg), held: make(chan string, 64), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int64
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") {
			n = m.inference.Add(1)
		}
		if hold(r.URL.Path, n) {
			m.held <- r.URL.Path
			select {
			case <-r.Context().Done():
				return
			case <-m.release:
			}
		}
		m.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(m.releaseHeld)
	m.url = srv.URL
	return m
}

// releaseHeld answers the requests held and every later one.
func (m *holdingMock) releaseHeld() { m.once.Do(func() { close(m.release) }) }

// interruptWhenHeld sends SIGINT to cmd once the mock holds a request (the
// process is then in the state the test set up), waits until the process
// says it is stopping (its run is cancelled), releases the held requests
// and returns its exit code.
func interruptWhenHeld(t *testing.T, m *holdingMock, cmd *exec.Cmd, stderr *lockedBuffer) int {
	t.Helper()
	select {
	case <-m.held:
	case <-time.After(2 * time.Minute): // a hang guard only
		t.Fatalf("no request was held; stderr:\n%s", stderr)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	awaitOutput(t, stderr, "aiperf: SIGINT (Ctrl-C): stopping cleanly")
	m.releaseHeld()
	return exitCode(t, cmd, 2*time.Minute)
}

// TestProfileInterruptedDuringWarmup: Ctrl-C while the warmup goes says
// so, and how far the warmup had got (not "after the load: all 0
// profiling requests had returned"); inputs.json is written for the
// conversations that were sent.
func TestProfileInterruptedDuringWarmup(t *testing.T) {
	m := startHoldingMock(t, mock.Config{Fast: true}, func(_ string, n int64) bool { return n == 2 })
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.url, "--concurrency", "1",
		"--warmup-request-count", "4", "--request-count", "4", "--num-dataset-entries", "50", "--artifact-dir", "out")...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), "interrupted (during warmup: 1 of 2 warmup requests had returned, 1 was cut; "+
		"no profiling request was sent): SIGINT (Ctrl-C)")
	assert.NotContains(t, stderr.String(), "after the load")
	assert.NotContains(t, stderr.String(), "context canceled")
	assert.Equal(t, int64(2), m.inference.Load(), "only the two warmup requests were sent")

	inputs := readJSON(t, filepath.Join(dir, "out", "inputs.json"))
	data := inputs["data"].([]any)
	assert.True(t, len(data) == 1 || len(data) == 2, "the conversations of the two requests sent, not all 50: %d", len(data))
	rows, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, result.StatusInterrupted, rows[0].Status)
	assert.Contains(t, rows[0].Error, "during warmup", "the stored run says so too")
}

// TestProfileInterruptedDuringProfilerStart: Ctrl-C while the server
// profiler's start call goes (after the warmup) says so; no profiling
// request is sent and the profiler is stopped.
func TestProfileInterruptedDuringProfilerStart(t *testing.T) {
	m := startHoldingMock(t, mock.Config{Fast: true}, func(path string, _ int64) bool { return path == "/start_profile" })
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.url, "--concurrency", "1",
		"--warmup-request-count", "2", "--request-count", "4", "--server-profiler", "--artifact-dir", "out")...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), "interrupted (during the server profiler start call, after warmup "+
		"(all 2 warmup requests had returned): no profiling request was sent)")
	assert.NotContains(t, stderr.String(), "after the load")
	assert.Equal(t, int64(2), m.inference.Load(), "no profiling request was sent")
	c := m.control()
	assert.Equal(t, c.ProfilerStarts, c.ProfilerStops, "the start the server may have taken is stopped")
	assert.Equal(t, 1, c.ProfilerStops)
}

// TestProfileInterruptedDuringReset: Ctrl-C while the KV-cache reset call
// goes says so.
func TestProfileInterruptedDuringReset(t *testing.T) {
	m := startHoldingMock(t, mock.Config{Fast: true}, func(path string, _ int64) bool { return path == "/reset_prefix_cache" })
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.url, "--request-count", "4",
		"--reset-kv-cache", "--artifact-dir", "out")...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), "interrupted during the KV-cache reset call (no load was sent)")
	assert.Zero(t, m.inference.Load())
}

// TestProfileInterruptedCutWording: requests cut by a Ctrl-C are called
// that, never "still in flight at the end of the grace period" (a run of a
// request count has none); the message says how far profiling had got.
func TestProfileInterruptedCutWording(t *testing.T) {
	m := startHoldingMock(t, mock.Config{Fast: true}, func(_ string, n int64) bool { return n == 3 })
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.url, "--concurrency", "1",
		"--request-count", "10", "--artifact-dir", "out")...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), "interrupted (during profiling: 2 of 3 profiling requests had returned, 1 was cut; 7 of 10 were never sent)")
	assert.Contains(t, stdout.String(), "Cut: 1 requests were cancelled and excluded from the metrics: 1 in flight when the run was interrupted")
	assert.NotContains(t, stdout.String()+stderr.String(), "grace period")
}

// TestCancelledOnPurposeIsNotAGracePeriod: requests aborted by
// --request-cancellation-rate are called that, not "still in flight at the
// end of the grace period".
func TestCancelledOnPurposeIsNotAGracePeriod(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 200, ITL: 1})
	inv := cli(t, "", quick(m.URL, "--request-count", "3", "--request-cancellation-rate", "100",
		"--request-cancellation-delay", "0", "--no-store")...)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "no profiling request completed: all 3 were cut (3 cancelled on purpose (--request-cancellation-rate)), excluded")
	assert.Contains(t, inv.stdout, "Cut: 3 requests were cancelled and excluded from the metrics: 3 cancelled on purpose")
	assert.NotContains(t, inv.stdout+inv.stderr, "grace period")
}

// TestSweepInterruptedPrintsWhatCompleted: Ctrl-C of a sweep still prints
// the sweep table of the trials that completed, and no "context canceled".
func TestSweepInterruptedPrintsWhatCompleted(t *testing.T) {
	subprocesses(t)
	m := startHoldingMock(t, mock.Config{Fast: true}, func(_ string, n int64) bool { return n == 3 }) // the second trial's first
	dir := t.TempDir()
	script := writeFile(t, dir, "cut.star", smallBase+`
sweep(name = "cut", base = base.replace(request_count = 2, concurrency = 1), matrix = {"osl": [2, 3]})
`)
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), "sweep", script,
		"--set", "url="+m.url, "--set", "tok="+tinyTokenizer(t))
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), `sweep "cut" interrupted after 1 of 2 trials (rerun with --resume to finish): SIGINT (Ctrl-C)`)
	assert.NotContains(t, stderr.String(), "context canceled")
	out := stdout.String()
	assert.Contains(t, out, `Sweep "cut" (id 1, interrupted)`)
	assert.Regexp(t, `│\s+2 │\s+1 │`, out, "the completed cell's row")
	assert.Regexp(t, `│\s+3 │\s+0/1 │`, out, "the interrupted cell's row")
}

// TestSweepResumeOfAChangedScriptSaysSo: --resume after the script changed,
// into a new artifact directory, says that nothing was resumed and a new
// sweep started.
func TestSweepResumeOfAChangedScriptSaysSo(t *testing.T) {
	dir, args := smallSweep(t, "change")
	first := cli(t, dir, args...)
	require.Equal(t, ExitOK, first.code, first.stderr)
	assert.NotContains(t, first.stderr, "resume")

	writeFile(t, dir, "change.star", smallBase+`sweep(name = "change", base = base.replace(request_count = 3))`+"\n")
	again := cli(t, dir, append(args, "--resume", "--artifact-dir", "elsewhere")...)
	require.Equal(t, ExitOK, again.code, again.stderr)
	assert.Contains(t, again.stderr, `note: --resume found no sweep "change" with these cells in `+filepath.Join(dir, "aiperf.db")+
		" to continue (the script, a loaded module or a --set value changed, or it never ran): nothing was resumed; a new sweep (#2) starts")
}

// TestSweepResumeIntoAnEarlierSweepsDirectoryIsRefused: sweep #1 wrote its
// trials under the default directory, sweep #2 of the same script under
// B, where a trial did not complete (its run marked failed). --resume
// without --artifact-dir B would run that trial over sweep #1's: it is
// refused, naming the run it would overwrite and the directory to give,
// and sweep #1's files are untouched; given B, it resumes.
func TestSweepResumeIntoAnEarlierSweepsDirectoryIsRefused(t *testing.T) {
	dir, args := smallSweep(t, "two")
	first := cli(t, dir, args...)
	require.Equal(t, ExitOK, first.code, first.stderr)
	second := cli(t, dir, append(args, "--artifact-dir", "B")...)
	require.Equal(t, ExitOK, second.code, second.stderr)
	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE runs SET status = 'failed' WHERE sweep_id = 2`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	trial := filepath.Join(dir, "artifacts", "two", "base", "trial_0001", "profile_export_aiperf.json")
	before, err := os.ReadFile(trial)
	require.NoError(t, err)

	refused := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitUsage, refused.code, refused.stderr)
	assert.Contains(t, refused.stderr, `sweep "two": --resume continues sweep #2, but artifacts/two/base/trial_0001 holds run 1 of sweep #1, `+
		"which it would overwrite; nothing was sent: give --artifact-dir B, where its trials are")
	after, err := os.ReadFile(trial)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	resumed := cli(t, dir, append(args, "--resume", "--artifact-dir", "B")...)
	require.Equal(t, ExitOK, resumed.code, resumed.stderr)
}

// smallSweep is a one-cell sweep named name (smallBase) against a fast
// mock, written in a new directory: the directory and the sweep's command
// line.
func smallSweep(t *testing.T, name string) (string, []string) {
	t.Helper()
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	script := writeFile(t, dir, name+".star", smallBase+`sweep(name = "`+name+`", base = base)`+"\n")
	return dir, []string{"sweep", script, "--set", "url=" + m.URL, "--set", "tok=" + tinyTokenizer(t), "--ui", "none"}
}

// TestNoStoreSeveralTrialsKeepsNothing: profile --no-store with several
// trials runs them through a scratch store, so nothing lands in --store's
// file and nothing is left in the temporary directory, whether the sweep
// completes or is interrupted (which then says there is nothing to resume).
func TestNoStoreSeveralTrialsKeepsNothing(t *testing.T) {
	subprocesses(t)
	m := startHoldingMock(t, mock.Config{Fast: true}, func(_ string, n int64) bool { return n == 3 }) // the second trial's first
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	args := quick(m.url, "--request-count", "2", "--concurrency", "1", "--num-profile-runs", "3", "--artifact-dir", "out",
		"--tokenizer", tinyTokenizer(t), "--no-store")
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), args...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), `sweep "profile" interrupted after 1 of 3 trials (--no-store kept nothing to resume)`)
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the scratch store is removed")

	m.releaseHeld()
	done := cli(t, dir, append(args, "--ui", "simple")...)
	require.Equal(t, ExitOK, done.code, "stdout:\n%s\nstderr:\n%s", done.stdout, done.stderr)
	assert.Contains(t, done.stderr, "store none (--no-store)")
	assert.FileExists(t, filepath.Join(dir, "out", "aggregate", "profile_export_aiperf_aggregate.json"))
	assert.NoFileExists(t, filepath.Join(dir, "aiperf.db"))
	left, err = os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the scratch store is removed")
}

// TestProfileMultiRunResumes: an interrupted `aiperf profile
// --num-profile-runs 3` says to rerun with --resume, and that works: the
// same command with --resume continues the stored sweep, skipping the
// trial stored complete, into the same directory.
func TestProfileMultiRunResumes(t *testing.T) {
	subprocesses(t)
	m := startHoldingMock(t, mock.Config{Fast: true}, func(_ string, n int64) bool { return n == 3 }) // the second trial's first
	dir := t.TempDir()
	args := quick(m.url, "--request-count", "2", "--concurrency", "1", "--num-profile-runs", "3", "--artifact-dir", "out",
		"--tokenizer", tinyTokenizer(t))
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), args...)
	code := interruptWhenHeld(t, m, cmd, stderr)
	require.Equal(t, ExitInterrupted, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stderr.String(), `sweep "profile" interrupted after 1 of 3 trials (rerun with --resume to finish)`)

	again := cli(t, dir, append(args, "--resume")...)
	require.Equal(t, ExitOK, again.code, "stdout:\n%s\nstderr:\n%s", again.stdout, again.stderr)
	assert.NotContains(t, again.stderr, "nothing was resumed")
	db, err := store.Open(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	defer db.Close()
	sweeps, err := db.ListSweeps(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, sweeps, 1, "the same sweep, continued")
	done, err := db.CompletedTrialKeys(context.Background(), sweeps[0].ID)
	require.NoError(t, err)
	assert.Len(t, done, 3)
	assert.FileExists(t, filepath.Join(dir, "out", "aggregate", "profile_export_aiperf_aggregate.json"))

	single := cli(t, dir, quick(m.url, "--request-count", "2", "--resume")...)
	assert.Equal(t, ExitUsage, single.code, single.stderr)
	assert.Contains(t, single.stderr, "a single run has nothing to resume (nothing was sent)")
}
