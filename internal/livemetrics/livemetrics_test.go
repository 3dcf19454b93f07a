package livemetrics

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/livemetrics/promtest"
	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

func serve(t *testing.T) *Server {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	s := Serve(ln, Options{Labels: Labels{Run: "demo", Cell: "concurrency_4", Trial: "1"}, Streaming: true,
		Info: map[string]string{"model": "m1"}})
	t.Cleanup(func() { s.Close(context.Background(), 0) })
	return s
}

// feed records n successes (streamed: 50 ms to the first token, 4 tokens)
// and one failure of each error type given, in phase "profiling", and
// shows a phase with 3 requests in flight.
func feed(s *Server, n int, errs ...string) {
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling, Rate: 20}
	pr := &load.Progress{Phase: ph}
	pr.Sent.Store(int64(n + len(errs) + 3))
	pr.Done.Store(int64(n + len(errs)))
	s.Watch(func() *load.Progress { return pr }, load.NewClock())
	for i := range n {
		r := metrics.Record{Phase: "profiling", PhaseKind: plan.KindProfiling, SentNs: int64(i), OutputTokens: 4,
			ResponseNs: metrics.StampsOf(int64(i)+50e6, int64(i)+60e6, int64(i)+70e6, int64(i)+80e6)}
		s.Record(&r)
	}
	for _, e := range errs {
		s.Record(&metrics.Record{Phase: "profiling", Error: &metrics.Error{Type: e}})
	}
}

// scraped reads the endpoint's families once.
func scraped(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// valueOf is the value of the series of name with labels among fams (a
// histogram's sample count), ok false when there is none.
func valueOf(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if match {
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func TestServesLiveCounts(t *testing.T) {
	s := serve(t)
	feed(s, 7, "Timeout", "HTTPError", "HTTPError")
	fams := scraped(t, s)
	value := func(name string, labels map[string]string) float64 {
		v, ok := valueOf(fams, name, labels)
		if !ok {
			t.Fatalf("no %s%v", name, labels)
		}
		return v
	}
	all := map[string]string{"run": "demo", "cell": "concurrency_4", "trial": "1", "phase": "profiling"}
	assert.Equal(t, 7.0, value("aiperf_requests_completed_total", all))
	assert.Equal(t, 2.0, value("aiperf_request_errors_total", map[string]string{"error_type": "HTTPError"}))
	assert.Equal(t, 1.0, value("aiperf_request_errors_total", map[string]string{"error_type": "Timeout"}))
	assert.Equal(t, 7.0, value("aiperf_time_to_first_token_seconds", all))
	assert.Equal(t, 7.0, value("aiperf_inter_token_latency_seconds", all))
	assert.Equal(t, 7.0, value("aiperf_request_latency_seconds", all))
	assert.Equal(t, 13.0, value("aiperf_requests_sent_total", all))
	assert.Equal(t, 3.0, value("aiperf_requests_in_flight", all))
	assert.Equal(t, 20.0, value("aiperf_request_rate_target", all))
	assert.Equal(t, 1.0, value("aiperf_phase", map[string]string{"phase": "profiling", "kind": "profiling"}))
	assert.Equal(t, 1.0, value("aiperf_run_info", map[string]string{"model": "m1"}))
}

// TestCloseWaitsForTheFinalScrape: Close returns once a scrape read the
// final counts (no timing: the scrape is what releases it).
func TestCloseWaitsForTheFinalScrape(t *testing.T) {
	s := serve(t)
	feed(s, 1)
	done := make(chan bool)
	go func() { done <- s.Close(context.Background(), time.Hour) }()
	for s.ended.Load() == false {
		time.Sleep(time.Millisecond)
	}
	// A scrape whose scraper had given up (it allowed 1 ns) does not end
	// the linger; the next one, with no stated timeout, does.
	req, err := http.NewRequest(http.MethodGet, "http://"+s.Addr()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "1e-9")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body) // the body's end is written once the handler returned
	require.NoError(t, err)
	resp.Body.Close()
	select {
	case <-s.scraped:
		t.Fatal("a scrape its scraper gave up on ended the linger")
	default:
	}
	resp, err = http.Get("http://" + s.Addr() + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.True(t, <-done)
	assert.False(t, serve(t).Close(context.Background(), 0), "no linger: not scraped")
}

func TestDelivered(t *testing.T) {
	req := func(timeout string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, "http://x/metrics", nil)
		require.NoError(t, err)
		if timeout != "" {
			r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
		}
		return r
	}
	assert.True(t, delivered(req(""), time.Hour), "no stated timeout")
	assert.True(t, delivered(req("0.9"), 100*time.Millisecond))
	assert.False(t, delivered(req("0.9"), time.Second))
	assert.True(t, delivered(req("junk"), time.Second), "an unreadable timeout is not trusted to refuse")
	assert.True(t, delivered(req("-1"), time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, delivered(req("").WithContext(ctx), 0), "the scraper hung up")
}

// TestPrometheusScrapesTheCounts: Debian's Prometheus, scraping the
// endpoint, answers the completed count through its query API.
func TestPrometheusScrapesTheCounts(t *testing.T) {
	s := serve(t)
	prom := promtest.Start(t, s.Addr())
	feed(s, 42, "Timeout")
	fed := time.Now()
	got := prom.WaitScraped(t, `aiperf_requests_completed_total{run="demo",cell="concurrency_4",phase="profiling"}`, fed)
	require.Len(t, got, 1)
	assert.Equal(t, 42.0, got[0].Value)
	assert.Equal(t, "1", got[0].Labels["trial"])
}

// BenchmarkRecord is the finisher's cost per record of the live endpoint.
func BenchmarkRecord(b *testing.B) {
	ln, err := Listen("127.0.0.1:0")
	require.NoError(b, err)
	s := Serve(ln, Options{Streaming: true})
	defer s.Close(context.Background(), 0)
	r := &metrics.Record{Phase: "profiling", OutputTokens: 4, ResponseNs: metrics.StampsOf(50e6, 60e6, 70e6, 80e6)}
	b.ReportAllocs()
	for b.Loop() {
		s.Record(r)
	}
}

// A phase's counters and histograms are served at 0 from the start, so
// that rate() over a phase that has completed nothing is 0, not no data.
func TestPhasesServedAtZero(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	s := Serve(ln, Options{Labels: Labels{Run: "r", Cell: "c", Trial: "1"}, Streaming: true, Phases: []string{"warmup", "profiling"}})
	t.Cleanup(func() { s.Close(context.Background(), 0) })
	fams := scraped(t, s)
	for _, name := range []string{"aiperf_requests_completed_total", "aiperf_requests_cancelled_total",
		"aiperf_request_latency_seconds", "aiperf_time_to_first_token_seconds", "aiperf_inter_token_latency_seconds"} {
		for _, ph := range []string{"warmup", "profiling"} {
			v, ok := valueOf(fams, name, map[string]string{"phase": ph})
			assert.True(t, ok, "%s{phase=%s}", name, ph)
			assert.Zero(t, v)
		}
	}
}

// Once the run has ended, the achieved rate is the phase's: its completions
// over the time from its start to its last request's end, not a rate that
// falls while the last scrape is awaited.
func TestAchievedRateStopsWithTheRun(t *testing.T) {
	s := serve(t)
	ph := &plan.Phase{Name: "profiling", Kind: plan.KindProfiling}
	pr := &load.Progress{Phase: ph}
	pr.Sent.Store(10)
	pr.Done.Store(10)
	s.Watch(func() *load.Progress { return pr }, load.NewClock())
	for i := range 10 {
		s.Record(&metrics.Record{Phase: "profiling", PhaseKind: plan.KindProfiling, EndNs: int64(i+1) * 1e8}) // the last at 1 s
	}
	done := make(chan bool)
	go func() { done <- s.Close(context.Background(), time.Hour) }()
	for !s.ended.Load() {
		time.Sleep(time.Millisecond)
	}
	v, ok := valueOf(scraped(t, s), "aiperf_request_rate_achieved", map[string]string{"phase": "profiling"})
	assert.True(t, <-done)
	require.True(t, ok)
	assert.InDelta(t, 10.0, v, 1e-9, "10 requests in the 1 s to the last one's end")
}
