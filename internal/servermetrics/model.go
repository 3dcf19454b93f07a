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

// Statistics of a histogram beyond AIPerf's: the bounds of the bucket that
// holds its median, the resolution of p50_estimate. A +Inf upper bound is
// dropped with every non-finite statistic.
const (
	StatP50BucketLower = "p50_bucket_lower"
	StatP50BucketUpper = "p50_bucket_upper"
)

// PhaseSpan names the series that cover the whole profiling span when a run
// marked several profiling phases, or when it marked none (then the span is
// the whole collection).
const PhaseSpan = "profiling_span"

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

	// Phases are the marked windows, in the order they began.
	Phases []Phase `json:"phases,omitempty"`
	// Span is the phase whose series describe the whole profiling span:
	// the only profiling phase's name, or PhaseSpan.
	Span string `json:"span,omitempty"`
	// StartNs and EndNs bound the collection, on the run's clock.
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`

	// timeline keeps the retained samples for the time-series exports and
	// the reset evidence; only the collecting process has it (it is not
	// serialised).
	timeline *timeline
}

// Phase is one marked window on the run's clock.
type Phase struct {
	Name    string `json:"name"`
	BeginNs int64  `json:"begin_ns"`
	EndNs   int64  `json:"end_ns"`
}

// Endpoint is one scraped URL.
type Endpoint struct {
	URL      string        `json:"url"` // redacted
	Source   string        `json:"source"`
	Scrapes  int           `json:"scrapes"`  // successful scrapes
	Failures int           `json:"failures"` // failed scrapes
	Interval time.Duration `json:"interval_ns"`
	// LastError is the last failure, when there was one.
	LastError string `json:"last_error,omitempty"`

	// FirstNs and LastNs are the first and last successful scrapes, on the
	// run's clock; AvgLatencyMs is the mean time a scrape took.
	FirstNs      int64   `json:"first_ns,omitempty"`
	LastNs       int64   `json:"last_ns,omitempty"`
	AvgLatencyMs float64 `json:"avg_latency_ms,omitempty"`
	// Updates counts the scrapes whose body differed from the previous one.
	Updates int `json:"updates,omitempty"`
	// Retained is the number of scrapes kept in memory after thinning
	// (see the package documentation).
	Retained int `json:"retained,omitempty"`
}

// Series is one series reduced over one phase.
type Series struct {
	Source   string            `json:"source"`
	Endpoint string            `json:"endpoint"`
	Metric   string            `json:"metric"` // the family name, e.g. vllm:num_requests_running
	Labels   map[string]string `json:"labels,omitempty"`
	Type     string            `json:"type"`
	Phase    string            `json:"phase"` // the phase the statistics cover
	// Stats are the reduced values, keyed as AIPerf's server-metrics export
	// keys them:
	//   - gauge, unknown: avg, min, max, std (n−1), p1 … p99 (p1, p5, p10,
	//     p25, p50, p75, p90, p95, p99) over its samples in the phase, and
	//     StatTimeWeightedAvg (not AIPerf's: the exports leave it out), its
	//     average over time, when a scrape fell between the phase's edges;
	//   - counter: total (the increase, counter resets handled) and rate
	//     (total per second), plus rate_avg, rate_min, rate_max, rate_std
	//     over the complete time slices when slicing is on;
	//   - histogram: count, sum, avg, count_rate, sum_rate and p1_estimate …
	//     p99_estimate (from the deltas of its buckets), or only count
	//     (0) when it observed nothing;
	//   - summary: count, sum (deltas) and the last scrape's quantiles,
	//     keyed q0.5, q0.99, ….
	Stats map[string]float64 `json:"stats"`
	// Unit and Friendly name the series for people when its family is
	// known (vLLM, SGLang, TensorRT-LLM, Dynamo, llama.cpp, DCGM); Unit is
	// inferred from the name's suffix for the others, as AIPerf does.
	Unit     string `json:"unit,omitempty"`
	Friendly string `json:"friendly,omitempty"`
	// Description is the family's HELP text.
	Description string `json:"description,omitempty"`
	// Buckets are a histogram's bucket deltas over the phase: for each
	// upper bound, the observations at or below it (cumulative, as in
	// Prometheus), the last bound "+Inf".
	Buckets []Bucket `json:"buckets,omitempty"`
	// Timeslices are the statistics per time slice (--slice-duration).
	Timeslices []Timeslice `json:"timeslices,omitempty"`
	// Impossible says why the series cannot be what the server measured
	// (a counter that fell more than once in the run, a histogram whose
	// buckets contradict each other or its count, a negative sum): its
	// exporter is wrong. "" for a plausible series. The figures it makes
	// untrue (a counter's every stat; a histogram's sum, avg and
	// estimates) are moved from Stats (and left out of Timeslices) to
	// Refused, so that no export, store or comparison takes them as true.
	Impossible string `json:"impossible,omitempty"`
	// Refused are the stats taken out of Stats for Impossible, as they
	// were computed: the console shows them marked (!).
	Refused map[string]float64 `json:"refused,omitempty"`
}

// Bucket is a histogram bucket's delta count.
type Bucket struct {
	LE    string  `json:"le"` // upper bound as Prometheus writes it, e.g. "0.25", "+Inf"
	Count float64 `json:"count"`
}

// Timeslice is a series reduced over one fixed-length slice of its phase:
// avg, min, max for a gauge; total and rate for a counter; count, sum, avg
// and bucket deltas for a histogram.
type Timeslice struct {
	StartNs int64 `json:"start_ns"` // on the run's clock
	EndNs   int64 `json:"end_ns"`
	// Partial marks the last slice when the phase does not end on a slice
	// boundary.
	Partial bool               `json:"partial,omitempty"`
	Stats   map[string]float64 `json:"stats"`
	Buckets []Bucket           `json:"buckets,omitempty"`
}
