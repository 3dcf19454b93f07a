package otelexport

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/aiperf-go/aiperf/internal/otelexport/otelcoltest"
	"github.com/aiperf-go/aiperf/internal/plan"
)

// fakeCollector answers OTLP/HTTP exports with answer, keeping each
// request's headers.
type fakeCollector struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func startFake(t *testing.T, tlsToo bool, answer http.HandlerFunc) *fakeCollector {
	f := &fakeCollector{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.headers = append(f.headers, r.Header.Clone())
		f.mu.Unlock()
		answer(w, r)
	})
	f.Server = httptest.NewUnstartedServer(h)
	f.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes the TLS cases fail
	if tlsToo {
		f.StartTLS()
	} else {
		f.Start()
	}
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCollector) requests() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.headers...)
}

// accepted answers an export as a collector does, with a partial success
// rejecting rejected points (0: none).
func accepted(rejected int64, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		resp := pmetricotlp.NewExportResponse()
		if rejected > 0 || msg != "" {
			resp.PartialSuccess().SetRejectedDataPoints(rejected)
			resp.PartialSuccess().SetErrorMessage(msg)
		}
		b, _ := resp.MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	}
}

// exportOnce records a few records through an exporter of url, lets it
// export, and closes it, returning its report and warnings.
func exportOnce(t *testing.T, url string, untilExports int64) (Report, []string) {
	return exportOpts(t, testOptions(url), untilExports)
}

// exportOpts is exportOnce with options of its own.
func exportOpts(t *testing.T, o Options, untilExports int64) (Report, []string) {
	var mu sync.Mutex
	var warned []string
	o.Warn = func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	e, err := New(o)
	require.NoError(t, err)
	recs := records(10)
	for i := range recs {
		e.Record(&recs[i])
	}
	otelcoltest.Wait(t, func() bool { return e.exports.Load() >= untilExports })
	rep := e.Close(context.Background())
	mu.Lock()
	defer mu.Unlock()
	return rep, append([]string(nil), warned...)
}

// TestURLCredentialsKeepTheEnvHeaders: --otel-url's user:password is sent
// as Basic authentication along with $OTEL_EXPORTER_OTLP_HEADERS' headers
// (passing headers to the SDK replaces the environment's); for
// Authorization itself the URL's wins, whatever case the variable wrote
// it in, and it is sent once. With the metrics variable set, its headers
// replace the generic ones (the SDK's rule).
func TestURLCredentialsKeepTheEnvHeaders(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pw"))
	for _, tc := range []struct {
		name, generic, metrics string
		want                   map[string]string
		absent                 string
	}{
		{name: "generic", generic: "x-api-key=k1,authorization=Bearer%20env-tok",
			want: map[string]string{"X-Api-Key": "k1"}},
		{name: "metrics replaces generic", generic: "x-api-key=k1", metrics: "x-metrics-key=m1, Authorization=Bearer%20m",
			want: map[string]string{"X-Metrics-Key": "m1"}, absent: "X-Api-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tc.generic)
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", tc.metrics)
			col := startFake(t, false, accepted(0, ""))
			rep, warned := exportOnce(t, strings.Replace(col.URL, "http://", "http://user:pw@", 1)+"/v1/metrics", 1)
			assert.Empty(t, warned)
			assert.True(t, rep.OK(), "%+v", rep)
			reqs := col.requests()
			require.NotEmpty(t, reqs)
			for _, h := range reqs {
				assert.Equal(t, []string{basic}, h.Values("Authorization"))
				for k, v := range tc.want {
					assert.Equal(t, v, h.Get(k), k)
				}
				if tc.absent != "" {
					assert.Empty(t, h.Get(tc.absent))
				}
			}
		})
	}
}

// TestFailuresWordedByWhatTheyWere: a collector's refusal keeps its HTTP
// status and Retry-After (the SDK's error for a 429 or 503 says only
// "retry-able request failure: body: (empty)"), a TLS failure says TLS;
// none of them is called unreachable, and the report says the exports
// failed.
func TestFailuresWordedByWhatTheyWere(t *testing.T) {
	throttle := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(code)
		}
	}
	for _, tc := range []struct {
		name   string
		tls    bool
		scheme string
		answer http.HandlerFunc
		want   string
	}{
		{name: "429", answer: throttle(429), want: "the collector answered HTTP 429 Too Many Requests (Retry-After: 30)"},
		{name: "503", answer: throttle(503), want: "the collector answered HTTP 503 Service Unavailable (Retry-After: 30)"},
		{name: "400", answer: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad request: no metrics", 400) },
			want: "the collector answered HTTP 400 Bad Request: bad request: no metrics"},
		{name: "unknown CA", tls: true, scheme: "https", answer: accepted(0, ""), want: "TLS with the collector failed"},
		{name: "https to plain HTTP", scheme: "https", answer: accepted(0, ""), want: "TLS with the collector failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := startFake(t, tc.tls, tc.answer)
			url := col.URL + "/v1/metrics"
			if tc.scheme == "https" {
				url = "https://" + strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://")
			}
			rep, warned := exportOnce(t, url, 1)
			assert.False(t, rep.Delivered)
			assert.Positive(t, rep.Failed)
			assert.Contains(t, rep.LastError, tc.want)
			require.Len(t, warned, 1)
			assert.Contains(t, warned[0], tc.want)
			assert.NotContains(t, warned[0]+rep.LastError, "not reachable")
		})
	}
}

// TestPartialSuccessIsDelivered: a collector that accepts an export but
// rejects some of its points (OTLP's partial success) delivered it: the
// export is not failed, the report counts it and the points rejected,
// and the one warning says so, not that the collector is unreachable.
func TestPartialSuccessIsDelivered(t *testing.T) {
	col := startFake(t, false, accepted(7, "some points rejected"))
	rep, warned := exportOnce(t, col.URL+"/v1/metrics", 2)
	assert.Zero(t, rep.Failed)
	assert.Empty(t, rep.LastError)
	assert.True(t, rep.Delivered)
	assert.Equal(t, rep.Exports, rep.Partial)
	assert.Equal(t, int64(7), rep.Rejected)
	assert.Equal(t, "some points rejected", rep.LastRejection)
	assert.False(t, rep.OK(), "7 points are not at the collector")
	assert.Contains(t, rep.Detail(), "the last rejected 7: some points rejected")
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "accepted an export but rejected 7 data points of it (some points rejected)")
	assert.NotContains(t, warned[0], "not reachable")
}

// TestCtrlCCutIsWordedSo: the last export, cut because the run was
// interrupted while the collector had not answered, is reported as cut by
// the interrupt, not as an unreachable collector.
func TestCtrlCCutIsWordedSo(t *testing.T) {
	got := make(chan struct{}, 16)
	col := startFake(t, false, func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-r.Context().Done() // never answers
	})
	var mu sync.Mutex
	var warned []string
	o := testOptions(col.URL + "/v1/metrics")
	o.Interval = time.Hour // the last export only
	o.Warn = func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }
	e, err := New(o)
	require.NoError(t, err)
	recs := records(10)
	for i := range recs {
		e.Record(&recs[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Report, 1)
	go func() { done <- e.Close(ctx) }()
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no export reached the collector")
	}
	cancel() // the Ctrl-C
	var rep Report
	select {
	case rep = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waits after the interrupt")
	}
	assert.False(t, rep.Delivered)
	assert.Contains(t, rep.LastError, "the export was cut by the run's interrupt (Ctrl-C) before the collector answered")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "cut by the run's interrupt")
	assert.Contains(t, warned[0], "the collector may lack the points of the run's last seconds")
	assert.NotContains(t, warned[0], "not reachable")
}

// TestAnEchoedCredentialIsNotPrinted: a collector refusing the export with
// an answer that echoes the request's credentials (the URL's Basic one, an
// $OTEL_EXPORTER_OTLP_HEADERS key) gets its status and answer reported,
// the credentials redacted.
func TestAnEchoedCredentialIsNotPrinted(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k-s3cret")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "")
	col := startFake(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad auth="+r.Header.Get("Authorization")+" key="+r.Header.Get("X-Api-Key"), 400)
	})
	cred := base64.StdEncoding.EncodeToString([]byte("user:pw-s3cret"))
	var warned []string
	o := testOptions(strings.Replace(col.URL, "http://", "http://user:pw-s3cret@", 1) + "/v1/metrics")
	o.Redact = plan.NewRedactor(append(EnvSecrets(), "pw-s3cret", cred)...).Redact
	o.Warn = func(s string) { warned = append(warned, s) }
	e, err := New(o)
	require.NoError(t, err)
	recs := records(3)
	for i := range recs {
		e.Record(&recs[i])
	}
	rep := e.Close(context.Background())
	require.Len(t, warned, 1)
	assert.Contains(t, rep.LastError, "the collector answered HTTP 400 Bad Request: bad auth=Basic <redacted> key=<redacted>")
	assert.NotContains(t, warned[0]+rep.LastError, "s3cret")
	assert.NotContains(t, warned[0]+rep.LastError, cred)
}

// exportWith is exportOnce with a timeout of its own, and the last export
// only (the one Close sends): none left in flight for the shutdown to cut.
func exportWith(t *testing.T, url string, timeout time.Duration) (Report, []string) {
	o := testOptions(url)
	o.Timeout, o.Interval = timeout, time.Hour
	return exportOpts(t, o, 0)
}

// TestOnlyOTLPsPartialSuccessIsPartial: a 200 whose body never ends (a
// byte at a time, past the export's timeout) and a 200 whose body is not
// an OTLP response were reported as partial successes ("accepted an export
// but rejected some data points of it", stored as accepted): the first is
// no answer in time, the second a failed export; neither is delivered.
func TestOnlyOTLPsPartialSuccessIsPartial(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer http.HandlerFunc
		want   string
	}{
		{name: "a body that never ends", answer: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.Header().Set("Content-Length", "100000")
			w.WriteHeader(http.StatusOK)
			for {
				if _, err := w.Write([]byte{0x0a}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}, want: "the collector did not answer within 1s (it began an answer, HTTP 200 OK, and did not finish it)"},
		{name: "not an OTLP response", answer: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(bytes.Repeat([]byte{0xff}, 64)) // a varint that never ends
		}, want: "the collector answered HTTP 200 OK, but not with an OTLP export response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := startFake(t, false, tc.answer)
			rep, warned := exportWith(t, col.URL+"/v1/metrics", time.Second)
			assert.False(t, rep.Delivered)
			assert.Equal(t, rep.Exports, rep.Failed)
			assert.Zero(t, rep.Partial)
			assert.Contains(t, rep.LastError, tc.want)
			assert.NotContains(t, rep.Detail(), "accepted")
			require.Len(t, warned, 1)
			assert.Contains(t, warned[0], "an export failed: "+tc.want)
			assert.NotContains(t, warned[0], "rejected")
		})
	}
}

// TestNoAnswerInTimeWhicheverTimeoutCutIt: a collector that never answers
// is cut by whichever of the export's timeouts comes first, the reader's
// ("reader collect and export timeout", "reader force flush timeout"), the
// SDK's or the HTTP client's; the failure says the same whichever it was:
// no answer in time.
func TestNoAnswerInTimeWhicheverTimeoutCutIt(t *testing.T) {
	col := startFake(t, false, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	rep, warned := exportWith(t, col.URL+"/v1/metrics", time.Second)
	assert.False(t, rep.Delivered)
	assert.Equal(t, rep.Exports, rep.Failed)
	assert.Contains(t, rep.LastError, "the collector did not answer within 1s")
	require.Len(t, warned, 1)
	assert.Contains(t, warned[0], "an export failed: the collector did not answer within 1s")
}

// stalled is an OTLP exporter whose collector never answers: its export
// fails when ctx ends, with ctx's cause, as Go's HTTP client fails it.
type stalled struct{ sdkmetric.Exporter }

func (stalled) Export(ctx context.Context, _ *metricdata.ResourceMetrics) error {
	<-ctx.Done()
	return fmt.Errorf("failed to upload metrics: Post \"http://127.0.0.1:1/v1/metrics\": %w", context.Cause(ctx))
}

// TestTheReadersTimeoutIsNoAnswerInTime: the reader's timeout, when it
// cuts the export before the HTTP client's does, fails it with a cause
// that says only which timeout it was; the failure is no answer in time all
// the same, as when the client's cut it.
func TestTheReadersTimeoutIsNoAnswerInTime(t *testing.T) {
	for _, cause := range []string{"reader collect and export timeout", "reader force flush timeout"} {
		e := &Exporter{o: Options{Timeout: 10 * time.Second, Redact: func(s string) string { return s }}}
		ctx, cancel := context.WithTimeoutCause(context.Background(), time.Millisecond, errors.New(cause))
		err := (&counting{Exporter: stalled{}, e: e}).Export(ctx, &metricdata.ResourceMetrics{})
		cancel()
		require.ErrorContains(t, err, cause)
		require.Error(t, e.lastErr)
		assert.Contains(t, e.lastErr.Error(), "the collector did not answer within 10s: ")
		assert.EqualValues(t, 1, e.failed.Load())
	}
}
