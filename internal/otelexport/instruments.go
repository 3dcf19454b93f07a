package otelexport

import (
	"context"
	"slices"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
)

// The metric names: the GenAI semantic conventions' client metrics, and
// AIPerf's timing counters.
const (
	MetricDuration       = "gen_ai.client.operation.duration"
	MetricTokenUsage     = "gen_ai.client.token.usage"
	MetricTimeToFirst    = "gen_ai.client.operation.time_to_first_chunk"
	MetricTimePerChunk   = "gen_ai.client.operation.time_per_output_chunk"
	MetricTimingRequests = "aiperf.timing.requests"
	MetricTimingSent     = "aiperf.timing.sent"
	MetricTimingInFlight = "aiperf.timing.in_flight"
)

// The conventions' explicit bucket boundaries: seconds for the three
// timings, tokens for the usage.
var (
	secondBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	tokenBuckets  = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// instruments are the SDK's instruments and the attribute sets already
// built, by record kind (only the exporter's goroutine touches them).
type instruments struct {
	o                                      Options
	duration, tokens, firstChunk, perChunk metric.Float64Histogram
	requests                               metric.Int64Counter
	sets                                   map[setKey]sets
	base                                   []attribute.KeyValue
}

// setKey is what the attributes of a record depend on.
type setKey struct {
	phase, kind, model, errType string
	url                         int
	outcome                     string
}

// sets are the attribute sets of one setKey: the record's, and with
// gen_ai.token.type input and output.
type sets struct {
	point, input, output metric.MeasurementOption
}

func newInstruments(m metric.Meter, o Options, progress func() *load.Progress) (instruments, error) {
	in := instruments{o: o, sets: map[setKey]sets{}}
	in.base = []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", o.Operation),
		attribute.String("gen_ai.provider.name", o.Provider),
	}
	for k, v := range o.Labels {
		in.base = append(in.base, attribute.String("aiperf."+k, v))
	}
	var err error
	if o.Metrics {
		if in.duration, err = m.Float64Histogram(MetricDuration, metric.WithUnit("s"),
			metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(secondBuckets...)); err != nil {
			return in, err
		}
		if in.tokens, err = m.Float64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
			metric.WithDescription("Number of input and output tokens used."),
			metric.WithExplicitBucketBoundaries(tokenBuckets...)); err != nil {
			return in, err
		}
		if in.firstChunk, err = m.Float64Histogram(MetricTimeToFirst, metric.WithUnit("s"),
			metric.WithDescription("Time to receive the first chunk of the response stream."),
			metric.WithExplicitBucketBoundaries(secondBuckets...)); err != nil {
			return in, err
		}
		if in.perChunk, err = m.Float64Histogram(MetricTimePerChunk, metric.WithUnit("s"),
			metric.WithDescription("Time per output chunk, for each chunk after the first."),
			metric.WithExplicitBucketBoundaries(secondBuckets...)); err != nil {
			return in, err
		}
	}
	if o.Timing {
		if err = in.timing(m, progress); err != nil {
			return in, err
		}
	}
	return in, nil
}

// timing makes the aiperf.timing.* counters: the finished requests by
// outcome (from the records) and the phase's sends and requests in flight
// (read from its live counters at each export).
func (in *instruments) timing(m metric.Meter, progress func() *load.Progress) error {
	var err error
	if in.requests, err = m.Int64Counter(MetricTimingRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Requests finished, by phase and outcome (success, error, cancelled).")); err != nil {
		return err
	}
	sent, err := m.Int64ObservableCounter(MetricTimingSent, metric.WithUnit("{request}"),
		metric.WithDescription("Requests sent in the phase under way."))
	if err != nil {
		return err
	}
	inFlight, err := m.Int64ObservableGauge(MetricTimingInFlight, metric.WithUnit("{request}"),
		metric.WithDescription("Requests in flight in the phase under way."))
	if err != nil {
		return err
	}
	_, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		pr := progress()
		if pr == nil || pr.Phase == nil {
			return nil
		}
		attrs := metric.WithAttributes(append(in.base[:len(in.base):len(in.base)],
			attribute.String("aiperf.phase", pr.Phase.Name), attribute.String("aiperf.phase_kind", pr.Phase.Kind))...)
		s, d := pr.Sent.Load(), pr.Done.Load()
		obs.ObserveInt64(sent, s, attrs)
		obs.ObserveInt64(inFlight, s-d, attrs)
		return nil
	}, sent, inFlight)
	return err
}

// record records one finished record.
func (in *instruments) record(ctx context.Context, r *metrics.Record) {
	k := setKey{phase: r.Phase, kind: r.PhaseKind, model: r.Model, url: r.URL, outcome: "success"}
	switch {
	case r.Cancelled:
		k.outcome = "cancelled"
	case r.Error != nil:
		k.outcome, k.errType = "error", errorType(r)
	}
	s := in.setsOf(k)
	if in.requests != nil {
		in.requests.Add(ctx, 1, s.point)
	}
	if in.duration == nil || r.Cancelled {
		return // a cut request has no duration: it did not end
	}
	if r.Error != nil {
		in.duration.Record(ctx, float64(r.EndNs-r.SentNs)/1e9, s.point)
		return
	}
	tt := metrics.Times(r, in.o.Streaming)
	in.duration.Record(ctx, float64(tt.LatencyNs)/1e9, s.point)
	in.tokens.Record(ctx, float64(r.InputTokens), s.input)
	if !r.NoTokens && !tt.NoOSL { // an uncounted reply's OSL is not known, not 0
		in.tokens.Record(ctx, float64(tt.OSL), s.output)
	}
	if tt.Streamed && !r.NoTokens {
		in.firstChunk.Record(ctx, float64(tt.TTFTNs)/1e9, s.point)
		r.ResponseNs.Gaps(func(ns int64) { in.perChunk.Record(ctx, float64(ns)/1e9, s.point) })
	}
}

// setsOf returns (building once) the attribute sets of k.
func (in *instruments) setsOf(k setKey) sets {
	if s, ok := in.sets[k]; ok {
		return s
	}
	attrs := append(in.base[:len(in.base):len(in.base)],
		attribute.String("gen_ai.request.model", k.model),
		attribute.String("aiperf.phase", k.phase),
		attribute.String("aiperf.phase_kind", k.kind))
	if k.url >= 0 && k.url < len(in.o.Servers) {
		sv := in.o.Servers[k.url]
		attrs = append(attrs, attribute.String("server.address", sv.Address), attribute.Int("server.port", sv.Port))
	}
	if k.errType != "" {
		attrs = append(attrs, attribute.String("error.type", k.errType))
	}
	if in.requests != nil {
		attrs = append(attrs, attribute.String("aiperf.outcome", k.outcome))
	}
	// attribute.NewSet sorts the slice it is given in place: each set gets
	// its own copy, or one would reorder (and the next append overwrite)
	// the attributes of another.
	with := func(kv ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(slices.Concat(attrs, kv)...)
	}
	s := sets{
		point:  metric.WithAttributeSet(with()),
		input:  metric.WithAttributeSet(with(attribute.String("gen_ai.token.type", "input"))),
		output: metric.WithAttributeSet(with(attribute.String("gen_ai.token.type", "output"))),
	}
	in.sets[k] = s
	return s
}

// errorType is the error.type of a failed record: the HTTP status the
// server answered with, else the failure's class (Timeout,
// ConnectionError, ...).
func errorType(r *metrics.Record) string {
	if r.Error.Code != 0 {
		return strconv.Itoa(r.Error.Code)
	}
	if r.Error.Type != "" {
		return r.Error.Type
	}
	return "_OTHER"
}
