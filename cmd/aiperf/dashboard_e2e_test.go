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
)

// terminal is a pseudo-terminal: tty is the program's side (its stdout
// and stderr); what it shows (String) is read from the other side.
type terminal struct {
	lockedBuffer
	tty, ptmx *os.File
	copied    chan struct{}
}

// hangUp closes the terminal's other side, as a terminal window closed or
// an ssh session dropped: the kernel sends SIGHUP to the program whose
// controlling terminal it is, and its writes to it fail from then on.
func (term *terminal) hangUp() error { return term.ptmx.Close() }

// shown closes the program's side and returns all the terminal showed.
func (term *terminal) shown() string {
	term.tty.Close()
	<-term.copied
	return term.String()
}

// openPTY opens a pseudo-terminal (the test is skipped where there is none),
// of a type that the dashboard draws on whatever the environment's $TERM.
func openPTY(t *testing.T) *terminal {
	t.Helper()
	t.Setenv("TERM", "xterm-256color")
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	require.NoError(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	term := &terminal{ptmx: ptmx, copied: make(chan struct{})}
	term.tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	go func() { io.Copy(term, ptmx); close(term.copied) }() // until the terminal side closes
	t.Cleanup(func() { ptmx.Close() })
	return term
}

func TestProfileDashboardOnATerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, ErrorRate: 10})
	dir := t.TempDir()
	t.Chdir(dir)
	term := openPTY(t)
	args := append(quick(m.URL, "--request-count", "200", "--concurrency", "4", "--artifact-dir", "out"), "--ui", "dashboard")
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...), term.tty, term.tty)
	out := term.shown()
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "aiperf dashboard · mock-model")
	assert.Contains(t, out, "phase       profiling · ")
	assert.Contains(t, out, "HTTPError 500")
	assert.Contains(t, out, "tokens counted with", "the run's log is printed above the dashboard")
	assert.Contains(t, out, showCursor, "the cursor is shown again")
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
	term := openPTY(t)
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...), term.tty, term.tty)
	out := term.shown()
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
	term := openPTY(t)
	var stdout bytes.Buffer
	dir := t.TempDir()
	t.Chdir(dir)
	code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")},
		append(quick(m.URL, "--request-count", "20", "--artifact-dir", "out"), "--ui", "dashboard")...), &stdout, term.tty)
	out := term.shown()
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "aiperf dashboard")
	assert.Contains(t, out, "[profiling] 20/20 done", "the simple progress line on the terminal")
}

// TestProfileDashboardFallsBackOnADumbTerminal: a terminal that cannot
// move the cursor (TERM=dumb, or no TERM: Emacs' shell, a CI log viewer on
// a pty) gets the simple progress line, no drawing.
func TestProfileDashboardFallsBackOnADumbTerminal(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, kind := range []string{"dumb", ""} {
		dir := t.TempDir()
		t.Chdir(dir)
		term := openPTY(t)
		t.Setenv("TERM", kind)
		if kind == "" {
			require.NoError(t, os.Unsetenv("TERM"))
		}
		code := run(context.Background(), append([]string{"--store", filepath.Join(dir, "aiperf.db")},
			append(quick(m.URL, "--request-count", "20", "--artifact-dir", "out"), "--ui", "dashboard")...), term.tty, term.tty)
		out := term.shown()
		require.Equal(t, 0, code, out)
		assert.NotContains(t, out, "aiperf dashboard", "TERM=%q", kind)
		assert.NotContains(t, out, "\x1b[", "TERM=%q: no cursor movement, no sequence at all", kind)
		assert.Contains(t, out, "[profiling] 20/20 done", "TERM=%q: the simple progress line", kind)
		assert.Contains(t, out, "LLM Metrics", "TERM=%q", kind)
	}
}

// TestProfileDashboardSecondInterruptRestoresTheTerminal: a second Ctrl-C
// exits at once and still shows the cursor the dashboard hid. The first
// one's clean stop is held at the server (its profiler stop never answers),
// so the process is still running, dashboard up, when the second arrives.
func TestProfileDashboardSecondInterruptRestoresTheTerminal(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{})
	url, stopping := holdProfilerStop(t, m)
	dir := t.TempDir()
	term := openPTY(t)
	cmd := exec.Command(builtBinary(t, "aiperf"), "--store", filepath.Join(dir, "aiperf.db"), "profile", "-m", "mock-model", "-u", url,
		"--tokenizer", tinyTokenizer(t), "--concurrency", "4", "--request-count", "1000000", "--ui", "dashboard",
		"--server-profiler", "--server-profiler-timeout-seconds", "3600", "--artifact-dir", filepath.Join(dir, "out"))
	cmd.Stdout, cmd.Stderr = term.tty, term.tty
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool {
		return strings.Contains(term.String(), hideCursor) && m.control().InferenceRequests > 0
	}, hangGuard, 10*time.Millisecond, "the dashboard is up and the load goes")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case <-stopping: // the clean stop is under way, held at the profiler stop
	case <-time.After(hangGuard):
		t.Fatalf("no profiler stop after the first Ctrl-C:\n%s", term.String())
	}
	time.Sleep(sameSignal) // not the first one delivered twice
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code := exitCode(t, cmd, hangGuard)
	out := term.shown()
	assert.Equal(t, ExitInterrupted, code, out)
	require.Contains(t, out, "interrupted again: exiting now")
	hidden := strings.LastIndex(out, hideCursor)
	require.GreaterOrEqual(t, hidden, 0, "the dashboard hid the cursor")
	shownAgain := strings.LastIndex(out, showCursor)
	assert.Greater(t, shownAgain, hidden, "the cursor is shown again")
	assert.Less(t, shownAgain, strings.Index(out, "interrupted again"), "before the hard exit")
}

// The terminal sequences that hide and show the cursor.
const hideCursor, showCursor = "\x1b[?25l", "\x1b[?25h"
