//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// TestProfileDashboardSaysTheInterruptAboveItself: under the dashboard the
// first Ctrl-C says at once that the run stops cleanly and that a second
// one exits at once, and a second one within the same-signal window says
// it was taken as the same one: both above the view, on the terminal. The
// clean stop is held at the profiler's stop while the second one comes.
func TestProfileDashboardSaysTheInterruptAboveItself(t *testing.T) {
	notes := &lockedBuffer{} // where the notes went without a dashboard
	window, out := sameSignal, signalNotes
	sameSignal, signalNotes = time.Hour, notes
	t.Cleanup(func() { sameSignal, signalNotes = window, out })
	m := startHoldingMock(t, mock.Config{Fast: true}, func(path string, _ int64) bool { return path == "/stop_profile" })
	dir := t.TempDir()
	t.Chdir(dir)
	term := openPTY(t)
	ctx, stop := interruptContext(true)
	defer stop()
	codes := make(chan int, 1)
	go func() {
		codes <- run(ctx, []string{"--store", filepath.Join(dir, "aiperf.db"), "profile", "-m", "mock-model", "-u", m.url,
			"--streaming", "--isl", "16", "--osl", "4", "--num-dataset-entries", "4", "--concurrency", "4",
			"--request-count", "100000000", "--server-profiler", "--ui", "dashboard", "--artifact-dir", "out"}, term.tty, term.tty)
	}()
	require.Eventually(t, func() bool {
		return strings.Contains(term.String(), "phase       profiling") && m.control().InferenceRequests > 0
	}, hangGuard, 10*time.Millisecond, "the dashboard shows the load going: %s", term.String())
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case <-m.held: // the clean stop waits for the profiler's stop: the dashboard is still up
	case <-time.After(hangGuard):
		t.Fatalf("no profiler stop after the Ctrl-C:\n%s", term.String())
	}
	const first = "aiperf: SIGINT (Ctrl-C): stopping cleanly; a second one exits at once"
	require.Eventually(t, func() bool { return strings.Contains(term.String(), first) }, hangGuard, 10*time.Millisecond,
		"the first Ctrl-C is said on the terminal: %s", term.String())
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	const same = "aiperf: a second signal within 1h0m0s of the first is taken as the same one; send another to exit at once"
	require.Eventually(t, func() bool { return strings.Contains(term.String(), same) }, hangGuard, 10*time.Millisecond,
		"the second is said on the terminal too: %s", term.String())
	m.releaseHeld()
	var code int
	select {
	case code = <-codes:
	case <-time.After(hangGuard):
		t.Fatalf("the run did not end once the profiler's stop was answered:\n%s", term.String())
	}
	shown := term.shown()
	assert.Equal(t, ExitInterrupted, code, shown)
	assert.Empty(t, notes.String(), "nothing written under the dashboard's drawing")
	hidden := strings.Index(shown, hideCursor)
	require.GreaterOrEqual(t, hidden, 0, "the dashboard was drawn")
	assert.Less(t, hidden, strings.Index(shown, first), "said while the dashboard draws")
	assert.Less(t, strings.Index(shown, same), strings.LastIndex(shown, showCursor), "said while the dashboard draws")
	assert.Contains(t, shown, "stopped before its end")
	assert.Contains(t, shown, "LLM Metrics")
}

// startOnTerminal starts the aiperf binary with term as its controlling
// terminal (stdin, stdout and stderr), in a session of its own, as a shell
// runs it; args follow the store in dir.
func startOnTerminal(t *testing.T, term *terminal, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.tty, term.tty, term.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

// awaitDashboardLoad waits until the dashboard is drawn on term and the
// mock m has answered requests of the load.
func awaitDashboardLoad(t *testing.T, term *terminal, m *mockServer) {
	t.Helper()
	require.Eventually(t, func() bool {
		return strings.Contains(term.String(), "phase       profiling") && m.control().InferenceRequests > 0
	}, hangGuard, 10*time.Millisecond, "the dashboard shows the load going: %s", term.String())
}

// TestProfileHangUpStopsCleanly: a terminal closed under a run (an ssh
// session dropped) stops it as SIGTERM does: its writes to the terminal
// fail, and it still cuts its requests, writes its exports and stores the
// run as interrupted with every record exported, exit 130.
func TestProfileHangUpStopsCleanly(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	term := openPTY(t)
	out := filepath.Join(dir, "out")
	cmd := startOnTerminal(t, term, dir, "profile", "-m", "mock-model", "-u", m.URL, "--tokenizer", tinyTokenizer(t),
		"--streaming", "--concurrency", "4", "--benchmark-duration", "3600", "--artifact-dir", out)
	awaitDashboardLoad(t, term, m)
	require.NoError(t, term.hangUp())
	assert.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), term.String())
	for _, f := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "inputs.json"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	assert.NoFileExists(t, filepath.Join(out, "profile_export.jsonl.partial"))
	db, err := store.OpenReadOnly(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, result.StatusInterrupted, rows[0].Status)
	assert.Contains(t, rows[0].Error, "SIGHUP (hang-up: the terminal was closed)")
	assert.Equal(t, countLines(t, filepath.Join(out, "profile_export.jsonl")), rows[0].RecordCount, "every record stored")
}

// TestProfileSIGQUITRestoresTheTerminal: Ctrl-\ (SIGQUIT) exits at once
// with 131, the shell's code for it, not Go's 2 (a usage error): the
// dashboard gives the terminal back first (the cursor shown), then the
// goroutines' stacks are printed, then what exiting at once loses.
func TestProfileSIGQUITRestoresTheTerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	term := openPTY(t)
	cmd := startOnTerminal(t, term, dir, "profile", "-m", "mock-model", "-u", m.URL, "--tokenizer", tinyTokenizer(t),
		"--concurrency", "4", "--request-count", "100000000", "--artifact-dir", filepath.Join(dir, "out"))
	awaitDashboardLoad(t, term, m)
	require.NoError(t, cmd.Process.Signal(syscall.SIGQUIT))
	code := exitCode(t, cmd, hangGuard)
	shown := term.shown()
	assert.Equal(t, ExitQuit, code, shown)
	hidden, restored := strings.LastIndex(shown, hideCursor), strings.LastIndex(shown, showCursor)
	require.GreaterOrEqual(t, hidden, 0, "the dashboard hid the cursor")
	assert.Greater(t, restored, hidden, "the cursor is shown again")
	stacks := strings.Index(shown, "goroutine 1 [")
	assert.Greater(t, stacks, restored, "the stacks follow, once the terminal is restored")
	assert.Greater(t, strings.Index(shown, `aiperf: SIGQUIT (Ctrl-\): exiting now, the goroutines' stacks above`), stacks)
}

// TestProfileUnderNohupIgnoresHangUp: a run started with SIGHUP ignored
// (nohup) is meant to outlive its terminal: a hang-up does not stop it. Its
// SIGHUP is sent before a SIGTERM; a run that took it would have stopped
// for it (signals pending together are taken lowest first).
func TestProfileUnderNohupIgnoresHangUp(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup here")
	}
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	cmd := exec.Command(nohup, builtBinary(t, "aiperf"), "--store", filepath.Join(dir, "aiperf.db"), "profile", "-m", "mock-model",
		"-u", m.URL, "--tokenizer", tinyTokenizer(t), "--concurrency", "4", "--benchmark-duration", "3600", "--ui", "none",
		"--artifact-dir", filepath.Join(dir, "out"))
	stderr := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = &lockedBuffer{}, stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool { return m.control().InferenceRequests > 0 }, hangGuard, 10*time.Millisecond, "the load goes")
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), stderr.String())
	assert.Contains(t, stderr.String(), "aiperf: SIGTERM: stopping cleanly")
	assert.NotContains(t, stderr.String(), "SIGHUP")
}
