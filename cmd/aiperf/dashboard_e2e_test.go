//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// openPTY opens a pseudo-terminal: the terminal's side (the program's
// stdout and stderr) and what it shows (read from the other side).
func openPTY(t *testing.T) (tty *os.File, shown func() string) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ptmx); close(copied) }() // until the terminal side closes
	t.Cleanup(func() { ptmx.Close() })
	return tty, func() string { tty.Close(); <-copied; return out.String() }
}

func TestProfileDashboardOnATerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, ErrorRate: 10})
	dir := t.TempDir()
	t.Chdir(dir)
	tty, shown := openPTY(t)
	args := append(quick(m.URL, "--request-count", "200", "--concurrency", "4", "--artifact-dir", "out"), "--ui", "dashboard")
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...), tty, tty)
	out := shown()
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "aiperf dashboard · mock-model")
	assert.Contains(t, out, "phase       profiling · ")
	assert.Contains(t, out, "HTTPError 500")
	assert.Contains(t, out, "tokens counted with", "the run's log is printed above the dashboard")
	assert.Contains(t, out, "\x1b[?25h", "the cursor is shown again")
	assert.NotContains(t, out, "[profiling] ", "no simple progress line")
	assert.Contains(t, out, "LLM Metrics", "the table follows")
}

func TestProfileDashboardFallsBackWhenNotATerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, "", append(quick(m.URL, "--request-count", "20", "--artifact-dir", "out"), "--ui", "dashboard")...)
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "aiperf dashboard")
	assert.NotContains(t, inv.stderr, "\x1b[")
	assert.Contains(t, inv.stderr, "tokens counted with", "the log, as with --ui simple")
	assert.Contains(t, inv.stdout, "LLM Metrics")

	// A terminal on stderr alone is not enough: stdout is captured.
	tty, shown := openPTY(t)
	var stdout bytes.Buffer
	dir := t.TempDir()
	t.Chdir(dir)
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")},
		append(quick(m.URL, "--request-count", "20", "--artifact-dir", "out"), "--ui", "dashboard")...), &stdout, tty)
	out := shown()
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "aiperf dashboard")
	assert.Contains(t, out, "[profiling] 20/20 done", "the simple progress line on the terminal")
}
