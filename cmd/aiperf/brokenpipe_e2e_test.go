package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// TestReaderGoneDoesNotLoseTheRun: a run whose stdout's reader went away
// (`aiperf profile … | head -1`) used to die of SIGPIPE (exit 141) when it
// printed its table, before storing it; now the write fails, the run is
// stored complete and exits 0, and so do a listing and the help cut short
// (`aiperf runs show 1 | head -1`, `aiperf profile --help | head -1`),
// quietly.
func TestReaderGoneDoesNotLoseTheRun(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	db := filepath.Join(dir, "aiperf.db")
	headOne := func(args ...string) int {
		cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", db}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), beMain+"=1")
		// The reader is gone before the first write (head -1 had its line
		// from an earlier run, say): every write to stdout fails.
		r, w, err := os.Pipe()
		require.NoError(t, err)
		require.NoError(t, r.Close())
		cmd.Stdout = w
		require.NoError(t, cmd.Start())
		require.NoError(t, w.Close())
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return exitCode(t, cmd, 2*time.Minute)
	}
	require.Equal(t, ExitOK, headOne(quick(m.URL, "--request-count", "8", "--artifact-dir", "out")...))
	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, result.StatusComplete, runs[0].Status)
	assert.FileExists(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, ExitOK, headOne("runs", "show", "1"))
	assert.Equal(t, ExitOK, headOne("profile", "--help"), "the help, cut short (aiperf profile --help | head -1)")
}
