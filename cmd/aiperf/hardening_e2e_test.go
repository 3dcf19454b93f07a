package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// TestNginxPageIsNotASuccess: a server answering every request with an HTML
// page (a proxy's default site, a login portal) is a failed run, never a
// benchmark of nothing.
func TestNginxPageIsNotASuccess(t *testing.T) {
	const page = "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>It works</body></html>\n"
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"profile", "-m", "m", "-u", srv.URL, "--ui", "none", "--request-count", "5", "--artifact-dir", "out"}
			if streaming {
				args = append(args, "--streaming")
			}
			inv := cli(t, dir, args...)
			assert.Equal(t, ExitFailure, inv.code)
			assert.Contains(t, inv.stderr, "every profiling request failed: 5 of 5")
			assert.Contains(t, inv.stdout, "Errors: 5 of 5 requests failed")
			assert.Contains(t, inv.stdout, "5 × InvalidResponse 200: not an OpenAI response (text/html)")
			jsonl, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, 5, strings.Count(string(jsonl), `"type":"InvalidResponse"`))
			export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
			assert.Equal(t, 0.0, metricAvg(t, export, "request_count"))
			assert.Equal(t, 5.0, metricAvg(t, export, "error_request_count"))
		})
	}
}

// aiperfProcess starts this test binary as the aiperf binary.
func aiperfProcess(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(builtBinary(t, "aiperf"), append([]string{"--store", filepath.Join(dir, "aiperf.db")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), beMain+"=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &stdout, &stderr
}

// exitCode waits for cmd, failing the test if it outlives limit (a liveness
// bound, far above what the behaviour needs).
func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("aiperf still running after %v", limit)
		return -1
	}
}

// holdProfilerStop serves m behind a profiler stop route that never
// answers (until its client gives up); stopping receives once per stop
// that arrived: the run is then in its clean stop, still running.
func holdProfilerStop(t *testing.T, m *mockServer) (url string, stopping <-chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stop_profile" {
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done() // never answers
			return
		}
		m.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, arrived
}

// TestSecondInterruptExitsAtOnce: the first Ctrl-C starts a clean stop,
// which here hangs on a profiler stop that never answers; the second one
// exits at once.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 2000, ITL: 1})
	url, stopping := holdProfilerStop(t, m)
	dir := t.TempDir()
	cmd, _, stderr := aiperfProcess(t, dir, nil, quick(url, "--request-count", "4", "--server-profiler",
		"--server-profiler-timeout-seconds", "3600")...)
	require.Eventually(t, func() bool { return m.control().InferenceRequests > 0 }, hangGuard, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	<-stopping             // the clean stop is under way, blocked on the profiler
	time.Sleep(sameSignal) // not the first one delivered twice
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	assert.Equal(t, ExitInterrupted, exitCode(t, cmd, hangGuard), stderr.String())
	assert.Contains(t, stderr.String(), "interrupted again: exiting now")
}

// TestInterruptAfterTheLoadExits130: a Ctrl-C that arrives once every
// request has returned still marks the run interrupted (exit 130), and the
// table and exports of the finished load are still produced. The interrupt
// is the signal handler's cancellation, made while the profiler stop (sent
// once the phase drained) is being answered, so it lands before the run
// ends whatever the machine's speed.
func TestInterruptAfterTheLoadExits130(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stop_profile" { // the phase has drained: the load is over
			cancel(fmt.Errorf("%w by %v", context.Canceled, os.Interrupt)) // as interruptContext does
		}
		m.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	inv := cliCtx(ctx, t, dir, quick(srv.URL, "--request-count", "6", "--server-profiler", "--artifact-dir", "out")...)
	assert.Equal(t, ExitInterrupted, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "interrupted (after the load: all 6 profiling requests had returned)")
	assert.Contains(t, inv.stdout, "Request Count")
	assert.Equal(t, 6, countLines(t, filepath.Join(dir, "out", "profile_export.jsonl")), "the exports are written")
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, true, export["was_cancelled"])
	assert.Equal(t, 6.0, metricAvg(t, export, "request_count"))
}

// TestClientOutOfFileDescriptors: requests the client could not open a
// socket for are the client's failure (ClientError) and make the run
// CLIENT-BOUND, not a server error rate.
func TestClientOutOfFileDescriptors(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh for ulimit")
	}
	m := startMock(t, mock.Config{TTFT: 200, ITL: 1})
	dir := t.TempDir()
	args := quick(m.URL, "--concurrency", "64", "--request-count", "64", "--artifact-dir", "out", "--no-store")
	script := `ulimit -n 40 && exec "$0" "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, builtBinary(t, "aiperf")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), beMain+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		t.Fatal("run did not finish")
	}
	out := stdout.String()
	require.Contains(t, out, "ClientError", "stderr: %s", stderr.String())
	assert.Contains(t, out, "out of file descriptors")
	assert.Contains(t, out, "CLIENT-BOUND")
	assert.NotContains(t, out, "ConnectionError", "no fd failure is counted against the server")
}

// TestBadTokenizerIsAUsageError: a --tokenizer that is not a tokenizer is
// the user's input at fault, found before any traffic: exit 2, the file's
// content never echoed, nothing sent or stored.
func TestBadTokenizerIsAUsageError(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	secretish := writeFile(t, dir, "passwd", "root:x:0:0:root:/root:/bin/bash\nhunter2:x:1000:1000::/home/h:/bin/sh\n")
	for _, tok := range []string{secretish, "/etc/passwd", writeFile(t, dir, "binary.json", "\x00\x01\x02hunter2")} {
		inv := cli(t, dir, quick(m.URL, "--request-count", "2", "--tokenizer", tok)...)
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, "load tokenizer")
		assert.Contains(t, inv.stderr, "(nothing was sent)")
		assert.NotContains(t, inv.stderr+inv.stdout, "hunter2")
		assert.NotContains(t, inv.stderr+inv.stdout, "root:x")
	}
	assert.Zero(t, m.control().InferenceRequests)
	list := cli(t, dir, "runs", "list")
	assert.NotContains(t, list.stdout, "mock-model", "nothing was stored")
}

// TestHugeSingleCharacterReplyIsCounted: a reply of two megabytes of one
// character (one BPE piece) is counted in about the time it takes to read,
// not never.
func TestHugeSingleCharacterReplyIsCounted(t *testing.T) {
	const size = 2 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", strings.Repeat("a", size))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "m", "-u", srv.URL, "--streaming", "--ui", "none", "--request-count", "1",
		"--isl", "8", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	want := countTokens()(strings.Repeat("a", size))
	assert.Equal(t, float64(want), metricAvg(t, export, "output_sequence_length"), "the client's count of the reply")
	assert.Greater(t, want, size/16, "a long run of one character is many tokens")
}
