// Package servermetrics collects the inference server's own account of a
// run: it scrapes Prometheus endpoints (the server's /metrics, a DCGM
// exporter's GPU telemetry) while the load runs, with one scrape right
// before and right after each profiling phase, and reduces every series
// per phase: gauges to statistics over time, counters to their delta and
// rate, histograms to the delta of their count and sum and quantiles
// estimated from the bucket deltas.
package servermetrics

import "time"

// Sources of series.
const (
	SourceServer = "server" // an inference server's /metrics (--url origins, --server-metrics)
	SourceGPU    = "gpu"    // a DCGM exporter (--gpu-telemetry)
)

// Metric types, as Prometheus declares them.
const (
	TypeGauge     = "gauge"
	TypeCounter   = "counter"
	TypeHistogram = "histogram"
	TypeSummary   = "summary"
	TypeUnknown   = "unknown"
)

// Result is what the scrapes of one run say, reduced.
type Result struct {
	// Endpoints lists every scraped endpoint and how its scrapes went.
	Endpoints []Endpoint `json:"endpoints"`
	// Series holds one entry per source, endpoint, metric, label set and
	// phase, in a stable order (source, endpoint, metric, labels, phase).
	Series []Series `json:"series"`
	// Warnings are the problems worth a line on the console: an endpoint
	// that 404s, times out or returns what is not Prometheus text.
	Warnings []string `json:"warnings,omitempty"`
}

// Endpoint is one scraped URL.
type Endpoint struct {
	URL      string        `json:"url"` // redacted
	Source   string        `json:"source"`
	Scrapes  int           `json:"scrapes"`
	Failures int           `json:"failures"`
	Interval time.Duration `json:"interval_ns"`
	// LastError is the last failure, when there was one.
	LastError string `json:"last_error,omitempty"`
}

// Series is one series reduced over one phase.
type Series struct {
	Source   string            `json:"source"`
	Endpoint string            `json:"endpoint"`
	Metric   string            `json:"metric"` // the family name, e.g. vllm:num_requests_running
	Labels   map[string]string `json:"labels,omitempty"`
	Type     string            `json:"type"`
	Phase    string            `json:"phase"` // the phase the statistics cover
	// Stats are the reduced values: for a gauge avg, min, max, std, p50,
	// p90, p99 (over its samples in the phase); for a counter delta and
	// rate (per second); for a histogram count, sum, avg, p50, p90, p95,
	// p99 (from the deltas of its buckets).
	Stats map[string]float64 `json:"stats"`
	// Unit and Friendly name the series for people when its family is
	// known (vLLM, SGLang, TensorRT-LLM, Dynamo, llama.cpp, DCGM).
	Unit     string `json:"unit,omitempty"`
	Friendly string `json:"friendly,omitempty"`
}
