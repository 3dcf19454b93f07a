package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestMLflowGoneQuietDoesNotHoldACtrlC: a tracking server that stops
// answering while the load goes holds a live batch for its request timeout
// (120 s); a Ctrl-C then ends the run within MLflow's 5 s grace (the hang
// guard is far below the timeout), the run is stored interrupted, and the
// warning says the server did not answer.
func TestMLflowGoneQuietDoesNotHoldACtrlC(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	cmd, _, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.URL, "--benchmark-duration", "600",
		"--concurrency", "1", "--mlflow-tracking-uri", fake.URL, "--artifact-dir", "out")...)
	awaitOutput(t, stderr, "mlflow: run ")
	fake.Hang.Store(true) // from now on the server holds every call unanswered
	require.Eventually(t, func() bool { return fake.Hanging() > 0 }, 2*time.Minute, 5*time.Millisecond,
		"no live batch reached the server; stderr:\n%s", stderr)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Equal(t, ExitInterrupted, exitCode(t, cmd, 60*time.Second), "stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "runs/log-batch: no answer 5s after the run's interrupt")
	assert.EqualValues(t, 1, fake.Unanswered.Load(), "nothing sent after the unanswered live batch")
}
