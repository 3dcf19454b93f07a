package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

const secret = "sk-very-secret-key"

func authHeaders() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+secret)
	h.Set("X-Tenant", "team-a")
	return h
}

func resetHook(path string, maxRetry time.Duration) plan.ResetHook {
	return plan.ResetHook{Enabled: true, Paths: []string{path}, Timeout: 5 * time.Second, MaxRetry: maxRetry}
}

func TestResetWire(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	clock := newFakeClock()
	c := newTestClient(authHeaders(), clock)

	calls, err := c.Reset(context.Background(), []string{srv.URL + "/"}, resetHook("/flush_cache?timeout=30", time.Minute))
	require.NoError(t, err)

	hits := rec.all()
	require.Len(t, hits, 1)
	h := hits[0]
	assert.Equal(t, http.MethodPost, h.Method)
	assert.Equal(t, "/flush_cache?timeout=30", h.URI)
	assert.Zero(t, h.BodyLen)
	assert.Empty(t, h.Header.Get("Content-Type"))
	assert.Equal(t, "Bearer "+secret, h.Header.Get("Authorization"))
	assert.Equal(t, "team-a", h.Header.Get("X-Tenant"))

	require.Len(t, calls, 1)
	want := Call{Hook: HookReset, Origin: srv.URL, Path: "/flush_cache?timeout=30", Status: 200, Attempts: 1,
		OK: true, StartedAt: clock.now().UnixNano()}
	assert.Equal(t, want, calls[0])
}

// TestCallPathRedacted: a hook path's secret query value reaches the
// server but not the call's record (the console table, the exports, the
// store).
func TestCallPathRedacted(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := newTestClient(authHeaders(), newFakeClock())
	calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/reset_prefix_cache?token=TOKQSECRET2&timeout=3", time.Minute))
	require.NoError(t, err)
	require.Len(t, rec.all(), 1)
	assert.Equal(t, "/reset_prefix_cache?token=TOKQSECRET2&timeout=3", rec.all()[0].URI)
	require.Len(t, calls, 1)
	assert.Equal(t, "/reset_prefix_cache?token=<redacted>&timeout=3", calls[0].Path)
}

func TestResetRetryPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		codes    []int
		attempts int
		ok       bool
		sleeps   []time.Duration
	}{
		{"success", []int{200}, 1, true, nil},
		{"204 is success", []int{204}, 1, true, nil},
		{"503 twice then 200", []int{503, 503, 200}, 3, true, []time.Duration{time.Second, 2 * time.Second}},
		{"409 retried", []int{409, 200}, 2, true, []time.Duration{time.Second}},
		{"423 retried", []int{423, 200}, 2, true, []time.Duration{time.Second}},
		{"429 retried", []int{429, 200}, 2, true, []time.Duration{time.Second}},
		{"404 is fatal at once", []int{404, 200}, 1, false, nil},
		{"400 is fatal at once", []int{400, 200}, 1, false, nil},
		{"500 is fatal at once", []int{500, 200}, 1, false, nil},
		{"redirect is not followed", []int{307, 200}, 1, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := rec.serve(t, "a", statuses(tt.codes...))
			clock := newFakeClock()
			c := newTestClient(nil, clock)

			calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/reset_prefix_cache", time.Minute))
			require.Len(t, calls, 1)
			call := calls[0]
			assert.Equal(t, tt.attempts, call.Attempts)
			assert.Len(t, rec.all(), tt.attempts)
			assert.Equal(t, tt.ok, call.OK)
			assert.Equal(t, tt.codes[tt.attempts-1], call.Status)
			assert.Equal(t, tt.sleeps, clock.slept())
			if tt.ok {
				require.NoError(t, err)
				assert.Empty(t, call.Error)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), srv.URL+"/reset_prefix_cache")
			status := fmt.Sprintf("status %d %s", tt.codes[0], http.StatusText(tt.codes[0]))
			assert.Contains(t, err.Error(), status)
			assert.Equal(t, status, call.Error)
		})
	}
}

func TestResetTransportErrorBudget(t *testing.T) {
	t.Parallel()
	s := time.Second
	tests := []struct {
		budget time.Duration
		sleeps []time.Duration
	}{
		{0, nil},
		{1 * s, nil}, // now + 1 s reaches the deadline: no retry
		{2 * s, []time.Duration{s}},
		{10 * s, []time.Duration{s, 2 * s, 4 * s}},
		{60 * s, []time.Duration{s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s, 8 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.budget.String(), func(t *testing.T) {
			t.Parallel()
			origin := closedOrigin(t)
			clock := newFakeClock()
			c := newTestClient(nil, clock)

			calls, err := c.Reset(context.Background(), []string{origin}, resetHook("/reset_prefix_cache", tt.budget))
			require.Error(t, err)
			assert.Contains(t, err.Error(), origin+"/reset_prefix_cache")
			assert.Contains(t, err.Error(), "connection refused")
			require.Len(t, calls, 1)
			assert.Equal(t, len(tt.sleeps)+1, calls[0].Attempts)
			assert.Zero(t, calls[0].Status)
			assert.False(t, calls[0].OK)
			assert.Equal(t, tt.sleeps, clock.slept())
		})
	}
}

func TestResetAttemptTimeCountsAgainstBudget(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	var rec recorder
	srv := rec.serve(t, "a", func(_ int, w http.ResponseWriter, _ *http.Request) {
		clock.advance(2 * time.Second) // each attempt "takes" 2 s
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(nil, clock)

	// t=0 attempt → 2; 2+1 < 10 sleep → 3; attempt → 5; 5+2 < 10 sleep → 7; attempt → 9; 9+4 ≥ 10 stop.
	calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/r", 10*time.Second))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after 3 attempts")
	assert.Equal(t, 3, calls[0].Attempts)
	assert.Equal(t, 503, calls[0].Status)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, clock.slept())
	assert.InDelta(t, 9000, calls[0].DurationMs, 0.001)
}

func TestResetRealBackoff(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", statuses(503, 200))
	c := New(nil) // the real clock: one real 1 s backoff

	calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/reset_prefix_cache", 10*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 2, calls[0].Attempts)
	assert.Equal(t, 200, calls[0].Status)
	assert.GreaterOrEqual(t, calls[0].DurationMs, 1000.0) // the backoff happened (a lower bound, not a timing assertion)
}

func TestResetTimeoutIsPerAttempt(t *testing.T) {
	t.Parallel()
	t.Run("an attempt that outlives the timeout fails", func(t *testing.T) {
		t.Parallel()
		var rec recorder
		srv := rec.serve(t, "a", hang)
		c := newTestClient(nil, newFakeClock())
		h := plan.ResetHook{Enabled: true, Paths: []string{"/r"}, Timeout: 100 * time.Millisecond}

		calls, err := c.Reset(context.Background(), []string{srv.URL}, h)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "no answer within 100ms")
		assert.Equal(t, 1, calls[0].Attempts)
	})
	t.Run("each attempt gets a fresh full timeout", func(t *testing.T) {
		t.Parallel()
		var rec recorder
		srv := rec.serve(t, "a", func(n int, w http.ResponseWriter, req *http.Request) {
			if n == 0 {
				hang(n, w, req) // the first attempt times out
			}
		})
		c := newTestClient(nil, newFakeClock())
		// The second attempt's answer comes well within the timeout, even on
		// a loaded machine.
		h := plan.ResetHook{Enabled: true, Paths: []string{"/r"}, Timeout: 2 * time.Second, MaxRetry: time.Minute}

		calls, err := c.Reset(context.Background(), []string{srv.URL}, h)
		require.NoError(t, err)
		assert.Equal(t, 2, calls[0].Attempts)
		assert.Equal(t, 200, calls[0].Status)
	})
}

func TestResetFirstFailingOriginAborts(t *testing.T) {
	t.Parallel()
	var rec recorder
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", statuses(404))
	cc := rec.serve(t, "c", ok)
	c := newTestClient(nil, newFakeClock())

	calls, err := c.Reset(context.Background(), []string{a.URL, b.URL, cc.URL}, resetHook("/reset_prefix_cache", time.Minute))
	require.Error(t, err)
	assert.Equal(t, "reset kv cache: POST "+b.URL+"/reset_prefix_cache: status 404 Not Found", err.Error())
	assert.Equal(t, []string{"a /reset_prefix_cache", "b /reset_prefix_cache"}, rec.trail())
	require.Len(t, calls, 2)
	assert.True(t, calls[0].OK)
	assert.False(t, calls[1].OK)
	assert.Equal(t, b.URL, calls[1].Origin)
}

func TestResetSuccessFalseIsAWarning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		warning bool
	}{
		{`{"success": false}`, true},
		{`{"success": true}`, false},
		{``, false},
		{`Cache flushed. Please check backend logs for more details.`, false},
		{`[false]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := rec.serve(t, "a", func(_ int, w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(tt.body))
			})
			c := newTestClient(nil, newFakeClock())

			calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/reset_prefix_cache", time.Minute))
			require.NoError(t, err)
			assert.True(t, calls[0].OK)
			assert.Equal(t, 1, calls[0].Attempts)
			if tt.warning {
				assert.Contains(t, calls[0].Warning, `{"success": false}`)
			} else {
				assert.Empty(t, calls[0].Warning)
			}
		})
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	var rec recorder
	good := rec.serve(t, "good", func(_ int, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"success": false}`))
	})
	bad := rec.serve(t, "bad", func(_ int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden) // echoes the credential in the body
		_, _ = w.Write([]byte("bad key " + r.Header.Get("Authorization")))
	})
	c := newTestClient(authHeaders(), newFakeClock())

	resetCalls, resetErr := c.Reset(context.Background(), []string{good.URL, bad.URL}, resetHook("/r", time.Minute))
	require.Error(t, resetErr)
	p := c.Profiler([]string{good.URL, bad.URL}, plan.ProfilerHook{Enabled: true, StartPath: "/start", StopPath: "/stop", Timeout: time.Second})
	startErr := p.Start(context.Background(), "profiling")
	require.Error(t, startErr)

	for _, h := range rec.all() {
		assert.Equal(t, "Bearer "+secret, h.Header.Get("Authorization"), "forwarded on the wire")
	}
	exported, err := json.Marshal(append(resetCalls, p.Calls()...))
	require.NoError(t, err)
	for _, text := range []string{string(exported), resetErr.Error(), startErr.Error()} {
		assert.NotContains(t, text, secret)
	}
	assert.Contains(t, resetErr.Error(), "status 403 Forbidden: bad key "+plan.Redacted, "the reply is shown, redacted")
}

func TestClientIgnoresProxyEnvironment(t *testing.T) {
	dead := closedOrigin(t)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"} {
		t.Setenv(k, dead)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	c := New(nil)
	tr, isTransport := c.http.Transport.(*http.Transport)
	require.True(t, isTransport)
	assert.Nil(t, tr.Proxy, "the hook transport must not consult HTTP(S)_PROXY")

	// Go never proxies loopback, so serve on a non-loopback address when the
	// machine has one: a client honouring the proxy would fail there.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if ip := nonLoopbackIP(); ip != "" {
		if l, err := net.Listen("tcp", net.JoinHostPort(ip, "0")); err == nil {
			srv.Listener = l
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook("/r", 0))
	require.NoError(t, err)
	assert.True(t, calls[0].OK)
}

func nonLoopbackIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, isNet := a.(*net.IPNet); isNet && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

func TestResetCancelledWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", statuses(503))
	ctx, cancel := context.WithCancel(context.Background())
	c := New(nil)
	c.sleep = func(ctx context.Context, d time.Duration) error {
		cancel() // Ctrl-C during the backoff
		return sleepContext(ctx, d)
	}

	calls, err := c.Reset(ctx, []string{srv.URL}, resetHook("/r", time.Minute))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls[0].Attempts)
	assert.Equal(t, 503, calls[0].Status)
	assert.Len(t, rec.all(), 1)
}

func TestDisabledHooksSendNothing(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := New(nil)

	calls, err := c.Reset(context.Background(), []string{srv.URL}, plan.ResetHook{Paths: []string{"/r"}, MaxRetry: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, calls)
	p := c.Profiler([]string{srv.URL}, plan.ProfilerHook{StartPath: "/start", StopPath: "/stop"})
	require.NoError(t, p.Start(context.Background(), "profiling"))
	require.NoError(t, p.Stop(context.Background(), "profiling"))
	require.NoError(t, p.StopAll(context.Background()))
	assert.Empty(t, rec.all())
	assert.Empty(t, p.Calls())
}

func TestProfilerCallsRecordEveryPOST(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{srv.URL}, plan.ProfilerHook{Enabled: true, StartPath: "/start", StopPath: "/stop", Timeout: time.Second})
	require.NoError(t, p.Start(context.Background(), "profiling"))
	require.NoError(t, p.Stop(context.Background(), "profiling"))

	var got []string
	for _, call := range p.Calls() {
		got = append(got, strings.Join([]string{call.Hook, call.Phase, call.Origin + call.Path}, " "))
	}
	assert.Equal(t, []string{"profiler_start profiling " + srv.URL + "/start", "profiler_stop profiling " + srv.URL + "/stop"}, got)
}

// TestResetUnansweredAttemptRemembered: an attempt that was sent and got no
// answer is remembered in the call even when a retry was answered (the
// server may still run it); an answered one, or one never connected, is not.
func TestResetUnansweredAttemptRemembered(t *testing.T) {
	t.Parallel()
	h := plan.ResetHook{Enabled: true, Paths: []string{"/r"}, Timeout: 200 * time.Millisecond, MaxRetry: time.Minute}
	t.Run("a timed-out attempt, then an answer", func(t *testing.T) {
		t.Parallel()
		var rec recorder
		srv := rec.serve(t, "a", func(n int, w http.ResponseWriter, req *http.Request) {
			if n == 0 {
				hang(n, w, req)
			}
		})
		clock := newFakeClock()
		c := newTestClient(nil, clock)
		gaveUp := clock.now() // the fake clock only moves when the client sleeps

		calls, err := c.Reset(context.Background(), []string{srv.URL}, h)
		require.NoError(t, err)
		require.Len(t, calls, 1)
		assert.True(t, calls[0].OK)
		assert.Equal(t, 200, calls[0].Status)
		assert.Equal(t, 1, calls[0].Unanswered)
		assert.Equal(t, gaveUp.UnixNano(), calls[0].UnansweredAt)
		assert.Equal(t, gaveUp.Add(LateResetGrace), calls[0].LateUntil(h.Timeout))
		assert.Equal(t, gaveUp.Add(time.Minute), calls[0].LateUntil(time.Minute), "a longer timeout is waited as long")
	})
	t.Run("a busy answer, then success", func(t *testing.T) {
		t.Parallel()
		var rec recorder
		srv := rec.serve(t, "a", statuses(503, 200))
		calls, err := newTestClient(nil, newFakeClock()).Reset(context.Background(), []string{srv.URL}, h)
		require.NoError(t, err)
		assert.Zero(t, calls[0].Unanswered)
		assert.True(t, calls[0].LateUntil(h.Timeout).IsZero())
	})
	t.Run("a connection never opened", func(t *testing.T) {
		t.Parallel()
		calls, err := newTestClient(nil, newFakeClock()).Reset(context.Background(), []string{closedOrigin(t)},
			plan.ResetHook{Enabled: true, Paths: []string{"/r"}, Timeout: time.Second, MaxRetry: 3 * time.Second})
		require.Error(t, err)
		assert.Equal(t, 2, calls[0].Attempts)
		assert.Zero(t, calls[0].Unanswered)
	})
}
