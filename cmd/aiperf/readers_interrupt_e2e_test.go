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

// TestReportInterruptedSaysSo: an interrupted aiperf report said "open
// store …: context canceled" (or "get run 22: control-hook calls: context
// canceled"); it says it was interrupted, by what, and that nothing was
// written, with exit 130.
func TestReportInterruptedSaysSo(t *testing.T) {
	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "2")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	rep := cliCtx(interruptedCtx(), t, dir, "report", "1", "-o", "r.html")
	assert.Equal(t, ExitInterrupted, rep.code, rep.stderr)
	assert.Equal(t, "aiperf: error: interrupted while reading the runs to report on (nothing was written): SIGINT (Ctrl-C)\n",
		rep.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "r.html"))
}
