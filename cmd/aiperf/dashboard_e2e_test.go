//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/store"
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

// TestProfileDashboardIsTheDefaultOnATerminal: as in AIPerf, a profile
// without --ui shows the dashboard on a terminal; off one (the other tests'
// captured output) it prints the simple progress line.
func TestProfileDashboardIsTheDefaultOnATerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	args := []string{"profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--isl", "16", "--osl", "4",
		"--num-dataset-entries", "4", "--request-count", "20", "--artifact-dir", "out"}
	dir := t.TempDir()
	t.Chdir(dir)
	tty, shown := openPTY(t)
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...), tty, tty)
	out := shown()
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "aiperf dashboard · mock-model")
	assert.NotContains(t, out, "[profiling] ", "no simple progress line")

	inv := cli(t, "", args...)
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "aiperf dashboard")
	assert.NotContains(t, inv.stderr, "\x1b[")
	assert.Contains(t, inv.stderr, "tokens counted with", "the log, as with --ui simple")
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

// TestProfileDashboardSecondInterruptRestoresTheTerminal: a second Ctrl-C
// exits at once and still shows the cursor the dashboard hid. (Whether the
// run's summary came first depends on how fast the first one ended.)
func TestProfileDashboardSecondInterruptRestoresTheTerminal(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{})
	dir := t.TempDir()
	path := filepath.Join(dir, "aiperf.db")
	tty, shown := openPTY(t)
	cmd := exec.Command(os.Args[0], "--store", path, "profile", "-m", "mock-model", "-u", m.URL,
		"--tokenizer", tinyTokenizer(t), "--concurrency", "4", "--request-count", "1000000", "--ui", "dashboard",
		"--artifact-dir", filepath.Join(dir, "out"))
	cmd.Stdout, cmd.Stderr = tty, tty
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.Eventually(t, func() bool {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			return false
		}
		defer db.Close()
		rows, err := db.ListRuns(context.Background(), store.RunFilter{})
		return err == nil && len(rows) == 1
	}, 2*time.Minute, 20*time.Millisecond, "the load goes (its first records are stored)")
	// Signals sent back to back merge into one: Ctrl-C until it exits.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	for done := false; !done; {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err = <-exited:
			done = true
		case <-time.After(50 * time.Millisecond):
		}
	}
	out := shown()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, out)
	assert.Equal(t, ExitInterrupted, exit.ExitCode(), out)
	require.Contains(t, out, "interrupted again: exiting now")
	hidden := strings.LastIndex(out, "\x1b[?25l")
	require.GreaterOrEqual(t, hidden, 0, "the dashboard hid the cursor")
	shownAgain := strings.LastIndex(out, "\x1b[?25h")
	assert.Greater(t, shownAgain, hidden, "the cursor is shown again")
	assert.Less(t, shownAgain, strings.Index(out, "interrupted again"), "before the hard exit")
}
