package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/tokenizer"
)

// prefixedServer is the mock behind a gateway that serves it under prefix
// (a path that may hold escapes and path parameters) and answers 404 to
// anything else, recording each request line's target as it came.
type prefixedServer struct {
	mock    *mock.Server
	url     string
	mu      sync.Mutex
	targets []string
}

func startPrefixed(t *testing.T, prefix string) *prefixedServer {
	t.Helper()
	tok, err := tokenizer.Load(tokenizer.Default)
	require.NoError(t, err)
	m, err := mock.New(mock.Config{Fast: true, CountTokens: tok.Count})
	require.NoError(t, err)
	s := &prefixedServer{mock: m}
	h := m.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.targets = append(s.targets, r.Method+" "+r.RequestURI)
		s.mu.Unlock()
		rest, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		r.URL.Path, r.URL.RawPath = rest, ""
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

func (s *prefixedServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.targets...)
}

// TestWaitForModelModelsKeepsTheBase: the models probe reads the model
// list where the requests go: the URL's base path (its path parameters
// and escapes as written, a trailing /v1 not repeated) + /v1/models, with
// the URL's query; the requests then go to the same base.
func TestWaitForModelModelsKeepsTheBase(t *testing.T) {
	for _, c := range []struct{ base, query, models, requests string }{
		{"/proxy;tenant=blue", "?api-version=7", "GET /proxy;tenant=blue/v1/models?api-version=7",
			"POST /proxy;tenant=blue/v1/chat/completions?api-version=7"},
		{"/prefix/v1", "?k=1&k=2", "GET /prefix/v1/models?k=1&k=2", "POST /prefix/v1/chat/completions?k=1&k=2"},
		{"/a%2Fb", "", "GET /a%2Fb/v1/models", "POST /a%2Fb/v1/chat/completions"},
	} {
		prefix := strings.TrimSuffix(c.base, "/v1")
		s := startPrefixed(t, prefix)
		p := profile(s.url + c.base + c.query)
		p.WaitForModelTimeout, p.WaitForModelInterval, p.WaitForModelMode = plan.Ptr(30.0), plan.Ptr(0.01), plan.WaitModels
		run, err := Run(context.Background(), Options{Profile: p, Version: "test"})
		require.NoError(t, err, c.base)
		assert.Len(t, run.Records, 12, c.base)
		seen := s.seen()
		require.NotEmpty(t, seen, c.base)
		assert.Equal(t, c.models, seen[0], "the probe keeps the base path, its parameters and the query")
		assert.Equal(t, 12, s.mock.Control().InferenceRequests, c.base)
		var posts int
		for _, target := range seen[1:] {
			if strings.HasPrefix(target, "POST ") {
				assert.Equal(t, c.requests, target, c.base)
				posts++
			}
		}
		assert.Equal(t, 12, posts, c.base)
	}
}
