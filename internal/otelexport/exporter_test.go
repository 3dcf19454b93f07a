package otelexport

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/otelexport/otelcoltest"
)

// records makes n finished records of a streaming chat run: every fifth
// failed (HTTP 500), every seventh cut, the first two in warmup; the rest
// streamed 4 chunks 10 ms apart after a 50 ms first chunk.
func records(n int) []metrics.Record {
	out := make([]metrics.Record, n)
	for i := range out {
		r := metrics.Record{Index: i, Phase: "profiling", PhaseKind: "profiling", Model: "m1", Streaming: true,
			SentNs: int64(i) * 1e6, InputTokens: 100, OutputTokens: 4}
		if i < 2 {
			r.Phase, r.PhaseKind = "warmup", "warmup"
		}
		switch {
		case i%7 == 6:
			r.Cancelled, r.EndNs = true, r.SentNs+5e6
		case i%5 == 4:
			r.Error, r.Status, r.EndNs = &metrics.Error{Code: 500, Type: "HTTPError", Message: "boom"}, 500, r.SentNs+3e6
		default:
			r.ResponseNs = metrics.StampsOf(r.SentNs+50e6, r.SentNs+60e6, r.SentNs+70e6, r.SentNs+80e6)
			r.EndNs = r.SentNs + 81e6
		}
		out[i] = r
	}
	return out
}

func testOptions(url string) Options {
	return Options{Endpoint: url, Metrics: true, Timing: true, Provider: "vllm", Operation: "chat", Streaming: true,
		Servers: []Server{{"127.0.0.1", 8000}}, Labels: map[string]string{"benchmark_id": "b1", "cell": "concurrency_4"},
		Resource: map[string]string{"deployment.environment": "test"}, Version: "v-test", Interval: 50 * time.Millisecond}
}

// TestCollectorReceivesEveryRecord: the collector's own OTLP receiver gets
// one duration point per finished (not cut) request, with the GenAI
// attributes, the tokens, the first chunk of each streamed success and
// each later chunk's gap.
func TestCollectorReceivesEveryRecord(t *testing.T) {
	col := otelcoltest.Start(t)
	var warned []string
	o := testOptions(col.URL)
	o.Warn = func(s string) { warned = append(warned, s) }
	e, err := New(o)
	require.NoError(t, err)
	recs := records(100)
	var ok, failed, cut, profilingOK int
	for i := range recs {
		e.Record(&recs[i])
		switch r := recs[i]; {
		case r.Cancelled:
			cut++
		case r.Error != nil:
			failed++
		default:
			ok++
			if r.PhaseKind == "profiling" {
				profilingOK++
			}
		}
	}
	rep := e.Close(context.Background())
	assert.Empty(t, warned)
	assert.Equal(t, Report{Endpoint: col.URL, Recorded: 100, Exports: rep.Exports, Delivered: true}, rep)

	last := col.Last()
	genai := map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "vllm",
		"gen_ai.request.model": "m1", "server.address": "127.0.0.1", "server.port": "8000",
		"aiperf.benchmark_id": "b1", "aiperf.cell": "concurrency_4"}
	n, _ := otelcoltest.Points(last, MetricDuration, genai)
	assert.Equal(t, uint64(ok+failed), n, "one duration point per request that ended")
	n, _ = otelcoltest.Points(last, MetricDuration, map[string]string{"error.type": "500"})
	assert.Equal(t, uint64(failed), n)
	n, _ = otelcoltest.Points(last, MetricDuration, map[string]string{"aiperf.phase": "profiling", "aiperf.outcome": "success"})
	assert.Equal(t, uint64(profilingOK), n)
	for _, typ := range []string{"input", "output"} { // each with the server's address and port
		want := maps.Clone(genai)
		want["gen_ai.token.type"] = typ
		n, _ = otelcoltest.Points(last, MetricTokenUsage, want)
		assert.Equal(t, uint64(ok), n, typ)
	}
	n, _ = otelcoltest.Points(last, MetricTimeToFirst, genai)
	assert.Equal(t, uint64(ok), n)
	n, _ = otelcoltest.Points(last, MetricTimePerChunk, genai)
	assert.Equal(t, uint64(3*ok), n, "each chunk after the first")
	_, v := otelcoltest.Points(last, MetricTimingRequests, map[string]string{"aiperf.outcome": "cancelled"})
	assert.Equal(t, int64(cut), v)
	_, v = otelcoltest.Points(last, MetricTimingRequests, nil)
	assert.Equal(t, int64(100), v)
	for _, p := range last {
		assert.Equal(t, "aiperf", p.Res["service.name"])
		assert.Equal(t, "test", p.Res["deployment.environment"])
	}
	var sum float64
	for _, p := range last {
		if p.Metric == MetricTimeToFirst {
			sum += p.Sum
		}
	}
	assert.InDelta(t, 0.05*float64(ok), sum, 1e-9, "seconds")
}

// TestUnreachableCollectorIsOneWarning: a collector that refuses every
// connection costs one warning and no error; the report says nothing was
// delivered.
func TestUnreachableCollectorIsOneWarning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	var mu sync.Mutex
	var warned []string
	o := testOptions("http://user:s3cret@" + addr + "/v1/metrics")
	o.Warn = func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	e, err := New(o)
	require.NoError(t, err)
	recs := records(20)
	for i := range recs {
		e.Record(&recs[i])
	}
	otelcoltest.Wait(t, func() bool { return e.failed.Load() >= 2 }) // several failed exports...
	rep := e.Close(context.Background())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, warned, 1, "...one warning")
	assert.Contains(t, warned[0], "OpenTelemetry collector at http://<redacted>@"+addr+"/v1/metrics: an export failed: the collector is not reachable: it refused the connection")
	assert.NotContains(t, warned[0]+rep.LastError, "s3cret")
	assert.False(t, rep.Delivered)
	assert.Equal(t, int64(20), rep.Recorded)
	assert.GreaterOrEqual(t, rep.Failed, int64(2))
}

// TestFullQueueDrops: Record never blocks; what finds the queue full is
// dropped and counted.
func TestFullQueueDrops(t *testing.T) {
	e := &Exporter{queue: make(chan *metrics.Record, 2)} // no goroutine drains it
	recs := records(5)
	for i := range recs {
		e.Record(&recs[i])
	}
	assert.Equal(t, int64(3), e.dropped.Load())
	assert.Len(t, e.queue, 2)
}

// BenchmarkRecord is the cost the finisher pays per record: the enqueue.
func BenchmarkRecord(b *testing.B) {
	e := &Exporter{queue: make(chan *metrics.Record, 1)}
	r := &records(1)[0]
	b.ReportAllocs()
	for b.Loop() {
		e.Record(r)
		<-e.queue
	}
}

// BenchmarkExport is the exporter goroutine's cost per record (duration,
// tokens, first chunk, three chunk gaps, the timing counter), off the
// request path.
func BenchmarkExport(b *testing.B) {
	o := testOptions("http://127.0.0.1:1/v1/metrics")
	o.Interval = time.Hour
	e, err := New(o)
	require.NoError(b, err)
	defer e.Close(context.Background())
	recs := records(64)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.inst.record(ctx, &recs[i%len(recs)])
		i++
	}
}

func TestEnvSecrets(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20tok-1,x-honeycomb-team=hc-key-9")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "api-key=k2")
	assert.Equal(t, []string{"Bearer tok-1", "tok-1", "hc-key-9", "k2"}, EnvSecrets(), "a vendor's header is a credential whatever its name")
}

// A collector that redirects is not followed: the other origin never gets
// the metrics nor $OTEL_EXPORTER_OTLP_HEADERS (a vendor's credential under
// a name that says nothing), and the exports fail instead.
func TestRedirectingCollectorIsNotFollowed(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-honeycomb-team=hc-key-9")
	var got atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/metrics", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	e, err := New(testOptions(first.URL + "/v1/metrics"))
	require.NoError(t, err)
	recs := records(5)
	for i := range recs {
		e.Record(&recs[i])
	}
	otelcoltest.Wait(t, func() bool { return e.failed.Load() >= 1 })
	rep := e.Close(context.Background())
	assert.False(t, rep.Delivered)
	assert.Zero(t, got.Load(), "the other origin got an export")
}
