package mock

import (
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Histogram bucket upper bounds of vLLM's Prometheus logger
// (vllm/v1/metrics/loggers.py), in seconds.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// The finish reasons of vllm:request_success_total; abort is a client
// that went away.
var finishReasons = [...]string{"stop", "length", "abort"}

// engineMetrics is what GET /metrics reports besides the live gauges:
// counters since the server started (never reset, as Prometheus counters
// must not be) and latency histograms.
type engineMetrics struct {
	promptTokens     atomic.Uint64 // of requests that produced a first token
	generationTokens atomic.Uint64 // tokens sent
	cacheQueries     atomic.Uint64 // prompt tokens looked up in the prefix cache
	cacheHits        atomic.Uint64 // of them, cached
	// Speculative decoding of the complete replies (--spec-decode-stats).
	specAccepted, specDraftTokens, specDrafts atomic.Uint64
	finished                                  [len(finishReasons)]atomic.Uint64

	ttft, itl, e2e, queue *histogram
}

func newEngineMetrics() *engineMetrics {
	return &engineMetrics{ttft: newHistogram(ttftBuckets), itl: newHistogram(itlBuckets),
		e2e: newHistogram(requestLatencyBuckets), queue: newHistogram(requestLatencyBuckets)}
}

// finish counts a finished request by reason ("stop", "length" or "abort").
func (m *engineMetrics) finish(reason string) {
	for i, r := range finishReasons {
		if r == reason {
			m.finished[i].Add(1)
		}
	}
}

// histogram is a Prometheus histogram of seconds.
type histogram struct {
	bounds []float64

	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is above every bound
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// observe records n observations of v seconds.
func (h *histogram) observe(v float64, n uint64) {
	i := sort.SearchFloat64s(h.bounds, v) // the first bound >= v: Prometheus's le
	h.mu.Lock()
	h.counts[i] += n
	h.sum += v * float64(n)
	h.mu.Unlock()
}

// add merges a request's inter-token latencies into h.
func (h *histogram) add(l *itlCounts) {
	if l.n == 0 {
		return
	}
	h.mu.Lock()
	for i, c := range l.counts {
		h.counts[i] += c
	}
	h.sum += l.sum
	h.mu.Unlock()
}

// itlCounts gathers one request's inter-token latencies without locking,
// merged into the shared histogram when the request ends.
type itlCounts struct {
	counts [20]uint64 // len(itlBuckets)+1
	sum    float64
	n      uint64
}

func (l *itlCounts) observe(v float64, n uint64) {
	l.counts[sort.SearchFloat64s(itlBuckets, v)] += n
	l.sum += v * float64(n)
	l.n += n
}

// exposition writes the Prometheus text format (version 0.0.4) the way
// vLLM's Python client does: # HELP and # TYPE lines, labels in vLLM's
// order, counters named with their _total suffix, floats as Python prints
// them.
type exposition struct {
	b      strings.Builder
	labels string // model_name="...",engine="0"
}

func (e *exposition) header(name, typ, help string) {
	e.b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

func (e *exposition) sample(name, extra string, v float64) {
	e.b.WriteString(name + "{" + e.labels + extra + "} " + pyFloat(v) + "\n")
}

func (e *exposition) gauge(name, help string, v float64) {
	e.header(name, "gauge", help)
	e.sample(name, "", v)
}

func (e *exposition) counter(name, help string, v uint64) {
	e.header(name, "counter", help)
	e.sample(name, "", float64(v))
}

func (e *exposition) histogram(name, help string, h *histogram) {
	h.mu.Lock()
	counts, sum := append([]uint64(nil), h.counts...), h.sum
	h.mu.Unlock()
	e.header(name, "histogram", help)
	var cum uint64
	for i, c := range counts {
		cum += c
		le := math.Inf(1)
		if i < len(h.bounds) {
			le = h.bounds[i]
		}
		e.sample(name+"_bucket", `,le="`+pyFloat(le)+`"`, float64(cum))
	}
	e.sample(name+"_count", "", float64(cum))
	e.sample(name+"_sum", "", sum)
}

// pyFloat formats v as Python's repr does for the values vLLM exports
// ("3.0", "0.25", "+Inf").
func pyFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

// labelValue escapes a Prometheus label value.
func labelValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// serveMetrics answers GET /metrics with vLLM's metric names.
func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	m := s.metrics
	running, waiting := s.sched.counts()
	e := &exposition{labels: `model_name="` + labelValue(s.cfg.Model) + `",engine="0"`}
	e.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(running))
	e.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(waiting))
	e.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.kvUsage())
	e.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", m.cacheQueries.Load())
	e.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", m.cacheHits.Load())
	e.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", 0)
	e.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", m.promptTokens.Load())
	e.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", m.generationTokens.Load())
	if s.cfg.SpecDecodeStats {
		e.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", m.specDrafts.Load())
		e.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", m.specDraftTokens.Load())
		e.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", m.specAccepted.Load())
	}
	e.header("vllm:request_success_total", "counter", "Count of successfully processed requests.")
	for i, reason := range finishReasons {
		e.sample("vllm:request_success_total", `,finished_reason="`+reason+`"`, float64(m.finished[i].Load()))
	}
	e.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.ttft)
	e.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m.itl)
	e.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.e2e)
	e.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", m.queue)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(e.b.String()))
}
