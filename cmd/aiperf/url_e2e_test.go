package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// targetLog records the request-target of every request as it came over
// the wire, and serves the mock under prefix (as written, escapes and path
// parameters included); anything else is a 404.
type targetLog struct {
	mu      sync.Mutex
	targets []string
}

func (l *targetLog) wrap(prefix string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.mu.Lock()
			l.targets = append(l.targets, r.Method+" "+r.RequestURI)
			l.mu.Unlock()
			rest, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
			if !ok {
				http.NotFound(w, r)
				return
			}
			r.URL.Path, r.URL.RawPath = rest, ""
			h.ServeHTTP(w, r)
		})
	}
}

// posts are the POSTs' request-targets.
func (l *targetLog) posts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, t := range l.targets {
		if s, ok := strings.CutPrefix(t, "POST "); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestURLQueryAndEscapingOnTheWire: as AIPerf builds the request URL, the
// --endpoint's query parameters replace the --url's of the same key
// (nothing of it lands in the path), the URL's other parameters stay in
// order, and the URL's path goes out escaped as written.
func TestURLQueryAndEscapingOnTheWire(t *testing.T) {
	for _, c := range []struct {
		name, prefix, url, endpoint, want string
	}{
		{"endpoint query", "", "/v1?x=1&k=a&k=b", "/v1/chat/completions?x=9&y=2", "/v1/chat/completions?x=9&k=a&k=b&y=2"},
		{"escaped path", "/a%2Fb/c%20d", "/a%2Fb/c%20d", "", "/a%2Fb/c%20d/v1/chat/completions"},
		{"path parameters", "/proxy;tenant=blue", "/proxy;tenant=blue?api-version=7", "",
			"/proxy;tenant=blue/v1/chat/completions?api-version=7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log targetLog
			m := startMockBehind(t, mock.Config{Fast: true}, log.wrap(c.prefix))
			args := quick(m.URL+c.url, "--request-count", "3", "--no-server-metrics")
			if c.endpoint != "" {
				args = append(args, "--endpoint", c.endpoint)
			}
			inv := cli(t, t.TempDir(), args...)
			require.Equal(t, ExitOK, inv.code, inv.stderr)
			assert.Equal(t, []string{c.want, c.want, c.want}, log.posts())
		})
	}
}
