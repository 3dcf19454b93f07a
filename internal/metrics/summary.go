package metrics

// Stats is the distribution of one record metric, as AIPerf exports it:
// numpy linear-interpolated percentiles and population std.
type Stats struct {
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
}

// Metric is one summary row. A record metric has Stats; a derived or
// aggregate metric (request_throughput, request_count, ...) has only Value.
type Metric struct {
	Tag    string  `json:"tag"`    // AIPerf tag, e.g. "time_to_first_token"
	Header string  `json:"header"` // display name, e.g. "Time to First Token"
	Unit   string  `json:"unit"`   // display unit, e.g. "ms"
	Value  float64 `json:"value"`
	Stats  *Stats  `json:"stats,omitempty"`
}

// Summary is the reduction of a run's records: metrics in display order.
type Summary struct {
	Metrics []Metric `json:"metrics"`
	// SpecDecodeHistogram pools the requests' accepted-draft histograms:
	// verify steps by the number of draft tokens they accepted (AIPerf's
	// pooled_spec_decode_acceptance_histogram); nil when the server
	// reported no speculative decoding.
	SpecDecodeHistogram map[string]int `json:"spec_decode_histogram,omitempty"`
	// Dropped are the record metrics left out because a statistic of
	// theirs is not a finite number (values summing past float64, as a
	// server's absurd figures can): no export could hold them.
	Dropped []string `json:"-"`
}

// Get returns the metric with the given tag.
func (s Summary) Get(tag string) (Metric, bool) {
	for _, m := range s.Metrics {
		if m.Tag == tag {
			return m, true
		}
	}
	return Metric{}, false
}

// ErrorCount is one line of the error summary: identical errors counted.
type ErrorCount struct {
	Error Error `json:"error_details"`
	Count int   `json:"count"`
}
