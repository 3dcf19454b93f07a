package otelexport

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/aiperf-go/aiperf/internal/load"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// Defaults of the Options left zero.
const (
	DefaultInterval = 5 * time.Second  // between exports
	DefaultTimeout  = 10 * time.Second // of one export
	DefaultQueue    = 1 << 16          // records waiting to be recorded
)

// Options configure an Exporter.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP metrics URL
	// (plan.Profile.OtelMetricsURL); its userinfo, if any, is sent as
	// Basic authentication. $OTEL_EXPORTER_OTLP_HEADERS adds headers.
	Endpoint string
	// Metrics streams the gen_ai.client.* histograms, Timing the
	// aiperf.timing.* counters (AIPerf's --stream domains).
	Metrics, Timing bool
	// Resource holds extra resource attributes (--otel-resource-attributes).
	Resource map[string]string
	// Provider and Operation are gen_ai.provider.name and
	// gen_ai.operation.name of every point.
	Provider, Operation string
	// Streaming: the run streams (time to first chunk and per output chunk
	// are recorded only then, as the conventions say).
	Streaming bool
	// Servers are server.address and server.port of each --url, by the
	// records' URL index.
	Servers []Server
	// Labels are the aiperf.* dimensions of every point (benchmark_id,
	// sweep, cell, trial, ...), without the prefix.
	Labels map[string]string
	// Version is service.version.
	Version string
	// Interval between exports (0: $OTEL_METRIC_EXPORT_INTERVAL, else
	// DefaultInterval), Timeout of one (0: DefaultTimeout), Queue the
	// records that may wait (0: DefaultQueue).
	Interval, Timeout time.Duration
	Queue             int
	// Warn receives the one warning of an unreachable collector (nil:
	// none); Redact cleans every message first (nil: as is).
	Warn   func(string)
	Redact func(string) string
}

// Server is a --url's server.address and server.port.
type Server struct {
	Address string
	Port    int
}

// Report is what an Exporter did.
type Report struct {
	Endpoint string `json:"endpoint"` // credentials redacted
	// Recorded records went into the instruments; Dropped found the queue
	// full and were not.
	Recorded int64 `json:"recorded"`
	Dropped  int64 `json:"dropped"`
	// Exports were attempted, Failed of them were not accepted by the
	// collector (not reached, refused, cut), the last with LastError, worded
	// by what it was (its HTTP status and Retry-After, TLS, refused, no
	// answer in time, the run's interrupt). Partial of them were accepted
	// with some data points rejected (a partial success): delivered, not
	// failed. Delivered says the final one was accepted, so the collector
	// holds every recorded point but the Rejected ones that export's
	// partial success rejected (Partial's last word in LastRejection).
	Exports       int64  `json:"exports"`
	Failed        int64  `json:"failed"`
	LastError     string `json:"last_error,omitempty"`
	Partial       int64  `json:"partial,omitempty"`
	Rejected      int64  `json:"rejected,omitempty"`
	LastRejection string `json:"last_rejection,omitempty"`
	Delivered     bool   `json:"delivered"`
}

// OK reports whether the collector holds every recorded point: the final
// export was accepted whole and nothing was dropped.
func (r Report) OK() bool { return r.Delivered && r.Dropped == 0 && r.Rejected == 0 }

// Detail is the report in a line, for the run's record of where it went.
func (r Report) Detail() string {
	s := fmt.Sprintf("%d records, %d dropped, %d of %d exports failed", r.Recorded, r.Dropped, r.Failed, r.Exports)
	if r.Partial > 0 {
		s += fmt.Sprintf(", %d accepted with data points rejected", r.Partial)
	}
	if r.Delivered && r.Rejected > 0 {
		s += fmt.Sprintf(" (the last rejected %d: %s)", r.Rejected, r.LastRejection)
	}
	if r.LastError != "" {
		s += ": " + r.LastError
	}
	return s
}

// Exporter streams a run's records to a collector. It implements
// bench.Exporter.
type Exporter struct {
	o        Options
	endpoint string // redacted
	provider *sdkmetric.MeterProvider
	inst     instruments
	queue    chan *metrics.Record
	done     chan struct{}
	progress atomic.Pointer[func() *load.Progress]

	recorded, dropped atomic.Int64
	exports, failed   atomic.Int64
	warned, warnedPS  atomic.Bool
	closeCtx          atomic.Pointer[context.Context] // Close's: once it ends, the run was interrupted
	mu                sync.Mutex
	lastErr           error
	lastOK            bool
	partial, rejected int64 // exports accepted in part; points the last one rejected
	lastRejection     string
	closeOnce         sync.Once
}

// silenceSDK stops the SDK from logging export errors itself: the
// Exporter reports them (once, redacted).
var silenceSDK sync.Once

// New starts an exporter. It fails only on options that cannot work (a
// malformed endpoint, a malformed $OTEL_EXPORTER_OTLP_HEADERS entry: see
// CheckEnvHeaders), before anything is sent; a collector that does not
// answer is found later, and warned about once.
func New(o Options) (*Exporter, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("otel endpoint %q is not a URL", plan.RedactURL(o.Endpoint))
	}
	if err := CheckEnvHeaders(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	silenceSDK.Do(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	e := &Exporter{o: o, endpoint: plan.RedactURL(o.Endpoint), queue: make(chan *metrics.Record, o.Queue),
		done: make(chan struct{})}
	client, err := httpClient(o.Timeout)
	if err != nil {
		return nil, fmt.Errorf("start the otel exporter for %s: %w", e.endpoint, err)
	}
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithTimeout(o.Timeout),
		otlpmetrichttp.WithHTTPClient(client),
		// Cumulative points: a failed export is carried by the next one,
		// so retries would only hold the reader up.
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}),
	}
	if user := u.User; user != nil {
		pw, _ := user.Password()
		// WithHeaders replaces the environment's headers: they go along.
		opts = append(opts, otlpmetrichttp.WithHeaders(withAuthorization(sentEnvHeaders(), basicAuth(user.Username(), pw))))
		u.User = nil
	}
	opts = append(opts, otlpmetrichttp.WithEndpointURL(u.String()))
	exp, err := otlpmetrichttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("start the otel exporter for %s: %w", e.endpoint, err)
	}
	readerOpts := []sdkmetric.PeriodicReaderOption{sdkmetric.WithTimeout(o.Timeout)}
	if o.Interval > 0 {
		readerOpts = append(readerOpts, sdkmetric.WithInterval(o.Interval))
	} else if os.Getenv("OTEL_METRIC_EXPORT_INTERVAL") == "" {
		readerOpts = append(readerOpts, sdkmetric.WithInterval(DefaultInterval))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(resourceAttrs(o)...))
	if err != nil {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	e.provider = sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(&counting{Exporter: exp, e: e}, readerOpts...)))
	if e.inst, err = newInstruments(e.provider.Meter("github.com/aiperf-go/aiperf"), o, e.currentProgress); err != nil {
		_ = e.provider.Shutdown(context.Background())
		return nil, err
	}
	go e.run()
	return e, nil
}

func resourceAttrs(o Options) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("service.name", "aiperf")}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	for k, v := range o.Resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	return attrs
}

// Watch keeps the phase's live counters for the timing gauges.
func (e *Exporter) Watch(progress func() *load.Progress, _ load.Clock) { e.progress.Store(&progress) }

func (e *Exporter) currentProgress() *load.Progress {
	if p := e.progress.Load(); p != nil {
		return (*p)()
	}
	return nil
}

// Record queues a finished record; it never blocks: a full queue drops it
// (counted in Report.Dropped).
func (e *Exporter) Record(r *metrics.Record) {
	select {
	case e.queue <- r:
	default:
		e.dropped.Add(1)
	}
}

// run records the queued records into the instruments.
func (e *Exporter) run() {
	defer close(e.done)
	ctx := context.Background()
	for r := range e.queue {
		e.inst.record(ctx, r)
		e.recorded.Add(1)
	}
}

// Close records what is queued, exports it a last time (within ctx) and
// shuts the exporter down. It must be called once the run gave it its last
// record.
func (e *Exporter) Close(ctx context.Context) Report {
	e.closeOnce.Do(func() {
		e.closeCtx.Store(&ctx)
		close(e.queue)
		<-e.done
		ctx, cancel := context.WithTimeout(ctx, e.o.Timeout+time.Second)
		defer cancel()
		_ = e.provider.ForceFlush(ctx) // its export's outcome is counted by counting
		_ = e.provider.Shutdown(ctx)
	})
	rep := Report{Endpoint: e.endpoint, Recorded: e.recorded.Load(), Dropped: e.dropped.Load(),
		Exports: e.exports.Load(), Failed: e.failed.Load()}
	e.mu.Lock()
	if e.lastErr != nil {
		rep.LastError = e.o.Redact(e.lastErr.Error())
	}
	rep.Delivered, rep.Partial = e.lastOK, e.partial
	if e.lastOK {
		rep.Rejected, rep.LastRejection = e.rejected, e.o.Redact(e.lastRejection)
	}
	e.mu.Unlock()
	return rep
}

// exported notes the outcome of one export: the first failure is the one
// warning, and the first partial success another.
func (e *Exporter) exported(o outcome) {
	e.mu.Lock()
	e.lastOK = o.failure == nil
	e.rejected, e.lastRejection = o.rejected, o.message
	if o.failure != nil {
		e.lastErr = o.failure
	}
	if o.partial {
		e.partial++
	}
	e.mu.Unlock()
	switch {
	case o.failure != nil:
		e.failed.Add(1)
		tail := "metrics are not exported while it fails (the next export carries every point so far); the run goes on"
		if o.cut {
			tail = "the collector may lack the points of the run's last seconds"
		}
		if e.o.Warn != nil && e.warned.CompareAndSwap(false, true) {
			e.o.Warn(e.o.Redact(fmt.Sprintf("OpenTelemetry collector at %s: an export failed: %v; %s", e.endpoint, o.failure, tail)))
		}
	case o.partial && e.o.Warn != nil && e.warnedPS.CompareAndSwap(false, true):
		what := "some data points"
		if o.rejected > 0 {
			what = fmt.Sprintf("%d data points", o.rejected)
		}
		e.o.Warn(e.o.Redact(fmt.Sprintf("OpenTelemetry collector at %s accepted an export but rejected %s of it (%s); "+
			"the rest was delivered; the run goes on", e.endpoint, what, clip(cmp.Or(o.message, "no reason given"), 300))))
	}
}

// counting is the OTLP exporter, counting its exports and their outcome.
type counting struct {
	sdkmetric.Exporter
	e *Exporter
}

func (c *counting) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	a := &answer{}
	err := c.Exporter.Export(context.WithValue(ctx, answerKey{}, a), rm)
	a.late = a.late || err != nil && pastDeadline(ctx) // the reader's timeout, which says only that it was one
	c.e.exports.Add(1)
	c.e.exported(judge(err, a, c.e.interrupted(), c.e.o.Timeout, c.e.o.Redact))
	return err
}

// interrupted reports whether Close's context ended (the run's interrupt:
// its caller bounds the last export so), which is what cuts an export.
func (e *Exporter) interrupted() bool {
	p := e.closeCtx.Load()
	return p != nil && (*p).Err() != nil
}

func basicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}
