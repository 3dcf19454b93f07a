package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// loadingServer is the mock behind a front that answers 503 to the first
// `loading` requests (any route), as a server still loading its model, and
// records every path it was asked for.
type loadingServer struct {
	mock     *mock.Server
	url      string
	loading  int64
	hits     atomic.Int64
	answered atomic.Int64 // requests whose answer was written
	mu       sync.Mutex
	paths    []string
}

func startLoading(t *testing.T, loading int64) *loadingServer {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	m, err := mock.New(mock.Config{Fast: true, CountTokens: tok.Count})
	require.NoError(t, err)
	s := &loadingServer{mock: m, loading: loading}
	h := m.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		defer s.answered.Add(1)
		if s.hits.Add(1) <= s.loading {
			http.Error(w, `{"error":{"message":"model loading"}}`, http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

func (s *loadingServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// TestWaitForModelInference: the default probe sends one-token requests of
// the endpoint type until one succeeds, then the run goes on; the probes
// are not recorded.
func TestWaitForModelInference(t *testing.T) {
	s := startLoading(t, 3)
	p := profile(s.url)
	p.WaitForModelTimeout, p.WaitForModelInterval = plan.Ptr(30.0), plan.Ptr(0.01)
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.NoError(t, err)
	assert.Len(t, run.Records, 12, "the probes are not records")
	assert.Equal(t, 13, s.mock.Control().InferenceRequests, "one successful probe, then the load")
	paths := s.seen()
	require.GreaterOrEqual(t, len(paths), 4)
	for _, p := range paths[:4] {
		assert.Equal(t, "POST /v1/chat/completions", p, "three refused probes, then the one that passed")
	}
}

// TestWaitForModelModels: the models probe polls /v1/models until it lists
// the model; both adds the inference probe after it.
func TestWaitForModelModels(t *testing.T) {
	for _, mode := range []string{plan.WaitModels, plan.WaitBoth} {
		s := startLoading(t, 2)
		p := profile(s.url)
		p.WaitForModelTimeout, p.WaitForModelInterval, p.WaitForModelMode = plan.Ptr(30.0), plan.Ptr(0.01), mode
		run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
		require.NoError(t, err, mode)
		assert.Len(t, run.Records, 12, mode)
		paths := s.seen()
		assert.Equal(t, []string{"GET /v1/models", "GET /v1/models", "GET /v1/models"}, paths[:3], mode)
		want := 12
		if mode == plan.WaitBoth {
			want = 13
			assert.Equal(t, "POST /v1/chat/completions", paths[3], "then the inference probe")
		}
		assert.Equal(t, want, s.mock.Control().InferenceRequests, mode)
	}
}

// TestWaitForModelTimesOut: a server never ready fails the run once the
// timeout passes, before the reset hook and any load, saying why.
func TestWaitForModelTimesOut(t *testing.T) {
	s := startLoading(t, 1<<40)
	p := profile(s.url)
	p.ResetKVCache = true
	p.WaitForModelTimeout, p.WaitForModelInterval, p.WaitForModelMode = plan.Ptr(0.3), plan.Ptr(0.05), plan.WaitBoth
	run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the model was not ready after 300ms (--wait-for-model-timeout)")
	assert.Contains(t, err.Error(), "/v1/models: HTTP 503")
	assert.Contains(t, err.Error(), "(no load was sent)")
	assert.Empty(t, run.Records)
	assert.Empty(t, run.ControlHooks, "no reset before the model is ready")
	for _, path := range s.seen() {
		assert.Equal(t, "GET /v1/models", path, "nothing but probes")
	}
	assert.Zero(t, s.mock.Control().InferenceRequests)

	s = startLoading(t, 0)
	p = profile(s.url)
	p.Model = []string{"other-model"}
	p.WaitForModelTimeout, p.WaitForModelInterval, p.WaitForModelMode = plan.Ptr(0.1), plan.Ptr(0.05), plan.WaitModels
	_, err = Run(context.Background(), Options{Profile: p, Version: "test"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"other-model" is not listed (listed: mock-model)`)
}

// TestWaitForModelInterruptedBetweenProbes: a Ctrl-C (the run's context
// cancelled) after a probe was refused stops the wait at once, not at the
// next probe an hour later, and says the run was waiting for the server.
func TestWaitForModelInterruptedBetweenProbes(t *testing.T) {
	s := startLoading(t, 1<<40)
	p := profile(s.url)
	p.WaitForModelTimeout, p.WaitForModelInterval = plan.Ptr(7200.0), plan.Ptr(3600.0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runAsync(ctx, Options{Profile: p, Version: "test"})
	require.Eventually(t, func() bool { return s.answered.Load() >= 1 }, hangGuard, 5*time.Millisecond,
		"the first probe is refused")
	cancel() // the wait for the next probe is an hour
	o := awaitRun(t, done, "the run still waits for its next probe after the Ctrl-C")
	require.ErrorIs(t, o.err, context.Canceled)
	assert.Contains(t, o.err.Error(), "waiting for the server (no load was sent)")
	assert.Equal(t, int64(1), s.hits.Load(), "no probe after the Ctrl-C")
	assert.Empty(t, o.run.Records)
}
