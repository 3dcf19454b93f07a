package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/store"
)

// TestSignalDeliveredTwiceIsOne: `timeout -s INT` signals its command and
// then the command's process group, so one Ctrl-C can arrive twice: a
// second signal soon after the first (here the window is held open) keeps
// the clean stop going instead of exiting at once, and says so. The test
// signals its own process, whose SIGINT interruptContext catches.
func TestSignalDeliveredTwiceIsOne(t *testing.T) {
	notes := &lockedBuffer{}
	window, out := sameSignal, signalNotes
	sameSignal, signalNotes = time.Hour, notes
	t.Cleanup(func() { sameSignal, signalNotes = window, out })
	ctx, stop := interruptContext(true)
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case <-ctx.Done():
	case <-time.After(hangGuard):
		t.Fatal("the first SIGINT did not cancel the run")
	}
	assert.ErrorIs(t, context.Cause(ctx), context.Canceled)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT)) // a separate delivery: the first was taken
	require.Eventually(t, func() bool {
		return strings.Contains(notes.String(), "taken as the same one")
	}, hangGuard, 10*time.Millisecond, "the process is still here, and says why: %s", notes.String())
	assert.Contains(t, notes.String(), "aiperf: SIGINT (Ctrl-C): stopping cleanly; a second one exits at once\n")
	assert.Contains(t, notes.String(), "aiperf: a second signal within 1h0m0s of the first is taken as the same one; send another to exit at once\n")
}

// TestVersionFlagAndEmptyFilters: --version prints what aiperf version
// prints; runs list says which filter matched nothing, not that the store
// is empty.
func TestVersionFlagAndEmptyFilters(t *testing.T) {
	dir := t.TempDir()
	flag, cmd := cli(t, dir, "--version"), cli(t, dir, "version")
	require.Equal(t, ExitOK, flag.code, flag.stderr)
	assert.Equal(t, cmd.stdout, flag.stdout)
	assert.True(t, strings.HasPrefix(flag.stdout, "aiperf "), flag.stdout)
	db, err := store.Open(filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	require.NoError(t, db.Close())
	none := cli(t, dir, "runs", "list", "--name", "nosuch")
	require.Equal(t, ExitOK, none.code, none.stderr)
	assert.Contains(t, none.stdout, `no runs named "nosuch" in `)
}
