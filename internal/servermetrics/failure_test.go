package servermetrics

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// exporter is a programmable metrics endpoint: it serves body with
// contentType, and records the requests' headers.
type exporter struct {
	mu          sync.Mutex
	body        string
	contentType string
	headers     []http.Header
	url         string
}

func newExporter(t testing.TB, body string) *exporter {
	e := &exporter{body: body, contentType: "text/plain; version=0.0.4; charset=utf-8"}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.headers = append(e.headers, r.Header.Clone())
		w.Header().Set("Content-Type", e.contentType)
		_, _ = w.Write([]byte(e.body))
	}))
	t.Cleanup(ts.Close)
	e.url = ts.URL + "/metrics"
	return e
}

func (e *exporter) set(body string) {
	e.mu.Lock()
	e.body = body
	e.mu.Unlock()
}

// A broken endpoint — 404, garbage, JSON, too slow — gives one warning
// (and one Warn call) however often it fails; its scrapes go on, and so do
// the healthy endpoint's, whose phase deltas stay exact.
func TestBrokenEndpointsWarnOnceAndCollectionGoesOn(t *testing.T) {
	base := startMock(t, mock.Config{Fast: true})
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	garbage := newExporter(t, "hello world\n{{{ not metrics\n")
	jsonBody := newExporter(t, `[{"iter": 1}]`)
	jsonBody.contentType = "application/json"
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })

	var warned sync.Map
	var warnings atomic.Int32
	// The timeouts leave room for a healthy scrape beside CPU burners
	// (-race): the healthy endpoint's marks must land for its deltas to be
	// exact. The phase lasts long enough for the endpoint that never
	// answers to time out again and again (its baseline, its begin mark and
	// a periodic scrape a second, at the least).
	const timeout = time.Second
	start := time.Now()
	c := collect(t, Options{
		Endpoints: []Target{server(base), {URL: notFound.URL + "/metrics", Source: SourceServer}, {URL: garbage.url, Source: SourceServer},
			{URL: jsonBody.url, Source: SourceServer}, {URL: slow.URL + "/metrics", Source: SourceGPU}},
		Interval: 5 * time.Millisecond, Timeout: timeout, MarkTimeout: timeout,
		Warn: func(msg string) { warnings.Add(1); warned.Store(msg, true) },
	})
	c.Mark("profiling", true)
	var prompt int
	for i := range 3 {
		prompt += chat(t, base, words(i, 30), 4).PromptTokens
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Until(start.Add(4 * timeout)))
	c.Mark("profiling", false)
	r := c.Stop()

	assert.Equal(t, float64(prompt), find(t, r, "vllm:prompt_tokens", "profiling").Stats["total"])
	require.Len(t, r.Endpoints, 5)
	assert.Zero(t, r.Endpoints[0].Failures)
	for i, want := range []string{"HTTP 404 Not Found", "not Prometheus text", "answered application/json", "timed out"} {
		e := r.Endpoints[i+1]
		assert.Zero(t, e.Scrapes, e.URL)
		assert.Greater(t, e.Failures, 2, "%s: scraped again and again", e.URL)
		assert.Contains(t, e.LastError, want)
	}
	require.Len(t, r.Warnings, 4, "one per broken endpoint: %q", r.Warnings)
	assert.EqualValues(t, 4, warnings.Load(), "Warn heard each endpoint once")
	for i, w := range r.Warnings {
		assert.Contains(t, w, r.Endpoints[i+1].URL)
		assert.Contains(t, w, "collection goes on")
	}
	assert.True(t, strings.HasPrefix(r.Warnings[3], "GPU telemetry: scrape "), r.Warnings[3])
	assert.Contains(t, r.Warnings[0], "server metrics: scrape "+notFound.URL+"/metrics: HTTP 404 Not Found (")
}

// A begin mark that waited for an endpoint which never answers does not
// count the wait in another endpoint's phase: the load starts when Mark
// returns, so that endpoint is scraped again for its mark, and the idle
// samples of the wait stay out of the phase's figures.
func TestAHungEndpointDoesNotStretchTheOthersPhase(t *testing.T) {
	gauge := func(v int) string {
		return fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %d\n", v)
	}
	healthy := newExporter(t, gauge(0))
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hung.Close)
	served := func() int {
		healthy.mu.Lock()
		defer healthy.mu.Unlock()
		return len(healthy.headers)
	}
	const wait = 500 * time.Millisecond // a hundred periodic scrapes of the healthy endpoint, or as many as a busy machine runs
	c := collect(t, Options{Endpoints: []Target{{URL: healthy.url, Source: SourceServer}, {URL: hung.URL + "/metrics", Source: SourceServer}},
		Interval: 5 * time.Millisecond, Timeout: wait, MarkTimeout: wait})
	c.Mark("profiling", true) // waits for the hung endpoint
	healthy.set(gauge(8))     // the load, as soon as Mark returns
	from := served()
	require.Eventually(t, func() bool { return served() >= from+40 }, time.Minute, time.Millisecond) // a hang guard
	c.Mark("profiling", false)
	r := c.Stop()

	running := find(t, r, "vllm:num_requests_running", "profiling")
	assert.Equal(t, 8.0, running.Stats["max"])
	assert.Greater(t, running.Stats["avg"], 6.0, "the wait's idle samples (0) are not the phase's: %v", running.Stats)
	require.Len(t, r.Phases, 1)
	assert.Greater(t, r.Phases[0].BeginNs, int64(2*wait), "the phase begins when the mark's wait ended (after Start's)")
}

// An endpoint that stops answering in the middle of a phase gives a
// counter delta of part of the phase: it is refused, with why, not
// reported as the phase's total and rate.
func TestAnEndpointThatStopsAnsweringIsNotAWholePhase(t *testing.T) {
	var failing atomic.Bool
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "exporter crashed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %d\n", 100*served.Add(1))
	}))
	t.Cleanup(srv.Close)
	c := collect(t, Options{Endpoints: []Target{{URL: srv.URL + "/metrics", Source: SourceServer}}, Interval: 5 * time.Millisecond})
	c.Mark("profiling", true)
	began, from := time.Now(), served.Load()
	require.Eventually(t, func() bool { return served.Load() >= from+5 }, time.Minute, time.Millisecond) // a hang guard
	failing.Store(true)
	time.Sleep(max(time.Since(began), 50*time.Millisecond)) // half the phase at least, unanswered
	c.Mark("profiling", false)
	r := c.Stop()

	tokens := find(t, r, "vllm:generation_tokens", "profiling")
	assert.Empty(t, tokens.Stats, "no total or rate of part of the phase")
	assert.Positive(t, tokens.Refused["total"])
	assert.Contains(t, tokens.Impossible, "stopped answering")
	assert.True(t, slices.ContainsFunc(r.Warnings, func(w string) bool {
		return strings.Contains(w, srv.URL) && strings.Contains(w, "counters and histograms over that phase are left out")
	}), "%q", r.Warnings)
}

// A URL's own credentials go with its scrapes, as Basic, in place of the
// benchmark's, and nowhere else: not in the result, its warnings or its
// JSON; a password in the URL is redacted.
func TestCredentialsStayOutOfTheResult(t *testing.T) {
	var seen atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization"))
		if user, pw, ok := r.BasicAuth(); r.URL.Path != "/metrics" || !ok || user != "admin" || pw != "hunter2" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
	}))
	t.Cleanup(ts.Close)
	withPassword := strings.Replace(ts.URL, "http://", "http://admin:hunter2@", 1) + "/metrics"
	c := collect(t, Options{Endpoints: []Target{{URL: withPassword, Source: SourceServer}, {URL: withPassword + "/missing", Source: SourceServer}},
		Headers: http.Header{"Authorization": {"Bearer sk-secret-token"}}, Origins: []string{ts.URL}})
	c.Mark("profiling", true)
	c.Mark("profiling", false)
	r := c.Stop()
	assert.NotContains(t, seen.Load(), "Bearer", "the URL's userinfo, not the benchmark's key")
	assert.Equal(t, 1.0, find(t, r, "up", "profiling").Stats["max"])
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	require.Len(t, r.Warnings, 1)
	for _, secret := range []string{"sk-secret-token", "hunter2", "admin:"} {
		assert.NotContains(t, string(raw), secret)
		assert.NotContains(t, r.Warnings[0], secret)
	}
	assert.Contains(t, r.Endpoints[0].URL, "http://<redacted>@127.0.0.1")
}

// Bad targets are refused before anything is scraped.
func TestStartRefusesBadTargets(t *testing.T) {
	for _, tc := range []struct {
		target Target
		want   string
	}{
		{Target{URL: "ftp://h/metrics", Source: SourceServer}, "server metrics: ftp://h/metrics must use http or https"},
		{Target{URL: "http://u:pw@/metrics", Source: SourceServer}, `server metrics: "http://<redacted>@/metrics" is not a URL`},
		{Target{URL: "http://h/metrics", Source: "disk"}, `has source "disk", want "server" or "gpu"`},
	} {
		_, err := Start(t.Context(), Options{Endpoints: []Target{tc.target}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// A body that takes more than a quarter of the interval to parse is warned
// about once, OpenMetrics as the text format (here the interval and the
// floor are so short that any parse is slow).
func TestSlowParseWarnsOnce(t *testing.T) {
	defer func(d time.Duration) { slowParse = d }(slowParse)
	slowParse = 0
	e := newExporter(t, "# TYPE g gauge\ng{a=\"x\"} 1\n# EOF\n")
	e.contentType = "application/openmetrics-text; version=1.0.0"
	var warnings atomic.Int32
	c := collect(t, Options{Endpoints: []Target{{URL: e.url, Source: SourceServer}}, Interval: 40 * time.Microsecond,
		Warn: func(string) { warnings.Add(1) }})
	c.Mark("profiling", true)
	c.Mark("profiling", false)
	r := c.Stop()
	require.Len(t, r.Warnings, 1)
	assert.Contains(t, r.Warnings[0], "more than a quarter of the 0 ms interval; collection goes on")
	assert.EqualValues(t, 1, warnings.Load())
	assert.Zero(t, r.Endpoints[0].Failures, "slow is not failed")
}

// A server that echoes its scrape's secrets (the Authorization header, the
// URL's token) into label values, a label name, HELP text and the status
// line of a failed scrape gets none of them into what the collector keeps:
// series labels and descriptions, warnings.
func TestEchoedSecretsAreRedacted(t *testing.T) {
	const key, token = "sk-SECRETAPIKEY123456", "METRICSQ777"
	var failing atomic.Bool
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				echo := req.Header.Get("Authorization") + " " + req.URL.RawQuery
				if failing.Load() {
					fmt.Fprintf(conn, "HTTP/1.1 503 %s\r\nContent-Length: 0\r\n\r\n", echo)
					return
				}
				body := fmt.Sprintf("# HELP vllm:num_requests_running echo %s\n# TYPE vllm:num_requests_running gauge\n"+
					"vllm:num_requests_running{auth=%q,x_%s=\"1\"} 1\n", echo, echo, "METRICSQ777")
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	redact := plan.NewRedactor(key, token).Redact
	c := collect(t, Options{Endpoints: []Target{{URL: "http://" + ln.Addr().String() + "/metrics?token=" + token, Source: SourceServer}},
		Headers: http.Header{"Authorization": {"Bearer " + key}}, Origins: []string{ln.Addr().String()}, Redact: redact})
	c.Mark("profiling", true)
	failing.Store(true)
	c.Mark("profiling", false)
	r := c.Stop()

	out, err := json.Marshal(r)
	require.NoError(t, err)
	require.Contains(t, string(out), "num_requests_running", "the series was kept")
	require.NotEmpty(t, r.Warnings, "the failed scrape is warned about")
	assert.NotContains(t, string(out), key)
	assert.NotContains(t, string(out), token)
	assert.NotContains(t, strings.Join(r.Warnings, "\n"), key)
}
