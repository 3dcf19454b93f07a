package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/result"
)

// balancer fronts replicas a and b: inference POSTs go to a, a, b, a, a, b,
// …; everything else (the reset, GET /metrics) goes to a, as a balancer
// that pins admin and metrics routes to one replica does.
func balancer(t *testing.T, a, b *mockServer) *httptest.Server {
	t.Helper()
	proxy := func(m *mockServer) *httputil.ReverseProxy {
		u, err := url.Parse(m.URL)
		require.NoError(t, err)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1
		return p
	}
	pa, pb := proxy(a), proxy(b)
	var n atomic.Int64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body is read whole first: proxied as it arrives, a reply
		// that began before the proxy's transport had read the body's end
		// made net/http's server discard the rest and close it under that
		// transport, which then closed the replica's connection mid-reply
		// (1 request in about 40 cut beside CPU burners).
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/") && n.Add(1)%3 == 0 {
			pb.ServeHTTP(w, r)
			return
		}
		pa.ServeHTTP(w, r)
	}))
	t.Cleanup(lb.Close)
	return lb
}

// TestKVResetReplicaBehindABalancer: the reset and the scrape reach one
// replica of two; the other, warm from an earlier run with the same seed,
// serves every third request from its prefix cache. The counters of the
// replica that was reset are cold and count enough of the traffic to be
// believed, but they did not see the hits: the reset is not cleared, and
// the warning says why and what to do.
func TestKVResetReplicaBehindABalancer(t *testing.T) {
	a, b := startMock(t, mock.Config{Fast: true}), startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := func(url string, extra ...string) []string {
		return append([]string{"profile", "-m", "mock-model", "-u", url, "--streaming", "--ui", "none",
			"--request-count", "6", "--concurrency", "1", "--artifact-dir", "out"}, extra...)
	}
	warm := cli(t, dir, args(b.URL, "--no-store")...)
	require.Equal(t, ExitOK, warm.code, warm.stderr)

	lb := balancer(t, a, b)
	run := cli(t, dir, args(lb.URL, "--reset-kv-cache")...)
	require.Equal(t, ExitOK, run.code, run.stderr)
	require.NotContains(t, run.stdout, "requests failed", "every request went through the balancer")
	require.Equal(t, 1, a.control().ResetCount)
	require.Equal(t, 0, b.control().ResetCount, "the reset reached one replica")
	require.Equal(t, 2, b.control().CacheHits, "the replica never reset served requests 3 and 6 from its cache")

	audit := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
	assert.Equal(t, result.ResetNotCleared, audit["kv_reset"], audit["kv_reset_detail"])
	assert.Equal(t, []any{result.EvidenceCachedTokens}, audit["kv_reset_evidence"])
	require.Len(t, audit["server_reset_evidence"], 1)
	assert.True(t, strings.HasPrefix(audit["server_reset_evidence"].([]any)[0].(string), "cold: "),
		"the reset replica's counters were believed: %v", audit["server_reset_evidence"])
	detail, _ := audit["kv_reset_detail"].(string)
	assert.Contains(t, detail, "2 of 6 prompts were served from the prefix cache on their first request after the reset")
	assert.Contains(t, detail, "several replicas behind one URL, such as a load balancer")
	assert.Contains(t, detail, "reset every replica")
	out := strings.Join(strings.Fields(run.stdout), " ") // unwrapped
	assert.True(t, strings.Contains(out, "Warning: kv cache reset: "+detail), "the console warns with the detail")
	assert.False(t, strings.Contains(out, "KV cache reset verified"), "the console does not say verified")
}
