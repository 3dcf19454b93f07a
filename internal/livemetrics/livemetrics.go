// Package livemetrics serves a run's live client metrics in Prometheus
// format (--metrics-listen, an extension of AIPerf): requests sent, in
// flight, completed and failed by error type, TTFT, ITL and latency
// histograms, achieved and target rate and the phase under way, every
// series labelled by run, cell and trial (constant) and phase, with the
// official Go client library.
//
// Record runs on the finisher's goroutine and only updates lock-free
// counters; the phase's live counters are read at scrape time. After the
// run, Close keeps serving until one more scrape has read the final counts
// (at most a linger), so the run's last requests reach Prometheus.
package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// Labels are the constant labels of every series.
type Labels struct {
	Run, Cell, Trial string
}

// Options configure a Server.
type Options struct {
	Labels    Labels
	Streaming bool // TTFT and ITL are observed only for a streaming run
	// Info are the labels of aiperf_run_info (model, endpoint type, ...).
	Info map[string]string
	// Phases are the run's phase names: their counters and histograms are
	// served from the start, at 0, so that a rate() of a phase that has
	// completed nothing (or only failed) is 0, not "no data".
	Phases []string
}

// Buckets of the timing histograms, in seconds: 1 ms to about 2 min.
var timeBuckets = prometheus.ExponentialBuckets(0.001, 2, 18)

// Server serves the live metrics. It implements bench.Exporter.
type Server struct {
	ln  net.Listener
	srv *http.Server

	completed, cancelled *prometheus.CounterVec
	errors               *prometheus.CounterVec
	ttft, itl, latency   *prometheus.HistogramVec
	progress             atomic.Pointer[func() *load.Progress]
	clock                atomic.Pointer[load.Clock]
	streaming            bool

	ended    atomic.Bool
	lastEnd  atomic.Int64  // the latest record's end, on the run's clock
	scraped  chan struct{} // closed by the first scrape served after the end
	once     sync.Once
	shutdown sync.Once
}

// Listen binds addr: a run refuses a taken address before any traffic.
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves the metrics on ln (see Listen) until Close.
func Serve(ln net.Listener, o Options) *Server {
	s := &Server{ln: ln, streaming: o.Streaming, scraped: make(chan struct{})}
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels{"run": o.Labels.Run, "cell": o.Labels.Cell,
		"trial": o.Labels.Trial}, reg)
	s.completed = counter(r, "aiperf_requests_completed_total", "Requests that completed successfully.", "phase")
	s.cancelled = counter(r, "aiperf_requests_cancelled_total", "Requests cut before they ended.", "phase")
	s.errors = counter(r, "aiperf_request_errors_total", "Requests that failed, by error type.", "phase", "error_type")
	s.ttft = histogram(r, "aiperf_time_to_first_token_seconds", "Time to first token of streamed requests.")
	s.itl = histogram(r, "aiperf_inter_token_latency_seconds", "Inter-token latency of streamed requests.")
	s.latency = histogram(r, "aiperf_request_latency_seconds", "Request latency of successful requests.")
	for _, ph := range o.Phases {
		s.completed.WithLabelValues(ph)
		s.cancelled.WithLabelValues(ph)
		s.latency.WithLabelValues(ph)
		if s.streaming {
			s.ttft.WithLabelValues(ph)
			s.itl.WithLabelValues(ph)
		}
	}
	r.MustRegister(&phaseCollector{s: s})
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "aiperf_run_info", Help: "The run's settings, as labels.",
		ConstLabels: o.Info})
	info.Set(1)
	r.MustRegister(info)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, req *http.Request) {
		final := s.ended.Load()
		start := time.Now()
		h.ServeHTTP(w, req)
		if final && delivered(req, time.Since(start)) {
			s.once.Do(func() { close(s.scraped) })
		}
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

func counter(r prometheus.Registerer, name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	r.MustRegister(c)
	return c
}

func histogram(r prometheus.Registerer, name, help string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: timeBuckets},
		[]string{"phase"})
	r.MustRegister(h)
	return h
}

// Addr is the address served.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Watch keeps the phase's live counters, read at each scrape.
func (s *Server) Watch(progress func() *load.Progress, clock load.Clock) {
	s.progress.Store(&progress)
	s.clock.Store(&clock)
}

// Record counts a finished record.
func (s *Server) Record(r *metrics.Record) {
	for end := s.lastEnd.Load(); r.EndNs > end && !s.lastEnd.CompareAndSwap(end, r.EndNs); end = s.lastEnd.Load() {
	}
	switch {
	case r.Cancelled:
		s.cancelled.WithLabelValues(r.Phase).Inc()
	case r.Error != nil:
		t := r.Error.Type
		if t == "" {
			t = "unknown"
		}
		s.errors.WithLabelValues(r.Phase, t).Inc()
	default:
		s.completed.WithLabelValues(r.Phase).Inc()
		tt := metrics.Times(r, s.streaming)
		s.latency.WithLabelValues(r.Phase).Observe(float64(tt.LatencyNs) / 1e9)
		if tt.Streamed && !r.NoTokens {
			s.ttft.WithLabelValues(r.Phase).Observe(float64(tt.TTFTNs) / 1e9)
			if tt.HasITL {
				s.itl.WithLabelValues(r.Phase).Observe(tt.ITLNs / 1e9)
			}
		}
	}
}

// Close ends the run: it keeps serving until one scrape has read the
// final counts or linger passed (or ctx ended), then stops. It reports
// whether the final counts were scraped.
func (s *Server) Close(ctx context.Context, linger time.Duration) bool {
	s.ended.Store(true)
	scraped := false
	if linger > 0 {
		t := time.NewTimer(linger)
		select {
		case <-s.scraped:
			scraped = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.shutdown.Do(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = s.srv.Close()
		}
	})
	return scraped
}

// delivered reports whether the scraper still wanted the answer it was
// served: its connection is open and, when it said how long it waits
// (Prometheus's X-Prometheus-Scrape-Timeout-Seconds), serving took less.
// A scrape the scraper gave up on must not end the linger: the final
// counts would never reach it.
func delivered(req *http.Request, took time.Duration) bool {
	if req.Context().Err() != nil {
		return false
	}
	v := req.Header.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return true
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || !(secs > 0) || math.IsInf(secs, 1) {
		return true
	}
	return took < time.Duration(secs*float64(time.Second))
}

// phaseCollector reads the phase's live counters at scrape time: sent, in
// flight, achieved and target rate, and which phase is under way.
type phaseCollector struct{ s *Server }

var (
	sentDesc     = prometheus.NewDesc("aiperf_requests_sent_total", "Requests sent in the phase.", []string{"phase"}, nil)
	inFlightDesc = prometheus.NewDesc("aiperf_requests_in_flight", "Requests in flight in the phase.", []string{"phase"}, nil)
	achievedDesc = prometheus.NewDesc("aiperf_request_rate_achieved", "Requests completed per second since the phase began (once the run ended, until its last request ended).",
		[]string{"phase"}, nil)
	targetDesc = prometheus.NewDesc("aiperf_request_rate_target", "The phase's target rate in requests/s (0: concurrency mode).",
		[]string{"phase"}, nil)
	phaseDesc = prometheus.NewDesc("aiperf_phase", "1 for the phase under way (kind: warmup or profiling).",
		[]string{"phase", "kind"}, nil)
)

func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sentDesc, inFlightDesc, achievedDesc, targetDesc, phaseDesc} {
		ch <- d
	}
}

func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.s.progress.Load()
	if p == nil {
		return
	}
	pr := (*p)()
	if pr == nil || pr.Phase == nil {
		return
	}
	name := pr.Phase.Name
	sent, done := pr.Sent.Load(), pr.Done.Load()
	ch <- prometheus.MustNewConstMetric(sentDesc, prometheus.CounterValue, float64(sent), name)
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(sent-done), name)
	if clk := c.s.clock.Load(); clk != nil {
		until := clk.Now()
		if c.s.ended.Load() { // the rate the phase achieved, not one falling while the last scrape is awaited
			until = c.s.lastEnd.Load()
		}
		switch elapsed := float64(until-pr.StartNs) / 1e9; {
		case elapsed > 0:
			ch <- prometheus.MustNewConstMetric(achievedDesc, prometheus.GaugeValue, float64(done)/elapsed, name)
		case c.s.ended.Load(): // the last phase ended nothing
			ch <- prometheus.MustNewConstMetric(achievedDesc, prometheus.GaugeValue, 0, name)
		}
	}
	ch <- prometheus.MustNewConstMetric(targetDesc, prometheus.GaugeValue, pr.Phase.Rate, name)
	ch <- prometheus.MustNewConstMetric(phaseDesc, prometheus.GaugeValue, 1, name, pr.Phase.Kind)
}
