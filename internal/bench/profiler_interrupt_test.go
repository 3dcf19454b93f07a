package bench

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// hangGuard bounds a wait for what must happen: a hang guard, never what a
// test asserts.
const hangGuard = 3 * time.Minute

// syncBuffer is a log written from several goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// holdRoute serves the mock behind a handler that holds each request
// whose path starts with prefix (until released or its client gives up)
// after telling arrived.
func holdRoute(t *testing.T, prefix string) (srv *mock.Server, url string, arrived <-chan struct{}, release func()) {
	t.Helper()
	srv, _ = startMock(t, mock.Config{Fast: true})
	got, free := make(chan struct{}, 64), make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, prefix) {
			got <- struct{}{}
			select {
			case <-free:
			case <-r.Context().Done():
				return
			}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	release = func() { once.Do(func() { close(free) }) }
	t.Cleanup(ts.Close)
	t.Cleanup(release)
	return srv, ts.URL, got, release
}

type runResult struct {
	run *result.Run
	err error
}

func runAsync(ctx context.Context, o Options) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		run, err := Run(ctx, o)
		done <- runResult{run, err}
	}()
	return done
}

// awaitRun is the outcome of the run runAsync started; failing says why
// the test expected it to end.
func awaitRun(t *testing.T, done <-chan runResult, failing string) runResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(hangGuard):
		t.Fatal(failing)
	}
	return runResult{}
}

func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("%s never happened", what)
	}
}

func awaitLog(t *testing.T, log *syncBuffer, sub string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(log.String(), sub) }, hangGuard, 5*time.Millisecond,
		"the run never logged %q; it logged:\n%s", sub, log)
}

// TestRunInterruptedDuringProfilerStop: a Ctrl-C while the profiler stop
// (sent once the load drained) is on its way says at once that the run
// waits for it, and how long; while it waits, the profiler is one a hard
// exit would leave running, with its stop route; the run's error names the
// stop.
func TestRunInterruptedDuringProfilerStop(t *testing.T) {
	srv, url, stopping, release := holdRoute(t, "/stop_profile")
	p := profile(url)
	p.ServerProfiler = true
	p.ServerProfilerTimeoutSeconds = plan.Ptr(60.0)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	log := &syncBuffer{}
	done := runAsync(ctx, Options{Profile: p, Log: log})
	await(t, stopping, "the profiler stop")
	assert.NotContains(t, log.String(), "stopping the server profiler", "said only after an interrupt")
	cancel(errors.Join(context.Canceled, errors.New("SIGINT (Ctrl-C)")))
	awaitLog(t, log, "note: stopping the server profiler (up to 1m0s; a second Ctrl-C exits at once and leaves it running)\n")
	assert.Contains(t, ProfilersLeftRunning(), "the server profiler was started and may still be running "+
		"(its stop call had not returned): stop it with a POST to "+url+"/stop_profile")
	release()
	r := awaitRun(t, done, "the run did not end once the stop was answered")
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Contains(t, r.err.Error(), "interrupted (after the load: all 12 profiling requests had returned) while stopping the server profiler: ")
	assert.Equal(t, result.StatusInterrupted, r.run.Status)
	assert.Equal(t, 1, srv.Control().ProfilerStops)
	assert.Empty(t, ProfilersLeftRunning(), "the run is over: nothing of it is left running")
}

// TestRunInterruptedBeforeProfilerStop: a stop sent after a Ctrl-C cut
// the load is said at once too; the error still places the interrupt in
// the load.
func TestRunInterruptedBeforeProfilerStop(t *testing.T) {
	_, url, held, release := holdRoute(t, "/v1/")
	p := profile(url)
	p.ServerProfiler = true
	p.Concurrency = plan.Ptr(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &syncBuffer{}
	done := runAsync(ctx, Options{Profile: p, Log: log})
	await(t, held, "the first request")
	cancel()
	awaitLog(t, log, "note: stopping the server profiler (up to 30s; a second Ctrl-C exits at once and leaves it running)\n")
	release()
	r := <-done
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Contains(t, r.err.Error(), "interrupted (during profiling: 0 of 1 profiling requests had returned, 1 was cut; 11 of 12 were never sent): ")
	assert.NotContains(t, r.err.Error(), "while stopping")
}

// TestRunInterruptedDuringAFixedSchedule: a Ctrl-C before a fixed
// schedule's second request is due says it was never sent (it said all
// the requests had returned, of one).
func TestRunInterruptedDuringAFixedSchedule(t *testing.T) {
	_, url, held, _ := holdRoute(t, "/v1/")
	path := filepath.Join(t.TempDir(), "two.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"timestamp": 0, "input_length": 8, "output_length": 2}
{"timestamp": 600000, "input_length": 8, "output_length": 2}
`), 0o644))
	p := profile(url)
	p.InputFile, p.RequestCount = path, nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(ctx, Options{Profile: p})
	await(t, held, "the first request")
	cancel()
	r := <-done
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Contains(t, r.err.Error(), "interrupted (during profiling: 0 of 1 profiling requests had returned, 1 was cut; 1 of 2 was never sent): ")
}

// TestRunInterruptedDuringProfilerStart: a Ctrl-C while the profiler
// start is on its way says at once that the run waits for its answer and
// then stops the profiler; a hard exit then would leave a profiler that
// may be running.
func TestRunInterruptedDuringProfilerStart(t *testing.T) {
	srv, url, starting, release := holdRoute(t, "/start_profile")
	p := profile(url)
	p.ServerProfiler = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &syncBuffer{}
	done := runAsync(ctx, Options{Profile: p, Log: log})
	await(t, starting, "the profiler start")
	assert.NotContains(t, log.String(), "waiting for the server profiler", "said only after an interrupt")
	cancel()
	awaitLog(t, log, "note: waiting for the server profiler's start call to answer (up to 30s), then stopping it "+
		"(a second Ctrl-C exits at once and leaves it running)\n")
	assert.Contains(t, ProfilersLeftRunning(), "the server profiler was being started and may be running: stop it with a POST to "+
		url+"/stop_profile once its start can no longer reach the server (30s after it was sent)")
	release()
	r := <-done
	require.ErrorIs(t, r.err, context.Canceled)
	assert.Contains(t, r.err.Error(), "interrupted (during the server profiler start call: no request was sent): ")
	assert.Equal(t, 1, srv.Control().ProfilerStops)
	assert.Empty(t, ProfilersLeftRunning())
}

// TestRunInterruptedDuringOpeningScrape: a Ctrl-C while the scrape that
// opens the first phase hangs (the load waits for it) is placed there,
// not "during profiling": nothing was sent.
func TestRunInterruptedDuringOpeningScrape(t *testing.T) {
	srv, _ := startMock(t, mock.Config{Fast: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var scrapes int
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/metrics" {
			scrapes++
		}
		n := scrapes
		mu.Unlock()
		if r.URL.Path != "/metrics" || n == 1 { // the baseline scrape is answered
			srv.Handler().ServeHTTP(w, r)
			return
		}
		cancel() // the interrupt, as the phase's opening scrape arrives: the load waits for it
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	p := profile(ts.URL)
	p.ServerMetricsInterval = plan.Ptr(3600.0) // no periodic scrape
	run, err := Run(ctx, Options{Profile: p})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "interrupted while starting the server-metrics collection (no load was sent): ")
	assert.Equal(t, result.StatusInterrupted, run.Status)
	assert.Zero(t, srv.Control().InferenceRequests)
}

// TestReachedWhere: where an interrupt is placed, from what the phases
// had done.
func TestReachedWhere(t *testing.T) {
	warmup, profiling := plan.Phase{Kind: plan.KindWarmup}, plan.Phase{Kind: plan.KindProfiling}
	two := []metrics.Record{{PhaseKind: plan.KindWarmup}, {PhaseKind: plan.KindWarmup}}
	prof := []metrics.Record{{PhaseKind: plan.KindProfiling}}
	for _, c := range []struct {
		r          reached
		warm, prof []metrics.Record
		want       string
	}{
		{reached{scrapeCut: plan.KindWarmup}, nil, nil, "while starting the server-metrics collection (no load was sent)"},
		{reached{scrapeCut: plan.KindProfiling}, nil, nil, "while starting the server-metrics collection (no load was sent)"},
		{reached{sending: []plan.Phase{warmup}, drained: 1, scrapeCut: plan.KindProfiling}, two, nil,
			"(during the server-metrics scrape that begins profiling, after warmup (all 2 warmup requests had returned): " +
				"no profiling request was sent)"},
		{reached{sending: []plan.Phase{warmup, profiling}, drained: 2, stopCut: true}, two, prof,
			"(after the load: all 1 profiling requests had returned) while stopping the server profiler"},
		{reached{sending: []plan.Phase{warmup, profiling}, drained: 2}, two, prof,
			"(after the load: all 1 profiling requests had returned)"},
	} {
		assert.Equal(t, c.want, c.r.where(2, c.prof, c.warm), "%+v", c.r)
	}
}
