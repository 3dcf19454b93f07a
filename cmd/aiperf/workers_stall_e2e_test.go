package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/shard/fakeworker"
)

// cellHangGuard bounds a sharded cell that must end by itself; it is never
// the assertion: past it the test fails and kills the workers it started.
const cellHangGuard = 3 * time.Minute

// cliGuarded is cli for a cell that must end by itself: should it hang,
// the workers fw started are killed (which ends it) and the test fails.
func cliGuarded(t *testing.T, fw *failingWorkers, dir string, args ...string) invocation {
	t.Helper()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(cellHangGuard):
			t.Errorf("the cell did not end by itself within %s: its workers are killed", cellHangGuard)
			fw.mu.Lock()
			defer fw.mu.Unlock()
			for _, pid := range fw.pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}()
	return cli(t, dir, args...)
}

// TestStoppedWorkerEndsTheCell: --workers 2 with one worker stopped
// (SIGSTOP) in the profiling phase, once a record of it arrived: the cell ends by itself past --worker-silence-timeout with
// exit 1, naming the stopped worker; the other is stopped, the profiler
// bracket is balanced, no worker process is left, and the records that
// arrived (the stopped worker's too) are exported.
func TestStoppedWorkerEndsTheCell(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
	fw := watchWorkers(t, 1)
	fw.watched = make(chan struct{})
	stopped := make(chan int, 1)
	go func() {
		select {
		case <-fw.watched:
		case <-time.After(cellHangGuard):
			return // the test fails on its own
		}
		fw.mu.Lock()
		pid := fw.pids[1]
		fw.mu.Unlock()
		_ = syscall.Kill(pid, syscall.SIGSTOP)
		stopped <- pid
	}()
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	inv := cliGuarded(t, fw, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "4", "--benchmark-duration", "600",
		"--workers", "2", "--server-profiler", "--worker-silence-timeout", "3s", "--artifact-dir", filepath.Join(dir, "out"),
		"--result-file", resultFile)...)
	require.Len(t, stopped, 1, "worker 1 was stopped mid-phase: %s", inv.stderr)
	assert.Equal(t, ExitFailure, inv.code, inv.stderr)
	assert.Regexp(t, `worker 1 \(pid \d+\) sent nothing for [\d.]+m?s during the profiling phase \(--worker-silence-timeout 3s\): `+
		`stopped or hung; it was killed \(\d+ records received from it are kept\)`, inv.stderr)
	assert.NotRegexp(t, `worker 0 \(pid \d+\) (sent|died|did)`, inv.stderr, "the other worker was stopped, not failed")
	c := m.control()
	assert.Equal(t, 1, c.ProfilerStarts)
	assert.Equal(t, 1, c.ProfilerStops, "the profiler stop is sent")
	require.Len(t, fw.pids, 2)
	assertGone(t, fw.pids)
	run := assertLostWorkerKept(t, resultFile, filepath.Join(dir, "out"))
	assert.Contains(t, run.Audit.Workers[1].Error, "sent nothing for")
}

// TestMisbehavingWorkerFailsTheCell: a worker that sends an impossible
// record, reports less than its share of a phase nothing cut short, or
// never says its phase drained while the other did, is killed
// and named (exit 1); the other is stopped, the profiler bracket balanced,
// no process left.
func TestMisbehavingWorkerFailsTheCell(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for _, c := range []struct {
		mode fakeworker.Mode
		args []string
		want string
	}{
		{fakeworker.Impossible, []string{"--request-count", "100000"},
			`worker 1 \(pid \d+\) sent an impossible record: record 0: a negative duration: end_ns is [\d.]+ ms before sent_ns; it was killed`},
		{fakeworker.Short, []string{"--request-count", "8"},
			`worker 1 \(pid \d+\) sent an impossible done report: it reported sending 1 requests of the profiling phase ` +
				`\(1 records of it arrived\), short of its share of 4, though nothing cut the phase short \(no interrupt, halt, ` +
				`failure or duration\); it was killed \(1 records received from it are kept\)`},
		{fakeworker.NeverDrained, []string{"--request-count", "8", "--worker-drain-timeout", "1s"},
			`worker 1 \(pid \d+\) did not report the end of the profiling phase within 1s of another worker's, nor sent a record ` +
				`\(--worker-drain-timeout 1s\); it was killed \(1 records received from it are kept\)`},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			m := startMock(t, mock.Config{TTFT: 5, ITL: 1})
			fw := watchWorkers(t, 1)
			fw.fake = c.mode
			dir := t.TempDir()
			inv := cliGuarded(t, fw, dir, quick(m.URL, append([]string{"--tokenizer", tok, "--concurrency", "2",
				"--workers", "2", "--server-profiler", "--artifact-dir", filepath.Join(dir, "out"), "--no-store"}, c.args...)...)...)
			assert.Equal(t, ExitFailure, inv.code, inv.stderr)
			assert.Regexp(t, c.want, inv.stderr)
			assert.NotRegexp(t, `worker 0 \(pid \d+\) (sent|died|did)`, inv.stderr)
			ctl := m.control()
			assert.Equal(t, 1, ctl.ProfilerStarts)
			assert.Equal(t, 1, ctl.ProfilerStops)
			require.Len(t, fw.pids, 2)
			assertGone(t, fw.pids)
		})
	}
}

// TestWorkerDeadlineFlagsRefused: a deadline that is not positive is
// refused before anything is sent.
func TestWorkerDeadlineFlagsRefused(t *testing.T) {
	m := startMock(t, mock.Config{})
	for flag, value := range map[string]string{"--worker-silence-timeout": "0s", "--worker-handshake-timeout": "-1s",
		"--worker-drain-timeout": "-5s"} {
		inv := cli(t, "", quick(m.URL, "--concurrency", "4", "--workers", "2", flag+"="+value)...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, flag+" must")
		assert.Contains(t, inv.stderr, "nothing was sent")
	}
	assert.Zero(t, m.control().InferenceRequests)
}

// TestWorkerProtocolStaysRaw: a server error whose text holds a control
// character a JSON encoder leaves as is (DEL) crosses a worker's channel
// unescaped: the record is merged, not taken for a broken protocol.
func TestWorkerProtocolStaysRaw(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	var once sync.Once
	m := startMockBehind(t, mock.Config{Fast: true}, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			failed := false
			if strings.HasSuffix(r.URL.Path, "/chat/completions") {
				once.Do(func() { failed = true })
			}
			if failed {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error":{"message":"overloaded` + "\x7f" + `now"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tok, "--concurrency", "2", "--request-count", "6", "--workers", "2",
		"--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 6)
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "overloaded\u007fnow", "the server's text, whole")
}

// TestWorkersShareCutShortPasses: real workers whose shares of a counted
// phase end short because something cut the phase pass the check of
// their accounts: --benchmark-duration ends a count far beyond it, and the
// failed-request threshold halts them (the cell fails for that, not for a
// worker's shortfall). Shares sent whole pass with requests cancelled on
// purpose (each counts as sent) and with multi-turn sessions
// (--conversation-num).
func TestWorkersShareCutShortPasses(t *testing.T) {
	subprocesses(t)
	tok := tinyTokenizer(t)
	for _, c := range []struct {
		name   string
		errors float64
		args   []string
		code   int
		want   string
	}{
		{"duration", 0, []string{"--request-count", "100000", "--benchmark-duration", "1"}, 0, ""},
		{"cancelled", 0, []string{"--request-count", "40", "--request-cancellation-rate", "50"}, 0, ""},
		{"sessions", 0, []string{"--conversation-num", "6", "--conversation-turn-mean", "3"}, 0, ""},
		{"halted", 50, []string{"--request-count", "100000", "--failed-request-threshold", "0.1"}, ExitFailure,
			"--failed-request-threshold 0.1 exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := startMock(t, mock.Config{TTFT: 2, ITL: 1, ErrorRate: c.errors})
			fw := watchWorkers(t, -1)
			dir := t.TempDir()
			inv := cliGuarded(t, fw, dir, quick(m.URL, append([]string{"--tokenizer", tok, "--concurrency", "4",
				"--workers", "2", "--artifact-dir", filepath.Join(dir, "out"), "--no-store"}, c.args...)...)...)
			assert.Equal(t, c.code, inv.code, inv.stderr)
			out := inv.stdout + inv.stderr
			assert.True(t, strings.Contains(out, c.want), "want %q in:\n%s", c.want, inv.stderr)
			assert.False(t, strings.Contains(out, "short of its share") || strings.Contains(out, "impossible"),
				"no worker's account refused:\n%s", inv.stderr)
			assertGone(t, fw.pids)
		})
	}
}
