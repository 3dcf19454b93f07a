package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
)

// End-to-end tests of the control hooks (issue 3): the real CLI in-process
// against real mock servers on loopback, asserting on the mock's event log,
// the exports and the console.

// TestControlHooksDoneWhen is issue 3's "Done when": one reset before any
// load, the profiler bracketing exactly the profiling phase.
func TestControlHooksDoneWhen(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--reset-kv-cache", "--server-profiler", "--warmup-request-count", "5",
		"--request-count", "20", "--concurrency", "4", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	ctl := m.control()
	ev := ctl.Events
	assert.Equal(t, 1, ctl.ResetCount)
	assert.Equal(t, 1, ctl.ProfilerStarts)
	assert.Equal(t, 1, ctl.ProfilerStops)
	assert.Equal(t, 25, ctl.InferenceRequests, "control calls are not inference")
	require.Equal(t, 1, nEvents(ev, mock.EventReset))
	require.Equal(t, 1, nEvents(ev, mock.EventStartProfile))
	require.Equal(t, 1, nEvents(ev, mock.EventStopProfile))
	assert.Equal(t, 25, nEvents(ev, mock.EventRequestStart))
	assert.Equal(t, 25, nEvents(ev, mock.EventRequestEnd))

	reset := firstEvent(ev, mock.EventReset)
	assert.Less(t, reset, firstEvent(ev, mock.EventRequestStart), "the reset comes before any load, warmup included")
	start := firstEvent(ev, mock.EventStartProfile)
	assert.Equal(t, 5, nEvents(ev[:start], mock.EventRequestEnd), "start_profile comes after the 5 warmup requests ended")
	assert.Equal(t, 5, nEvents(ev[:start], mock.EventRequestStart), "and before any profiling request started")
	stop := firstEvent(ev, mock.EventStopProfile)
	assert.Equal(t, 25, nEvents(ev[:stop], mock.EventRequestEnd), "stop_profile comes after the last request ended")
	assert.Equal(t, len(ev)-1, stop, "nothing reaches the server after the stop")
	for _, i := range []int{reset, start, stop} {
		assert.Equal(t, http.StatusOK, ev[i].Status)
	}

	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 20.0, metricAvg(t, export, "request_count"))
	assert.Equal(t, 20, countLines(t, filepath.Join(dir, "out", "profile_export.jsonl")), "control calls are not records")
	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	require.Len(t, calls, 3)
	for i, want := range []struct{ hook, path, phase string }{
		{hooks.HookReset, "/reset_prefix_cache", ""},
		{hooks.HookProfilerStart, "/start_profile", "profiling"},
		{hooks.HookProfilerStop, "/stop_profile", "profiling"},
	} {
		c := calls[i]
		assert.Equal(t, want.hook, c.Hook)
		assert.Equal(t, want.path, c.Path)
		assert.Equal(t, want.phase, c.Phase)
		assert.Equal(t, m.URL, c.Origin)
		assert.Equal(t, http.StatusOK, c.Status)
		assert.Equal(t, 1, c.Attempts)
		assert.True(t, c.OK)
		assert.Empty(t, c.Error)
		assert.Empty(t, c.Warning)
		assert.GreaterOrEqual(t, c.DurationMs, 0.0)
	}

	assert.Contains(t, inv.stdout, "Control hooks")
	for _, row := range [][]string{
		{hooks.HookReset, "/reset_prefix_cache"},
		{hooks.HookProfilerStart, "/start_profile"},
		{hooks.HookProfilerStop, "/stop_profile"},
	} {
		line := lineContaining(t, inv.stdout, row[0])
		assert.Contains(t, line, row[1])
		assert.Contains(t, line, "200")
		assert.Contains(t, line, "ok")
	}
}

// TestControlHookRoutes covers --reset-kv-cache-path (SGLang's flush with a
// query string), the --server presets, and sub-flags that enable their hook.
func TestControlHookRoutes(t *testing.T) {
	cases := []struct {
		name         string
		args         []string
		resetPath    string // the mock's event path; "" means no reset
		exportedPath string // as POSTed, query included
		profiler     bool
	}{
		{name: "sglang flush with timeout query", args: []string{"--reset-kv-cache-path", "/flush_cache?timeout=30"},
			resetPath: "/flush_cache", exportedPath: "/flush_cache?timeout=30"},
		{name: "server sglang", args: []string{"--server", "sglang", "--reset-kv-cache", "--server-profiler"},
			resetPath: "/flush_cache", exportedPath: "/flush_cache", profiler: true},
		{name: "server vllm", args: []string{"--server", "vllm", "--reset-kv-cache", "--server-profiler"},
			resetPath: "/reset_prefix_cache", exportedPath: "/reset_prefix_cache", profiler: true},
		{name: "explicit path beats the server preset", args: []string{"--server", "sglang", "--reset-kv-cache-path", "/reset_prefix_cache"},
			resetPath: "/reset_prefix_cache", exportedPath: "/reset_prefix_cache"},
		{name: "reset timeout alone enables reset", args: []string{"--reset-kv-cache-timeout-seconds", "5"},
			resetPath: "/reset_prefix_cache", exportedPath: "/reset_prefix_cache"},
		{name: "reset retry budget alone enables reset", args: []string{"--reset-kv-cache-max-retry-seconds", "0"},
			resetPath: "/reset_prefix_cache", exportedPath: "/reset_prefix_cache"},
		{name: "profiler stop path alone enables the profiler", args: []string{"--server-profiler-stop-path", "/stop_profile"},
			profiler: true},
		{name: "profiler timeout alone enables the profiler", args: []string{"--server-profiler-timeout-seconds", "5"},
			profiler: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true})
			dir := t.TempDir()
			inv := cli(t, dir, quick(m.URL, append(tc.args, "--request-count", "3", "--artifact-dir", "out", "--no-store")...)...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)

			ctl := m.control()
			var wantHooks []string
			if tc.resetPath != "" {
				assert.Equal(t, 1, ctl.ResetCount)
				require.Equal(t, 1, nEvents(ctl.Events, mock.EventReset))
				assert.Equal(t, tc.resetPath, ctl.Events[firstEvent(ctl.Events, mock.EventReset)].Path)
				assert.Equal(t, 0, firstEvent(ctl.Events, mock.EventReset), "the reset is the first thing the server sees")
				wantHooks = append(wantHooks, hooks.HookReset)
			} else {
				assert.Zero(t, ctl.ResetCount, "the reset is off unless asked for")
			}
			if tc.profiler {
				assert.Equal(t, 1, ctl.ProfilerStarts)
				assert.Equal(t, 1, ctl.ProfilerStops)
				wantHooks = append(wantHooks, hooks.HookProfilerStart, hooks.HookProfilerStop)
			} else {
				assert.Zero(t, ctl.ProfilerStarts+ctl.ProfilerStops, "the profiler is off unless asked for")
			}
			assert.Equal(t, 3, ctl.InferenceRequests)

			calls := exportedHookCalls(t, filepath.Join(dir, "out"))
			var got []string
			for _, c := range calls {
				got = append(got, c.Hook)
				assert.True(t, c.OK, "%+v", c)
			}
			assert.Equal(t, wantHooks, got)
			if tc.resetPath != "" {
				assert.Equal(t, tc.exportedPath, calls[0].Path)
			}
		})
	}
}

// TestHookResetFailurePolicy: a failed reset aborts the cell before any
// load; only transport errors and 409/423/429/503 are retried.
func TestHookResetFailurePolicy(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		args     []string
		code     int
		statuses []int // the reset events the mock saw
	}{
		{name: "404 is fatal at once", status: 404, code: ExitFailure, statuses: []int{404}},
		{name: "500 is not retried", status: 500, code: ExitFailure, statuses: []int{500}},
		{name: "503 is retried after a backoff", status: 503, code: ExitOK, statuses: []int{503, 200}},
		{name: "503 with no retry budget", status: 503, args: []string{"--reset-kv-cache-max-retry-seconds", "0"},
			code: ExitFailure, statuses: []int{503}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true, AdminFailStatus: tc.status, AdminFailCount: 1})
			dir := t.TempDir()
			args := append([]string{"--reset-kv-cache", "--server-profiler", "--warmup-request-count", "2",
				"--request-count", "4", "--artifact-dir", "out"}, tc.args...)
			inv := cli(t, dir, quick(m.URL, args...)...)
			require.Equal(t, tc.code, inv.code, inv.stderr)

			ctl := m.control()
			var statuses []int
			for _, e := range ctl.Events {
				if e.Kind == mock.EventReset {
					statuses = append(statuses, e.Status)
				}
			}
			assert.Equal(t, tc.statuses, statuses)

			if tc.code == ExitOK {
				assert.Equal(t, 1, ctl.ResetCount)
				assert.Less(t, firstEvent(ctl.Events, mock.EventReset), firstEvent(ctl.Events, mock.EventRequestStart))
				calls := exportedHookCalls(t, filepath.Join(dir, "out"))
				require.NotEmpty(t, calls)
				assert.Equal(t, hooks.HookReset, calls[0].Hook)
				assert.Equal(t, 2, calls[0].Attempts)
				assert.Equal(t, http.StatusOK, calls[0].Status)
				assert.True(t, calls[0].OK)
				return
			}

			assert.Zero(t, ctl.InferenceRequests, "no load after a failed reset, warmup included")
			assert.Zero(t, ctl.ProfilerStarts, "no profiler start after a failed reset")
			assert.Len(t, ctl.Events, len(tc.statuses), "the failed reset is the only thing the server saw")
			msg := lastLineOf(inv.stderr)
			assert.Contains(t, msg, "reset kv cache")
			assert.Contains(t, msg, m.URL+"/reset_prefix_cache")
			assert.Contains(t, msg, fmt.Sprintf("status %d", tc.status))
			assert.Contains(t, msg, "no load was sent")
			_, err := os.Stat(filepath.Join(dir, "out"))
			assert.True(t, os.IsNotExist(err), "no exports without records")

			// The failed run and its reset call are still recorded.
			run := readStoredRun(t, dir, 1)
			assert.Equal(t, "failed", run.Status)
			require.Len(t, run.ControlHooks, 1)
			assert.False(t, run.ControlHooks[0].OK)
			assert.Equal(t, tc.status, run.ControlHooks[0].Status)
			assert.Equal(t, 1, run.ControlHooks[0].Attempts)
		})
	}
}

// TestHookResetSuccessFalseIsAWarning: vLLM's 200 {"success": false} counts
// as success, shown as a warning.
func TestHookResetSuccessFalseIsAWarning(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, ResetSuccessFalse: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--reset-kv-cache", "--request-count", "3", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 3, m.control().InferenceRequests, "the run goes on")

	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	require.Len(t, calls, 1)
	assert.True(t, calls[0].OK)
	assert.Equal(t, http.StatusOK, calls[0].Status)
	assert.Contains(t, calls[0].Warning, `{"success": false}`)
	line := lineContaining(t, inv.stdout, hooks.HookReset)
	assert.Contains(t, line, "warning:")
}

// TestHookProfilerStartFailure: a start failure on a later origin stops the
// origins already started, sends no profiling request and fails the run.
func TestHookProfilerStartFailure(t *testing.T) {
	for _, warmup := range []bool{false, true} {
		t.Run(fmt.Sprintf("warmup=%v", warmup), func(t *testing.T) {
			a := startMock(t, mock.Config{Fast: true})
			b := recordingOrigin(t, http.StatusInternalServerError)
			dir := t.TempDir()
			args := []string{"-u", b.URL, "--server-profiler", "--request-count", "4", "--artifact-dir", "out"}
			if warmup {
				args = append(args, "--warmup-request-count", "4")
			}
			inv := cli(t, dir, quick(a.URL, args...)...)
			require.Equal(t, ExitFailure, inv.code, inv.stderr)
			msg := lastLineOf(inv.stderr)
			assert.Contains(t, msg, "server profiler start")
			assert.Contains(t, msg, b.URL+"/start_profile")
			assert.Contains(t, msg, "status 500")

			// A: start, then the best-effort stop, and no profiling request.
			ev := a.control().Events
			start := firstEvent(ev, mock.EventStartProfile)
			require.GreaterOrEqual(t, start, 0)
			assert.Equal(t, 1, nEvents(ev, mock.EventStartProfile))
			assert.Equal(t, 1, nEvents(ev, mock.EventStopProfile))
			assert.Greater(t, firstEvent(ev, mock.EventStopProfile), start)
			assert.Zero(t, nEvents(ev[start:], mock.EventRequestStart), "no profiling request reached A")

			// B: the failed start and nothing after it (no stop, no load).
			hits := b.hits()
			require.NotEmpty(t, hits)
			assert.Equal(t, "POST /start_profile", hits[len(hits)-1])
			assert.Equal(t, 1, count(hits, "POST /start_profile"))
			assert.Zero(t, count(hits, "POST /stop_profile"), "B never started, so it is not stopped")

			if !warmup {
				assert.Zero(t, a.control().InferenceRequests)
				assert.Equal(t, []string{"POST /start_profile"}, hits)
				_, err := os.Stat(filepath.Join(dir, "out"))
				assert.True(t, os.IsNotExist(err), "no exports without records")
			} else {
				// Warmup traffic went round-robin to both origins before the start.
				assert.Equal(t, 2, a.control().InferenceRequests)
				assert.Equal(t, 2, count(hits, "POST /v1/chat/completions"))
				assert.Equal(t, 2, nEvents(ev[:start], mock.EventRequestEnd))
				calls := exportedHookCalls(t, filepath.Join(dir, "out"))
				require.Len(t, calls, 3)
				assert.Equal(t, []hooks.Call{
					{Hook: hooks.HookProfilerStart, Origin: a.URL, OK: true, Status: 200},
					{Hook: hooks.HookProfilerStart, Origin: b.URL, OK: false, Status: 500},
					{Hook: hooks.HookProfilerStop, Origin: a.URL, OK: true, Status: 200},
				}, briefCalls(calls))
				export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
				assert.Zero(t, metricAvg(t, export, "request_count"), "no profiling request was sent")
			}
			run := readStoredRun(t, dir, 1)
			assert.Equal(t, "failed", run.Status)
			assert.Len(t, run.ControlHooks, 3)
		})
	}
}

// TestHookProfilerStopFailureIsAWarning: every origin is stopped even when
// one fails; the run succeeds and exports, with one aggregated warning.
func TestHookProfilerStopFailureIsAWarning(t *testing.T) {
	var failedStops atomic.Int32
	a := startWrappedMock(t, mock.Config{Fast: true}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/stop_profile" {
				failedStops.Add(1)
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	b := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(a.URL, "-u", b.URL, "--server-profiler", "--request-count", "6", "--concurrency", "2",
		"--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	assert.Equal(t, int32(1), failedStops.Load())
	assert.Equal(t, 1, a.control().ProfilerStarts)
	assert.Equal(t, 1, b.control().ProfilerStarts)
	assert.Equal(t, 1, b.control().ProfilerStops, "the origin after the failing one is still stopped")
	assert.Equal(t, 6, a.control().InferenceRequests+b.control().InferenceRequests)

	warning := lineContaining(t, inv.stdout, "server profiler stop failed for 1 origin(s)")
	assert.Contains(t, warning, a.URL+"/stop_profile")
	assert.Contains(t, warning, "status 500")
	assert.NotContains(t, warning, b.URL)

	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 6.0, metricAvg(t, export, "request_count"))
	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	assert.Equal(t, []hooks.Call{
		{Hook: hooks.HookProfilerStart, Origin: a.URL, OK: true, Status: 200},
		{Hook: hooks.HookProfilerStart, Origin: b.URL, OK: true, Status: 200},
		{Hook: hooks.HookProfilerStop, Origin: a.URL, OK: false, Status: 500},
		{Hook: hooks.HookProfilerStop, Origin: b.URL, OK: true, Status: 200},
	}, briefCalls(calls))
	assert.Equal(t, "status 500 Internal Server Error", calls[2].Error)
	assert.Contains(t, lineContaining(t, inv.stdout, hooks.HookProfilerStop, a.URL), "error: status 500")

	run := readStoredRun(t, dir, 1)
	assert.Equal(t, "complete", run.Status)
}

// TestControlHookOrigins: one POST per origin (scheme://host:port), in the
// order the URLs were given.
func TestControlHookOrigins(t *testing.T) {
	t.Run("several URLs on one origin get one reset", func(t *testing.T) {
		m := startMock(t, mock.Config{Fast: true})
		hostPort := strings.TrimPrefix(m.URL, "http://")
		dir := t.TempDir()
		// One request: it goes to the first URL (the /v1 spelling would
		// double the /v1 of the chat path).
		inv := cli(t, dir, quick(m.URL, "-u", m.URL+"/v1", "-u", hostPort, "-u", m.URL+"/",
			"--reset-kv-cache", "--server-profiler", "--request-count", "1", "--artifact-dir", "out", "--no-store")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		ctl := m.control()
		assert.Equal(t, 1, ctl.ResetCount)
		assert.Equal(t, 1, ctl.ProfilerStarts)
		assert.Equal(t, 1, ctl.ProfilerStops)
		assert.Len(t, exportedHookCalls(t, filepath.Join(dir, "out")), 3)
	})
	t.Run("two origins get one reset each, in order", func(t *testing.T) {
		a := startMock(t, mock.Config{Fast: true})
		b := startMock(t, mock.Config{Fast: true})
		dir := t.TempDir()
		inv := cli(t, dir, quick(b.URL, "-u", a.URL, "-u", b.URL+"/", "--reset-kv-cache", "--server-profiler",
			"--request-count", "4", "--artifact-dir", "out", "--no-store")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		for _, m := range []*mockServer{a, b} {
			ctl := m.control()
			assert.Equal(t, 1, ctl.ResetCount)
			assert.Equal(t, 1, ctl.ProfilerStarts)
			assert.Equal(t, 1, ctl.ProfilerStops)
			assert.Equal(t, 0, firstEvent(ctl.Events, mock.EventReset), "each origin is reset before it sees load")
		}
		assert.Equal(t, 4, a.control().InferenceRequests+b.control().InferenceRequests)
		assert.Equal(t, []hooks.Call{
			{Hook: hooks.HookReset, Origin: b.URL, OK: true, Status: 200},
			{Hook: hooks.HookReset, Origin: a.URL, OK: true, Status: 200},
			{Hook: hooks.HookProfilerStart, Origin: b.URL, OK: true, Status: 200},
			{Hook: hooks.HookProfilerStart, Origin: a.URL, OK: true, Status: 200},
			{Hook: hooks.HookProfilerStop, Origin: b.URL, OK: true, Status: 200},
			{Hook: hooks.HookProfilerStop, Origin: a.URL, OK: true, Status: 200},
		}, briefCalls(exportedHookCalls(t, filepath.Join(dir, "out"))))
	})
}

// TestControlHookStopOnInterrupt: Ctrl-C after the profiler started still
// stops it.
func TestControlHookStopOnInterrupt(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 20, ITL: 5})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			ev := m.control().Events
			if start := firstEvent(ev, mock.EventStartProfile); start >= 0 && nEvents(ev[start:], mock.EventRequestStart) > 0 {
				cancel() // Ctrl-C while profiling requests are in flight
				return
			}
		}
	}()
	dir := t.TempDir()
	inv := cliCtx(ctx, t, dir, quick(m.URL, "--osl", "50", "--server-profiler", "--request-count", "1000",
		"--concurrency", "4", "--artifact-dir", "out")...)
	close(done)
	require.Equal(t, ExitInterrupted, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "interrupted")

	ctl := m.control()
	assert.Less(t, ctl.InferenceRequests, 1000, "the run was cut short")
	assert.Equal(t, 1, ctl.ProfilerStarts)
	assert.Equal(t, 1, ctl.ProfilerStops, "the profiler is stopped after Ctrl-C")
	assert.Greater(t, firstEvent(ctl.Events, mock.EventStopProfile), firstEvent(ctl.Events, mock.EventStartProfile))
	run := readStoredRun(t, dir, 1)
	assert.Equal(t, "interrupted", run.Status)
	require.Len(t, run.ControlHooks, 2)
	assert.Equal(t, hooks.HookProfilerStop, run.ControlHooks[1].Hook)
	assert.True(t, run.ControlHooks[1].OK)
}

// TestControlHookHeaders: control calls carry the user's headers and the
// API key, which never reaches the console, the exports or the store.
func TestControlHookHeaders(t *testing.T) {
	const secret = "sk-hooks-e2e-secret"
	m := startMock(t, mock.Config{Fast: true, APIKey: secret})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--api-key", secret, "-H", "X-Team:a", "--reset-kv-cache", "--server-profiler",
		"--request-count", "2", "--artifact-dir", "out", "-v")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	ctl := m.control()
	assert.Equal(t, 2, ctl.InferenceRequests)
	for _, e := range ctl.Events {
		switch e.Kind {
		case mock.EventReset, mock.EventStartProfile, mock.EventStopProfile:
			assert.Contains(t, e.HeaderNames, "Authorization", e.Kind)
			assert.Contains(t, e.HeaderNames, "X-Team", e.Kind)
			assert.NotContains(t, e.HeaderNames, "Content-Type", "control POSTs have an empty body")
		case mock.EventRequestEnd:
			assert.Equal(t, http.StatusOK, e.Status, "the key authenticates inference")
		}
	}
	assert.Contains(t, inv.stderr, "control: reset_kv_cache POST "+m.URL+"/reset_prefix_cache -> 200", "-v logs each call")

	assert.NotContains(t, inv.stdout+inv.stderr, secret)
	for _, f := range []string{"out/profile_export_aiperf.json", "out/profile_export_aiperf.csv", "out/profile_export.jsonl", "aiperf.db"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret, f)
	}
}

// TestControlHookValidation: bad hook settings are refused with exit 2
// before anything is sent.
func TestControlHookValidation(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	relative := "must be a relative path starting with '/'"
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"reset path without slash", []string{"--reset-kv-cache-path", "flush_cache"}, []string{"--reset-kv-cache-path " + relative, `"flush_cache"`}},
		{"start path without slash", []string{"--server-profiler-start-path", "start_profile"}, []string{"--server-profiler-start-path " + relative}},
		{"stop path without slash", []string{"--server-profiler-stop-path", "stop_profile"}, []string{"--server-profiler-stop-path " + relative}},
		{"reset path is a URL", []string{"--reset-kv-cache-path", "http://127.0.0.1:1/flush"}, []string{"--reset-kv-cache-path " + relative}},
		{"start path is a URL", []string{"--server-profiler-start-path", "http://h/start_profile"}, []string{"--server-profiler-start-path " + relative}},
		{"stop path holds a URL", []string{"--server-profiler-stop-path", "/stop?next=http://h/"}, []string{"--server-profiler-stop-path " + relative}},
		{"reset timeout zero", []string{"--reset-kv-cache-timeout-seconds", "0"}, []string{"--reset-kv-cache-timeout-seconds must be greater than 0, got 0"}},
		{"reset timeout negative", []string{"--reset-kv-cache-timeout-seconds=-1"}, []string{"--reset-kv-cache-timeout-seconds must be greater than 0, got -1"}},
		{"profiler timeout zero", []string{"--server-profiler-timeout-seconds", "0"}, []string{"--server-profiler-timeout-seconds must be greater than 0, got 0"}},
		{"profiler timeout negative", []string{"--server-profiler-timeout-seconds=-1"}, []string{"--server-profiler-timeout-seconds must be greater than 0, got -1"}},
		{"retry budget negative", []string{"--reset-kv-cache-max-retry-seconds=-1"}, []string{"--reset-kv-cache-max-retry-seconds must be 0 or more"}},
		{"trtllm with reset", []string{"--server", "trtllm", "--reset-kv-cache"},
			[]string{"--reset-kv-cache cannot be used with --server trtllm", "no KV-cache reset route"}},
		{"trtllm with a reset path", []string{"--server", "trtllm", "--reset-kv-cache-path", "/flush_cache"},
			[]string{"--reset-kv-cache cannot be used with --server trtllm"}},
		{"trtllm with profiler", []string{"--server", "trtllm", "--server-profiler"},
			[]string{"--server-profiler cannot be used with --server trtllm", "PR #13872"}},
		{"unknown server", []string{"--server", "tgi", "--reset-kv-cache"}, []string{"--server", "tgi"}},
		{"every problem at once", []string{"--reset-kv-cache-path", "a", "--server-profiler-start-path", "b"},
			[]string{"--reset-kv-cache-path " + relative, "--server-profiler-start-path " + relative}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := cli(t, "", quick(m.URL, append(tc.args, "--request-count", "2")...)...)
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			for _, w := range tc.want {
				assert.Contains(t, inv.stderr, w)
			}
		})
	}
	t.Run("trtllm without hooks is fine", func(t *testing.T) {
		inv := cli(t, "", quick(m.URL, "--server", "trtllm", "--request-count", "2", "--no-store")...)
		assert.Equal(t, ExitOK, inv.code, inv.stderr)
	})
	ctl := m.control()
	assert.Equal(t, 2, ctl.InferenceRequests, "only the valid trtllm run sent anything")
	assert.Zero(t, ctl.ResetCount+ctl.ProfilerStarts+ctl.ProfilerStops)
	assert.Len(t, ctl.Events, 4, "2 request_start + 2 request_end, no admin call at all")
}

// TestYAMLControlHooks: endpoint.reset_kv_cache / endpoint.server_profiler in
// an AIPerf-shaped file, and how CLI flags overlay them.
func TestYAMLControlHooks(t *testing.T) {
	cases := []struct {
		name      string
		endpoint  string // extra lines under benchmark.endpoint
		args      []string
		resetPath string
		profiler  bool
	}{
		{name: "true and an object", endpoint: `
    reset_kv_cache: true
    server_profiler: {start_path: /start_profile, stop_path: /stop_profile, timeout_seconds: 5}`,
			resetPath: "/reset_prefix_cache", profiler: true},
		{name: "bare CLI flag keeps the YAML path", endpoint: `
    reset_kv_cache: {path: /flush_cache, timeout_seconds: 5}`,
			args: []string{"--reset-kv-cache"}, resetPath: "/flush_cache"},
		{name: "CLI path overrides the YAML path", endpoint: `
    reset_kv_cache: {path: /flush_cache, timeout_seconds: 5}`,
			args: []string{"--reset-kv-cache-path", "/reset_prefix_cache"}, resetPath: "/reset_prefix_cache"},
		{name: "CLI enables what YAML turned off", endpoint: `
    reset_kv_cache: false
    server_profiler: false`,
			args: []string{"--server-profiler"}, profiler: true},
		{name: "YAML server preset", endpoint: `
    server: sglang
    reset_kv_cache: true`,
			resetPath: "/flush_cache"},
		{name: "false and null", endpoint: `
    reset_kv_cache: false
    server_profiler: null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := startMock(t, mock.Config{Fast: true})
			dir := t.TempDir()
			writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, tc.endpoint, "  phases: {name: profiling, concurrency: 2, requests: 4}"))
			inv := cli(t, dir, append([]string{"profile", "-f", "bench.yaml", "--ui", "none", "--no-store"}, tc.args...)...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)

			ctl := m.control()
			assert.Equal(t, 4, ctl.InferenceRequests)
			if tc.resetPath != "" {
				assert.Equal(t, 1, ctl.ResetCount)
				assert.Equal(t, 0, firstEvent(ctl.Events, mock.EventReset))
				assert.Equal(t, tc.resetPath, ctl.Events[0].Path)
			} else {
				assert.Zero(t, ctl.ResetCount)
			}
			if tc.profiler {
				assert.Equal(t, 1, ctl.ProfilerStarts)
				assert.Equal(t, 1, ctl.ProfilerStops)
				ev := ctl.Events
				start, stop := firstEvent(ev, mock.EventStartProfile), firstEvent(ev, mock.EventStopProfile)
				assert.Less(t, start, firstEvent(ev, mock.EventRequestStart))
				assert.Equal(t, 4, nEvents(ev[:stop], mock.EventRequestEnd))
			} else {
				assert.Zero(t, ctl.ProfilerStarts+ctl.ProfilerStops)
			}
			// artifacts.dir from the file
			_, err := os.Stat(filepath.Join(dir, "out", "profile_export_aiperf.json"))
			require.NoError(t, err)
		})
	}
}

// TestYAMLControlHookErrors: a hook of the wrong type or with an unknown key
// is refused with the field, file and line; nothing is sent.
func TestYAMLControlHookErrors(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	phases := "  phases: {name: profiling, concurrency: 1, requests: 2}"
	cases := []struct {
		name     string
		endpoint string
		want     []string
	}{
		// benchYAML puts the first endpoint line on line 7.
		{"a string", `
    reset_kv_cache: "yes"`,
			[]string{`bench.yaml:7: benchmark.endpoint.reset_kv_cache: expected false | true | object, got string "yes"`}},
		{"a number", `
    reset_kv_cache: {path: /flush_cache}
    server_profiler: 1`,
			[]string{"bench.yaml:8: benchmark.endpoint.server_profiler: expected false | true | object, got int 1"}},
		{"a list", `
    server_profiler: [/start_profile]`,
			[]string{"bench.yaml:7: benchmark.endpoint.server_profiler: expected false | true | object, got list"}},
		{"unknown key in reset_kv_cache", `
    reset_kv_cache:
      path: /flush_cache
      timeout: 30`,
			[]string{`bench.yaml:9: benchmark.endpoint.reset_kv_cache: unknown key "timeout"`}},
		{"unknown key in server_profiler", `
    server_profiler:
      start_path: /start_profile
      path: /stop_profile`,
			[]string{`bench.yaml:9: benchmark.endpoint.server_profiler: unknown key "path"`}},
		{"relative path in YAML", `
    reset_kv_cache: {path: flush_cache}`,
			[]string{"bench.yaml:7: benchmark.endpoint.reset_kv_cache.path must be a relative path starting with '/'"}},
		{"zero timeout in YAML", `
    server_profiler: {timeout_seconds: 0}`,
			[]string{"bench.yaml:7: benchmark.endpoint.server_profiler.timeout_seconds must be greater than 0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, tc.endpoint, phases))
			inv := cli(t, dir, "profile", "--config", "bench.yaml", "--ui", "none")
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			for _, w := range tc.want {
				assert.Contains(t, inv.stderr, w)
			}
		})
	}
	t.Run("first phase seamless", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "\n    server_profiler: true", `  phases:
    - {name: p1, kind: profiling, seamless: true, concurrency: 1, requests: 2}
    - {name: p2, kind: profiling, seamless: true, concurrency: 1, requests: 2}`))
		inv := cli(t, dir, "profile", "--config", "bench.yaml", "--ui", "none")
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, "phases[0].seamless is not allowed on the first phase")
	})
	ctl := m.control()
	assert.Empty(t, ctl.Events, "no invalid file sent anything")
}

// TestYAMLSeamlessPhasesShareOneProfile: back-to-back profiling phases share
// one profiler start and stop; warmup never starts it.
func TestYAMLSeamlessPhasesShareOneProfile(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "\n    server_profiler: true\n    reset_kv_cache: true", `  phases:
    - {name: warmup, kind: warmup, concurrency: 2, requests: 4}
    - {name: p1, kind: profiling, concurrency: 2, requests: 6}
    - {name: p2, kind: profiling, seamless: true, concurrency: 2, requests: 6}`))
	inv := cli(t, dir, "profile", "--config", "bench.yaml", "--ui", "none", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	ctl := m.control()
	ev := ctl.Events
	assert.Equal(t, 1, ctl.ResetCount)
	assert.Equal(t, 1, ctl.ProfilerStarts, "one start for both profiling phases")
	assert.Equal(t, 1, ctl.ProfilerStops, "one stop for both profiling phases")
	assert.Equal(t, 16, ctl.InferenceRequests)
	assert.Equal(t, 0, firstEvent(ev, mock.EventReset))
	start, stop := firstEvent(ev, mock.EventStartProfile), firstEvent(ev, mock.EventStopProfile)
	assert.Equal(t, 4, nEvents(ev[:start], mock.EventRequestEnd), "the start follows the 4 warmup requests")
	assert.Equal(t, 4, nEvents(ev[:start], mock.EventRequestStart), "and precedes every profiling request")
	assert.Equal(t, 16, nEvents(ev[:stop], mock.EventRequestEnd), "the stop follows the last request")
	assert.Equal(t, len(ev)-1, stop)

	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 12.0, metricAvg(t, export, "request_count"))
	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	require.Len(t, calls, 3)
	assert.Equal(t, hooks.HookProfilerStart, calls[1].Hook)
	assert.Equal(t, "p1", calls[1].Phase, "the first profiling phase starts the trace")
	assert.Equal(t, hooks.HookProfilerStop, calls[2].Hook)
	assert.Contains(t, []string{"p1", "p2"}, calls[2].Phase, "the last profiling phase to drain stops it")
}

// --- helpers ---

// nEvents is the number of events of kind in ev.
func nEvents(ev []mock.Event, kind mock.EventKind) int {
	n := 0
	for _, e := range ev {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// firstEvent is the index of the first event of kind in ev, or -1.
func firstEvent(ev []mock.Event, kind mock.EventKind) int {
	for i, e := range ev {
		if e.Kind == kind {
			return i
		}
	}
	return -1
}

// exportedHookCalls reads control_hooks from the JSON export in dir.
func exportedHookCalls(t *testing.T, dir string) []hooks.Call {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
	require.NoError(t, err)
	var doc struct {
		ControlHooks []hooks.Call `json:"control_hooks"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc.ControlHooks
}

// briefCalls keeps the fields of calls that tests compare whole.
func briefCalls(calls []hooks.Call) []hooks.Call {
	out := make([]hooks.Call, len(calls))
	for i, c := range calls {
		out[i] = hooks.Call{Hook: c.Hook, Origin: c.Origin, OK: c.OK, Status: c.Status}
	}
	return out
}

// storedHookRun is the part of a stored run these tests look at.
type storedHookRun struct {
	Status       string       `json:"status"`
	ControlHooks []hooks.Call `json:"control_hooks"`
}

// readStoredRun reads a run back from the store in dir via `aiperf runs show`.
func readStoredRun(t *testing.T, dir string, id int) storedHookRun {
	t.Helper()
	inv := cli(t, dir, "runs", "show", fmt.Sprint(id), "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var run storedHookRun
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &run))
	return run
}

func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// hookBenchYAML is an AIPerf-shaped file for url; endpoint adds lines under
// benchmark.endpoint (its first line is line 7), phases is the phases block.
func hookBenchYAML(url, endpoint, phases string) string {
	return `schemaVersion: "2.0"
benchmark:
  model: mock-model
  endpoint:
    url: ` + url + `
    streaming: true` + endpoint + `
  dataset: {entries: 4, prompts: {isl: 16, osl: 4}}
` + phases + `
  artifacts: {dir: out}
`
}

// startWrappedMock is startMock with wrap around the mock's handler, for
// faults the mock's knobs do not cover.
func startWrappedMock(t *testing.T, cfg mock.Config, wrap func(http.Handler) http.Handler) *mockServer {
	t.Helper()
	cfg.CountTokens = countTokens()
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(wrap(srv.Handler()))
	t.Cleanup(ts.Close)
	return &mockServer{Server: ts, srv: srv}
}

// hitRecorder is an origin that answers every request with one status and
// remembers "METHOD /path" of each, in order: the load and the control
// calls, not the scrapes of its /metrics (they are neither).
type hitRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func recordingOrigin(t *testing.T, status int) *hitRecorder {
	t.Helper()
	rec := &hitRecorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/metrics" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+" "+r.URL.Path)
		rec.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *hitRecorder) hits() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// The reset is verified from the server's cached-token accounting: a run
// repeated with the same seed sends the same prompts, so a reset that does
// not clear the cache shows as hits on the prompts' first requests.
func TestKVResetIsVerifiedNotTrusted(t *testing.T) {
	audit := func(t *testing.T, dir string) map[string]any {
		return readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
	}
	twice := func(t *testing.T, cfg mock.Config, extra ...string) (first, second invocation, dir string) {
		// The prompts are 16 tokens. A hit never covers a prompt's last
		// token (vLLM recomputes it), so with blocks of 16 none could hit;
		// with blocks of 8 a repeated prompt hits on its first block.
		cfg.BlockSize = 8
		m := startMock(t, cfg)
		dir = t.TempDir()
		args := quick(m.URL, append([]string{"--reset-kv-cache", "--request-count", "8", "--warmup-request-count", "2",
			"--artifact-dir", "out"}, extra...)...)
		first = cli(t, dir, args...)
		require.Equal(t, ExitOK, first.code, first.stderr)
		second = cli(t, dir, args...)
		require.Equal(t, ExitOK, second.code, second.stderr)
		return first, second, dir
	}

	t.Run("a working reset is verified", func(t *testing.T) {
		_, second, dir := twice(t, mock.Config{Fast: true})
		a := audit(t, dir)
		assert.Equal(t, result.ResetVerified, a["kv_reset"])
		assert.Contains(t, a["kv_reset_detail"], "4 prompts sent for the first time after the reset, none served from the prefix cache")
		assert.Contains(t, a["kv_reset_evidence"], result.EvidenceCachedTokens)
		assert.Contains(t, second.stdout, "KV cache reset verified (by cached_tokens")
	})
	t.Run("a reset that answers 200 but keeps the cache is caught", func(t *testing.T) {
		first, second, dir := twice(t, mock.Config{Fast: true, ResetNoop: true})
		assert.NotContains(t, first.stdout, "not cleared", "the first run's cache was cold anyway")
		a := audit(t, dir)
		assert.Equal(t, result.ResetNotCleared, a["kv_reset"])
		assert.Contains(t, second.stdout, "Warning: kv cache reset: 4 of 4 prompts were served from the prefix cache")
		show := cli(t, dir, "runs", "show", "2", "--format", "json")
		require.Equal(t, ExitOK, show.code, show.stderr)
		assert.Contains(t, show.stdout, `"kv_reset": "not cleared"`, "the verdict is stored")
	})
	t.Run("a server that reports no cached tokens is unverifiable", func(t *testing.T) {
		_, second, dir := twice(t, mock.Config{Fast: true, NoCacheReport: true}, "--no-server-metrics")
		a := audit(t, dir)
		assert.Equal(t, result.ResetUnverifiable, a["kv_reset"])
		assert.NotContains(t, a, "kv_reset_evidence")
		assert.Contains(t, second.stdout, "KV cache reset unverifiable")
	})
	// Ten distinct prompts for ten requests: every request of the first
	// scrape interval after the reset is a prompt's first, so the server's
	// prefix-cache counters are evidence whatever the interval holds.
	distinct := []string{"--num-dataset-entries", "10"}
	t.Run("the server's counters verify what its usage cannot", func(t *testing.T) {
		_, second, dir := twice(t, mock.Config{Fast: true, NoCacheReport: true}, distinct...)
		a := audit(t, dir)
		assert.Equal(t, result.ResetVerified, a["kv_reset"], a["kv_reset_detail"])
		assert.Equal(t, []any{result.EvidenceServerCounters}, a["kv_reset_evidence"])
		assert.Contains(t, a["kv_reset_detail"], "the server's prefix-cache counters: 0 of ")
		assert.Contains(t, second.stdout, "KV cache reset verified (by server_counters)")
	})
	t.Run("the server's counters catch a reset that kept the cache", func(t *testing.T) {
		_, second, dir := twice(t, mock.Config{Fast: true, NoCacheReport: true, ResetNoop: true}, distinct...)
		a := audit(t, dir)
		assert.Equal(t, result.ResetNotCleared, a["kv_reset"], a["kv_reset_detail"])
		assert.Equal(t, []any{result.EvidenceServerCounters}, a["kv_reset_evidence"])
		assert.Contains(t, second.stdout, "Warning: kv cache reset: the server's prefix-cache counters:")
		assert.Contains(t, a["server_reset_evidence"].([]any)[0], "warm: ")
		show := cli(t, dir, "runs", "show", "2", "--format", "json")
		require.Equal(t, ExitOK, show.code, show.stderr)
		assert.Contains(t, show.stdout, `"kv_reset_evidence": [`, "the evidence is stored")
	})
}

// TestControlHookLlamaCpp: --server llamacpp resets by erasing every slot
// llama-server lists, before any load, and refuses the profiler it does
// not have before anything is sent.
func TestControlHookLlamaCpp(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--server", "llamacpp", "--reset-kv-cache", "--request-count", "3",
		"--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	ctl := m.control()
	var erased []string
	for i, ev := range ctl.Events {
		if ev.Kind == mock.EventReset {
			erased = append(erased, ev.Path)
			assert.Less(t, i, 4, "the erases come before any request")
		}
	}
	assert.Equal(t, []string{"/slots/0", "/slots/1", "/slots/2", "/slots/3"}, erased)
	calls := exportedHookCalls(t, filepath.Join(dir, "out"))
	require.Len(t, calls, 4)
	assert.Equal(t, "/slots/3?action=erase", calls[3].Path)
	assert.Contains(t, inv.stdout, "KV cache reset verified")

	inv = cli(t, t.TempDir(), quick(m.URL, "--server", "llamacpp", "--server-profiler", "--no-store")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--server-profiler cannot be used with --server llamacpp")
	assert.Equal(t, 3, m.control().InferenceRequests, "nothing more was sent")
}

// TestControlHookSeveralResetPaths: --reset-kv-cache-path given twice POSTs
// both, in order, to the origin before any load (it used to keep the last).
func TestControlHookSeveralResetPaths(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	inv := cli(t, t.TempDir(), quick(m.URL, "--reset-kv-cache-path", "/flush_cache?timeout=5",
		"--reset-kv-cache-path", "/reset_prefix_cache", "--request-count", "2", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	ev := m.control().Events
	require.GreaterOrEqual(t, len(ev), 2)
	assert.Equal(t, []string{"/flush_cache", "/reset_prefix_cache"}, []string{ev[0].Path, ev[1].Path})
	assert.Equal(t, 2, m.control().ResetCount)
}
