package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

var profilerHook = plan.ProfilerHook{Enabled: true, StartPath: "/start_profile", StopPath: "/stop_profile", Timeout: 5 * time.Second}

// failOn answers code for requests to path and 200 otherwise.
func failOn(path string, code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			w.WriteHeader(code)
		}
	}
}

func TestProfilerStartStop(t *testing.T) {
	t.Parallel()
	var rec recorder
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", ok)
	c := newTestClient(authHeaders(), newFakeClock())
	p := c.Profiler([]string{a.URL, b.URL}, profilerHook)

	require.NoError(t, p.Start(context.Background(), "profiling"))
	assert.Equal(t, []string{"a /start_profile", "b /start_profile"}, rec.trail())
	require.NoError(t, p.Stop(context.Background(), "profiling"))
	assert.Equal(t, []string{"a /start_profile", "b /start_profile", "a /stop_profile", "b /stop_profile"}, rec.trail())
	for _, h := range rec.all() {
		assert.Equal(t, http.MethodPost, h.Method)
		assert.Zero(t, h.BodyLen)
		assert.Empty(t, h.Header.Get("Content-Type"))
		assert.Equal(t, "Bearer "+secret, h.Header.Get("Authorization"))
	}
	for _, call := range p.Calls() {
		assert.Equal(t, "profiling", call.Phase)
		assert.True(t, call.OK)
		assert.Equal(t, 1, call.Attempts)
	}
	require.NoError(t, p.StopAll(context.Background()), "nothing left to stop")
	assert.Len(t, rec.all(), 4)
}

func TestProfilerStartFailureStopsStartedOriginsInReverse(t *testing.T) {
	t.Parallel()
	var rec recorder
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", failOn("/stop_profile", 500)) // its rollback failure is only recorded
	cc := rec.serve(t, "c", statuses(404))
	d := rec.serve(t, "d", ok)
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{a.URL, b.URL, cc.URL, d.URL}, profilerHook)

	err := p.Start(context.Background(), "profiling")
	require.Error(t, err)
	assert.Equal(t, "server profiler start: POST "+cc.URL+"/start_profile: status 404 Not Found", err.Error())
	assert.Equal(t, []string{
		"a /start_profile", "b /start_profile", "c /start_profile",
		"b /stop_profile", "a /stop_profile", // c refused the start: nothing to stop there
	}, rec.trail())
	calls := p.Calls()
	require.Len(t, calls, 5)
	assert.Equal(t, HookProfilerStop, calls[3].Hook)
	assert.False(t, calls[3].OK)
	assert.True(t, calls[4].OK)

	// The failed owner is not active: nothing more to stop.
	require.NoError(t, p.StopAll(context.Background()))
	require.NoError(t, p.Stop(context.Background(), "profiling"))
	assert.Len(t, rec.all(), 5)
}

// TestProfilerStartFailureStopsWhatMayHaveStarted: an error answer says the
// start did not take effect, and a connection never opened carried nothing;
// but a start that was sent and got no answer may have started the
// profiler: it is stopped too.
func TestProfilerStartFailureStopsWhatMayHaveStarted(t *testing.T) {
	t.Parallel()
	quick := profilerHook
	quick.Timeout = 2 * time.Second // the healthy answers come well within it, even on a loaded machine
	tests := []struct {
		name     string
		answer   func(int, http.ResponseWriter, *http.Request)
		stopped  bool
		errMatch string
	}{
		{"5xx", statuses(500), false, "status 500 Internal Server Error"},
		{"no answer", func(n int, w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/start_profile" {
				hang(n, w, r)
			}
		}, true, "no answer within 2s"},
		{"connection dropped", func(_ int, w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/start_profile" {
				conn, _, _ := w.(http.Hijacker).Hijack()
				_ = conn.Close()
			}
		}, true, "EOF"},
		{"4xx", statuses(400), false, "status 400 Bad Request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			a := rec.serve(t, "a", ok)
			b := rec.serve(t, "b", tt.answer)
			p := New(nil).Profiler([]string{a.URL, b.URL}, quick)
			err := p.Start(context.Background(), "profiling")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.errMatch)
			want := []string{"a /start_profile", "b /start_profile", "a /stop_profile"}
			if tt.stopped {
				want = []string{"a /start_profile", "b /start_profile", "b /stop_profile", "a /stop_profile"}
			}
			assert.Equal(t, want, rec.trail())
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		var rec recorder
		a := rec.serve(t, "a", ok)
		dead := closedOrigin(t)
		p := New(nil).Profiler([]string{a.URL, dead}, quick)
		require.Error(t, p.Start(context.Background(), "profiling"))
		assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())
		calls := p.Calls()
		require.Len(t, calls, 3, "no stop is sent where no start could arrive")
		assert.Equal(t, HookProfilerStop, calls[2].Hook)
		assert.Equal(t, a.URL, calls[2].Origin)
	})
}

// TestProfilerStartCancelledMidwayStillRollsBack: Ctrl-C while b's start is
// in flight. b may start its profiler, so it is stopped as well as a, and
// its stop is sent only once its start has answered: sent earlier, it could
// reach the server first and leave the profiler running.
func TestProfilerStartCancelledMidwayStillRollsBack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	var startAnswered, abandoned, stopOvertook atomic.Bool
	a := rec.serve(t, "a", ok)
	b := rec.serve(t, "b", func(_ int, _ http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start_profile":
			cancel() // Ctrl-C while b is starting
			select {
			case <-r.Context().Done(): // the client gave up on the start
				abandoned.Store(true)
			case <-time.After(50 * time.Millisecond): // the server is slow to start its profiler
			}
			startAnswered.Store(true)
		case "/stop_profile":
			stopOvertook.Store(!startAnswered.Load())
		}
	})
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{a.URL, b.URL, closedOrigin(t)}, profilerHook)

	err := p.Start(ctx, "profiling")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "server profiler start: interrupted: context canceled", err.Error())
	assert.Equal(t, []string{"a /start_profile", "b /start_profile", "b /stop_profile", "a /stop_profile"}, rec.trail(),
		"every origin that may have started is stopped, and none is started after the interrupt")
	assert.False(t, abandoned.Load(), "the start in flight got its answer")
	assert.False(t, stopOvertook.Load(), "b's stop was sent after its start answered")
}

// TestProfilerStartTimedOutAfterInterrupt: the start in flight at Ctrl-C
// never answers; it is stopped anyway once its timeout passes, and the error
// says both.
func TestProfilerStartTimedOutAfterInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	a := rec.serve(t, "a", func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start_profile" {
			cancel()
			hang(n, w, r)
		}
	})
	quick := profilerHook
	quick.Timeout = 2 * time.Second // room for the start to reach the handler, and the stop, beside CPU burners (-race)
	p := New(nil).Profiler([]string{a.URL}, quick)
	err := p.Start(ctx, "profiling")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interrupted: context canceled; POST "+a.URL+"/start_profile: no answer within 2s")
	assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())
}

func TestProfilerStopTriesEveryOriginAndAggregates(t *testing.T) {
	t.Parallel()
	var rec recorder
	a := rec.serve(t, "a", failOn("/stop_profile", 500))
	b := rec.serve(t, "b", ok)
	cc := rec.serve(t, "c", failOn("/stop_profile", 503))
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{a.URL, b.URL, cc.URL}, profilerHook)

	require.NoError(t, p.Start(context.Background(), "profiling"))
	err := p.Stop(context.Background(), "profiling")
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("server profiler stop failed for 2 origin(s): "+
		"POST %s/stop_profile: status 500 Internal Server Error; POST %s/stop_profile: status 503 Service Unavailable",
		a.URL, cc.URL), err.Error())
	var se *StopError
	require.True(t, errors.As(err, &se))
	assert.Len(t, se.Errs, 2)
	assert.Equal(t, []string{
		"a /start_profile", "b /start_profile", "c /start_profile",
		"a /stop_profile", "b /stop_profile", "c /stop_profile",
	}, rec.trail())
	assert.Equal(t, 1, p.Calls()[5].Attempts, "profiler calls are never retried")
}

func TestProfilerReferenceCounting(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{srv.URL}, profilerHook)
	ctx := context.Background()

	require.NoError(t, p.Start(ctx, "profiling-1"))
	require.NoError(t, p.Start(ctx, "profiling-2")) // seamless: joins the running trace
	require.NoError(t, p.Start(ctx, "profiling-2")) // already active: no-op
	assert.Equal(t, []string{"a /start_profile"}, rec.trail())
	require.NoError(t, p.Stop(ctx, "profiling-1"))
	require.NoError(t, p.Stop(ctx, "unknown"))
	assert.Equal(t, []string{"a /start_profile"}, rec.trail())
	require.NoError(t, p.Stop(ctx, "profiling-2"))
	assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())

	calls := p.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "profiling-1", calls[0].Phase)
	assert.Equal(t, "profiling-2", calls[1].Phase)

	// A later, separate profiling phase starts a new trace.
	require.NoError(t, p.Start(ctx, "profiling-3"))
	require.NoError(t, p.Stop(ctx, "profiling-3"))
	assert.Len(t, rec.all(), 4)
}

func TestProfilerConcurrentOwners(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := New(nil)
	p := c.Profiler([]string{srv.URL}, profilerHook)

	const owners = 8
	var started, wg sync.WaitGroup
	started.Add(owners)
	for i := range owners {
		wg.Go(func() {
			owner := fmt.Sprintf("phase-%d", i)
			assert.NoError(t, p.Start(context.Background(), owner))
			started.Done()
			started.Wait() // every owner is active before any stops
			assert.NoError(t, p.Stop(context.Background(), owner))
		})
	}
	wg.Wait()
	assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())
}

func TestProfilerStopWithCancelledContext(t *testing.T) {
	t.Parallel()
	for _, stopAll := range []bool{false, true} {
		t.Run(fmt.Sprintf("StopAll=%v", stopAll), func(t *testing.T) {
			t.Parallel()
			var rec recorder
			srv := rec.serve(t, "a", ok)
			c := New(nil)
			p := c.Profiler([]string{srv.URL}, profilerHook)
			ctx, cancel := context.WithCancel(context.Background())

			require.NoError(t, p.Start(ctx, "profiling"))
			cancel() // Ctrl-C after the start
			if stopAll {
				require.NoError(t, p.StopAll(ctx))
			} else {
				require.NoError(t, p.Stop(ctx, "profiling"))
			}
			assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())
			assert.True(t, p.Calls()[1].OK)
		})
	}
}

func TestProfilerStopAllNamesEveryActiveOwner(t *testing.T) {
	t.Parallel()
	var rec recorder
	srv := rec.serve(t, "a", ok)
	c := newTestClient(nil, newFakeClock())
	p := c.Profiler([]string{srv.URL}, profilerHook)
	ctx := context.Background()

	require.NoError(t, p.Start(ctx, "p1"))
	require.NoError(t, p.Start(ctx, "p2"))
	require.NoError(t, p.StopAll(ctx))
	require.NoError(t, p.Stop(ctx, "p1"))
	require.NoError(t, p.StopAll(ctx))
	calls := p.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "p1,p2", calls[1].Phase)
	assert.Equal(t, []string{"a /start_profile", "a /stop_profile"}, rec.trail())
}
