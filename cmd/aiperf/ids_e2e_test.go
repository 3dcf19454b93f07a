package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// uuid4 is the canonical form of a version-4 UUID.
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// sessionHeaders records each inference request's X-Request-ID →
// X-Correlation-ID, as the server received them.
type sessionHeaders struct {
	mu  sync.Mutex
	ids map[string]string
}

func (g *sessionHeaders) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") {
			g.mu.Lock()
			g.ids[r.Header.Get("X-Request-ID")] = r.Header.Get("X-Correlation-ID")
			g.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// TestRequestIDsAreUUIDs: as AIPerf, every request carries a fresh
// version-4 UUID as X-Request-ID and every session one as
// X-Correlation-ID, and profile_export.jsonl names each request by the ids
// the server received (x_request_id, x_correlation_id).
func TestRequestIDsAreUUIDs(t *testing.T) {
	got := &sessionHeaders{ids: map[string]string{}}
	m := startMockBehind(t, mock.Config{}, got.wrap)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "12", "--concurrency", "3", "--conversation-turn-mean", "2",
		"--warmup-request-count", "2", "--artifact-dir", filepath.Join(dir, "out"), "--no-store")...)
	require.Equal(t, 0, inv.code, inv.stderr)

	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 12)
	require.Len(t, got.ids, 14, "warmup and profiling requests, each its own id")
	sessions := map[string]int{}
	for _, l := range lines {
		id, corr := l.Metadata.XRequestID, l.Metadata.XCorrelationID
		assert.Regexp(t, uuid4, id)
		assert.Regexp(t, uuid4, corr)
		sent, ok := got.ids[id]
		require.True(t, ok, "request %s was received under its exported id", id)
		assert.Equal(t, sent, corr, "x_correlation_id is the X-Correlation-ID sent")
		assert.NotEqual(t, id, corr)
		sessions[corr]++
	}
	assert.Less(t, len(sessions), len(lines), "a session's turns share their correlation id")
	for corr, n := range sessions {
		assert.LessOrEqual(t, n, 2, "session %s", corr)
	}
}
