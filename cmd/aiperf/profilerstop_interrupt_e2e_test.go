package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// stopNote is what a run says at once when it sends, or waits for, the
// profiler stop after a Ctrl-C (--server-profiler-timeout-seconds 600).
const stopNote = "note: stopping the server profiler (up to 10m0s; a second Ctrl-C exits at once and leaves it running)\n"

// interruptDuringProfilerStop starts a run whose profiler stop the mock
// holds and interrupts it once the stop arrived; it returns once the run
// said it waits for the stop, the stop still held.
func interruptDuringProfilerStop(t *testing.T) (m *holdingMock, proc *os.Process, wait func() int, stderr *lockedBuffer) {
	t.Helper()
	m = startHoldingMock(t, mock.Config{Fast: true}, func(path string, _ int64) bool { return path == "/stop_profile" })
	dir := t.TempDir()
	c, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.url, "--request-count", "4",
		"--server-profiler", "--server-profiler-timeout-seconds", "600", "--artifact-dir", "out")...)
	select {
	case <-m.held: // the load is over, the stop is on its way
	case <-time.After(hangGuard):
		t.Fatalf("the profiler stop never arrived; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	assert.NotContains(t, stderr.String(), "stopping the server profiler", "said only after an interrupt")
	require.NoError(t, c.Process.Signal(os.Interrupt))
	awaitOutput(t, stderr, stopNote) // at once: the stop is still held
	return m, c.Process, func() int { return exitCode(t, c, hangGuard) }, stderr
}

// TestProfileInterruptedDuringProfilerStop: a Ctrl-C while the profiler
// stop hangs says at once that the run waits for it, how long at most and
// what a second Ctrl-C would do; the error names the stop.
func TestProfileInterruptedDuringProfilerStop(t *testing.T) {
	m, _, wait, stderr := interruptDuringProfilerStop(t)
	m.releaseHeld()
	require.Equal(t, ExitInterrupted, wait(), stderr.String())
	assert.Contains(t, stderr.String(), "aiperf: error: interrupted (after the load: all 4 profiling requests had returned) "+
		"while stopping the server profiler: SIGINT (Ctrl-C)")
	assert.Equal(t, 1, m.control().ProfilerStops)
}

// TestSecondInterruptDuringProfilerStopNamesIt: a second Ctrl-C while the
// profiler stop hangs exits at once, and says that the profiler may still
// be running and how to stop it.
func TestSecondInterruptDuringProfilerStopNamesIt(t *testing.T) {
	m, proc, wait, stderr := interruptDuringProfilerStop(t)
	time.Sleep(sameSignal) // not the first one delivered twice
	require.NoError(t, proc.Signal(os.Interrupt))
	require.Equal(t, ExitInterrupted, wait(), stderr.String())
	assert.Contains(t, stderr.String(), "aiperf: interrupted again: exiting now")
	assert.Contains(t, stderr.String(), "aiperf: the server profiler was started and may still be running "+
		"(its stop call had not returned): stop it with a POST to "+m.url+"/stop_profile\n")
	assert.NotContains(t, stderr.String(), "next run of this trial", "a single run has no mark")
}

// TestProfileInterruptedWhileTheOpeningScrapeHangs: a Ctrl-C while the
// scrape that opens the load hangs (the load waits for it; here the
// interrupt comes as it arrives) says that nothing was sent and where it
// was, not "during profiling".
func TestProfileInterruptedWhileTheOpeningScrapeHangs(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var scrapes atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if scrapes.Add(1) == 2 { // the baseline timed out; this one opens the load
			cancel(signalled{os.Interrupt}) // as interruptContext does
		}
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	inv := cliCtx(ctx, t, "", quick(m.URL, "--request-count", "2", "--server-metrics", hang.URL+"/hang",
		"--server-metrics-interval", "3600", "--no-store")...)
	assert.Equal(t, ExitInterrupted, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "aiperf: error: interrupted while starting the server-metrics collection (no load was sent): SIGINT (Ctrl-C)")
	assert.NotContains(t, inv.stderr, "during profiling")
	assert.Zero(t, m.control().InferenceRequests)
}
