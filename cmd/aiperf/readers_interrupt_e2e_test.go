package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// interruptedCtx is the context of a command whose Ctrl-C came before it
// began: every step that looks at it sees the interrupt, none races it.
func interruptedCtx() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalled{os.Interrupt})
	return ctx
}

// oneStoredRun is a directory holding a store with run 1, a small
// profile, and its artifacts under artifacts/.
func oneStoredRun(t *testing.T) string {
	t.Helper()
	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "2")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	return dir
}

// TestReportInterruptedSaysSo: an interrupted aiperf report said "open
// store …: context canceled" (or "get run 22: control-hook calls: context
// canceled"); it says it was interrupted, by what, and that nothing was
// written, with exit 130.
func TestReportInterruptedSaysSo(t *testing.T) {
	dir := oneStoredRun(t)
	rep := cliCtx(interruptedCtx(), t, dir, "report", "1", "-o", "r.html")
	assert.Equal(t, ExitInterrupted, rep.code, rep.stderr)
	assert.Equal(t, "aiperf: error: interrupted while reading the runs to report on (nothing was written): SIGINT (Ctrl-C)\n",
		rep.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "r.html"))
}

// TestPlotInterruptedStops: aiperf plot said "stopping cleanly" at a
// Ctrl-C, then drew every figure and exited 0. It stops drawing and exits
// 130, saying how many files it had written (each whole); interrupted
// while reading stored runs, it says it wrote nothing.
func TestPlotInterruptedStops(t *testing.T) {
	dir := oneStoredRun(t)
	drawn := cliCtx(interruptedCtx(), t, dir, "plot", "artifacts", "-o", "figs")
	assert.Equal(t, ExitInterrupted, drawn.code, drawn.stderr)
	assert.Regexp(t, `^aiperf: error: interrupted while drawing the figures \(0 of \d+ files written to figs, each whole\): `+
		`SIGINT \(Ctrl-C\)\n$`, drawn.stderr)
	assert.Empty(t, drawn.stdout)
	assert.NoDirExists(t, filepath.Join(dir, "figs"))

	stored := cliCtx(interruptedCtx(), t, dir, "plot", "1", "-o", "figs")
	assert.Equal(t, ExitInterrupted, stored.code, stored.stderr)
	assert.Equal(t, "aiperf: error: interrupted while reading the runs to draw (nothing was written): SIGINT (Ctrl-C)\n",
		stored.stderr)
	assert.NoDirExists(t, filepath.Join(dir, "figs"))
}
