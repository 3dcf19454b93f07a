package servermetrics

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headerLog serves a metrics page and records, per path, the
// Authorization, X-Api-Key and X-Route headers of every scrape.
type headerLog struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (l *headerLog) server(t *testing.T) *httptest.Server {
	l.seen = map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen[r.URL.Path] = append(l.seen[r.URL.Path], r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key")+"|"+r.Header.Get("X-Route"))
		l.mu.Unlock()
		_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (l *headerLog) got(path string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[path]
}

// The benchmark's credential headers go to a scrape on an inference URL's
// origin only; another origin, even one the user named, gets the other
// headers, and a URL's userinfo is sent as Basic in place of them.
func TestScrapeCredentialsStayOnTheirOrigin(t *testing.T) {
	var inf, other headerLog
	infSrv, otherSrv := inf.server(t), other.server(t)
	userinfo := func(base string) string { return strings.Replace(base, "http://", "http://metuser:metpass@", 1) }
	c := collect(t, Options{
		Endpoints: []Target{
			{URL: infSrv.URL + "/metrics", Source: SourceServer},
			{URL: userinfo(infSrv.URL) + "/basic", Source: SourceServer},
			{URL: otherSrv.URL + "/metrics", Source: SourceServer},
			{URL: userinfo(otherSrv.URL) + "/basic", Source: SourceServer},
			{URL: otherSrv.URL + "/dcgm", Source: SourceGPU},
		},
		Headers: http.Header{"Authorization": {"Bearer SKAPIKEY777"}, "X-Api-Key": {"SKAPIKEY777"}, "X-Route": {"r1"}},
		Origins: []string{strings.ToUpper(infSrv.URL) + "/v1/chat/completions"},
	})
	c.Stop()
	basic := "Basic bWV0dXNlcjptZXRwYXNz" // metuser:metpass
	for _, tc := range []struct {
		log        *headerLog
		path, want string
	}{
		{&inf, "/metrics", "Bearer SKAPIKEY777|SKAPIKEY777|r1"},
		{&inf, "/basic", basic + "||r1"},
		{&other, "/metrics", "||r1"},
		{&other, "/basic", basic + "||r1"},
		{&other, "/dcgm", "||r1"},
	} {
		got := tc.log.got(tc.path)
		require.NotEmpty(t, got, tc.path)
		for _, g := range got {
			assert.Equal(t, tc.want, g, tc.path)
		}
	}
}

// Without the inference URLs, the credential headers go nowhere.
func TestScrapeCredentialsNeedAnOrigin(t *testing.T) {
	var l headerLog
	srv := l.server(t)
	c := collect(t, Options{Endpoints: []Target{server(srv.URL)}, Headers: http.Header{"Authorization": {"Bearer k"}}})
	c.Stop()
	require.NotEmpty(t, l.got("/metrics"))
	assert.Equal(t, "||", l.got("/metrics")[0])
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		target, inference string
		want              bool
	}{
		{"http://h:8000/metrics", "http://H:8000/v1", true},
		{"http://h/metrics", "h:80", true},
		{"https://h/metrics", "https://h:443/v1", true},
		{"http://h:8001/metrics", "http://h:8000", false},
		{"https://h:8000/metrics", "http://h:8000", false},
		{"http://127.0.0.1:8000/metrics", "http://localhost:8000", false},
		{"http://evil.h:8000/metrics", "http://h:8000", false},
	} {
		u, err := url.Parse(tc.target)
		require.NoError(t, err)
		assert.Equal(t, tc.want, onOrigin(u, []string{tc.inference}), "%s vs %s", tc.target, tc.inference)
	}
}
