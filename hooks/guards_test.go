package hooks

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// unsendablePaths are reset and profiler routes that cannot be sent as
// written.
var unsendablePaths = map[string]string{
	"invalid escape": "/a%zz",
	"CR LF":          "/a\r\nX-Injected: 1",
	"DEL":            "/a\x7f",
	"NUL":            "/a\x00b",
	"empty":          "",
}

// TestResetUnsendablePathFailsAtOnce: a reset route that cannot be sent is
// not retried as a transport error, nor POSTed anywhere else (an empty one
// to the bare origin): it fails at once, saying why, on one line.
func TestResetUnsendablePathFailsAtOnce(t *testing.T) {
	t.Parallel()
	for name, path := range unsendablePaths {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := rec.serve(t, "a", ok)
			clock := newFakeClock()
			c := newTestClient(nil, clock)

			calls, err := c.Reset(context.Background(), []string{srv.URL}, resetHook(path, time.Minute))
			require.Error(t, err)
			assert.ErrorIs(t, err, errNotSent)
			assert.Contains(t, err.Error(), "not sent: its path ")
			assert.False(t, strings.ContainsFunc(err.Error(), unicode.IsControl), "one line: %q", err.Error())
			assert.Empty(t, rec.all(), "nothing reached the server")
			assert.Empty(t, clock.slept(), "no retry")
			require.Len(t, calls, 1)
			assert.Zero(t, calls[0].Attempts)
			assert.Zero(t, calls[0].Status)
			assert.False(t, calls[0].OK)
			for _, s := range []string{calls[0].Path, calls[0].Error} {
				assert.False(t, strings.ContainsFunc(s, unicode.IsControl), "recorded escaped: %q", s)
			}
		})
	}
}

// TestRequestBuildErrorNotRetried: a request that cannot be built (here its
// origin, which validation never lets through) fails at once with its
// reason instead of being retried as a transport error.
func TestRequestBuildErrorNotRetried(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	c := newTestClient(nil, clock)
	call, err := c.post(context.Background(), target{hook: HookReset, origin: "http://bad\x7fhost", path: "/r",
		timeout: time.Second, retryBudget: time.Minute, retry: true})
	require.Error(t, err)
	assert.ErrorIs(t, err, errNotSent)
	assert.Contains(t, err.Error(), "the request cannot be built: net/url: invalid control character in URL")
	assert.False(t, strings.ContainsFunc(err.Error(), unicode.IsControl), "%q", err.Error())
	assert.Equal(t, 1, call.Attempts)
	assert.Empty(t, clock.slept(), "no retry")
}

// TestProfilerUnsendablePathSendsNothing: a start whose stop path cannot be
// sent is refused before any POST (the profiler could never be stopped),
// and a start path that cannot be sent started nothing, so nothing is
// stopped either.
func TestProfilerUnsendablePathSendsNothing(t *testing.T) {
	t.Parallel()
	for name, bad := range unsendablePaths {
		for _, which := range []string{"start", "stop"} {
			t.Run(which+" "+name, func(t *testing.T) {
				t.Parallel()
				var rec recorder
				srv := rec.serve(t, "a", ok)
				h := plan.ProfilerHook{Enabled: true, StartPath: "/start_profile", StopPath: "/stop_profile", Timeout: time.Second}
				if which == "start" {
					h.StartPath = bad
				} else {
					h.StopPath = bad
				}
				p := newTestClient(nil, newFakeClock()).Profiler([]string{srv.URL}, h)
				err := p.Start(context.Background(), "profiling")
				require.Error(t, err)
				assert.ErrorIs(t, err, errNotSent)
				assert.False(t, strings.ContainsFunc(err.Error(), unicode.IsControl), "%q", err.Error())
				if which == "stop" {
					assert.Contains(t, err.Error(), "the stop path ")
					assert.Contains(t, err.Error(), "could never be stopped")
				}
				assert.Empty(t, rec.all(), "no start, no stop")
			})
		}
	}
}

// TestZeroTimeoutStillBounds: a positive timeout setting too small for a
// time.Duration arrives as 0; it bounds the call (at once), never meaning
// "no timeout". The server hangs: without a bound the call would wait for
// it.
func TestZeroTimeoutStillBounds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	t.Cleanup(cancel)                                                     // after the parallel subtests
	var rec recorder
	srv := rec.serve(t, "a", hang)

	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		h := plan.ResetHook{Enabled: true, Paths: []string{"/r"}}
		_, err := newTestClient(nil, newFakeClock()).Reset(ctx, []string{srv.URL}, h)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "no answer within 1ns")
		require.NoError(t, ctx.Err(), "bounded by the hook's timeout, not the safety net")
	})
	t.Run("slots", func(t *testing.T) {
		t.Parallel()
		h := plan.ResetHook{Enabled: true, Slots: true}
		_, err := newTestClient(nil, newFakeClock()).Reset(ctx, []string{srv.URL}, h)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, ctx.Err(), "bounded by the hook's timeout, not the safety net")
	})
	t.Run("profiler", func(t *testing.T) {
		t.Parallel()
		h := plan.ProfilerHook{Enabled: true, StartPath: "/start", StopPath: "/stop"}
		err := newTestClient(nil, newFakeClock()).Profiler([]string{srv.URL}, h).Start(ctx, "profiling")
		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, ctx.Err(), "bounded by the hook's timeout, not the safety net")
	})
}

// TestResetBodyMustFinish: a 2xx whose body never finishes (it drips, then
// stalls past the timeout) fails the call, as does one larger than the read
// cap; neither is retried. A body of exactly the cap is read.
func TestResetBodyMustFinish(t *testing.T) {
	t.Parallel()
	successFalse := `{"success": false, "pad": "`
	pad := func(n int) string { return successFalse + strings.Repeat("x", n-len(successFalse)-2) + `"}` }
	cases := []struct {
		name, err, warning string
		answer             func(int, http.ResponseWriter, *http.Request)
	}{
		{name: "stalls", err: "status 200 OK, but the reply's body did not finish within 300ms: context deadline exceeded",
			answer: func(_ int, w http.ResponseWriter, req *http.Request) {
				_, _ = w.Write([]byte(`{"success": `))
				w.(http.Flusher).Flush()
				<-req.Context().Done() // until the client gives up
			}},
		{name: "too large", err: "status 200 OK, but the reply's body is larger than 64 KiB",
			answer: func(int, http.ResponseWriter, *http.Request) {}},
		{name: "exactly the cap", warning: `{"success": false}`,
			answer: func(int, http.ResponseWriter, *http.Request) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			answer := tc.answer
			switch tc.name {
			case "too large":
				answer = func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(pad(maxBodyRead + 1))) }
			case "exactly the cap":
				answer = func(_ int, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(pad(maxBodyRead))) }
			}
			srv := rec.serve(t, "a", answer)
			clock := newFakeClock()
			h := resetHook("/reset_prefix_cache", time.Minute)
			// The stalled body is cut by its 300 ms timeout whatever the
			// machine's speed; the others must not race one.
			h.Timeout = time.Minute
			if tc.name == "stalls" {
				h.Timeout = 300 * time.Millisecond
			}
			calls, err := newTestClient(nil, clock).Reset(context.Background(), []string{srv.URL}, h)
			require.Len(t, calls, 1)
			assert.Equal(t, 1, calls[0].Attempts)
			assert.Equal(t, 200, calls[0].Status)
			if tc.err == "" {
				require.NoError(t, err)
				assert.True(t, calls[0].OK)
				assert.Contains(t, calls[0].Warning, tc.warning)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.False(t, calls[0].OK)
			assert.Contains(t, calls[0].Error, tc.err)
			assert.Empty(t, clock.slept(), "a 200 is not retried")
		})
	}
}
