//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
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
