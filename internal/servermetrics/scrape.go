package servermetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/aiperf-go/aiperf/internal/ctxio"
	"github.com/aiperf-go/aiperf/internal/redirect"
)

// accept asks for the classic text format, which every Prometheus client
// serves; a server that answers OpenMetrics anyway is rewritten as text
// (omText) and parsed as the text is.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// maxBody bounds a scrape's body.
const maxBody = 32 << 20

// newClient is an endpoint's own HTTP client: never the benchmark's
// connection pool, no proxy from the environment, at most two idle
// connections, every dial and response bounded by timeout.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          2,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}, CheckRedirect: redirect.Check}
}

// fetched is a scrape's outcome.
type fetched struct {
	fams   []*dto.MetricFamily
	body   []byte
	parse  time.Duration // how long parsing took
	series int           // the body's series when more than the cap (0: within it)
}

// fetch GETs a metrics endpoint with header (scrapeHeader's) and its URL's
// userinfo as Basic, and parses the first maxSeries series of its body
// (capSeries). The error never carries the URL (the caller names the
// endpoint, redacted).
func fetch(ctx context.Context, client *http.Client, rawURL string, header http.Header, maxSeries int, seed maphash.Seed) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fetched{}, fmt.Errorf("build request: %w", unwrapURL(err))
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	basicAuth(req)
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fetched{}, errTimeout
		}
		return fetched{}, unwrapURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fetched{}, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fetched{}, errTimeout
	case err != nil:
		return fetched{}, fmt.Errorf("read body: %w", unwrapURL(err))
	case len(body) > maxBody:
		return fetched{}, fmt.Errorf("body larger than %d MiB", maxBody>>20)
	}
	t0 := time.Now()
	f := fetched{body: body}
	kept, series := capSeries(body, maxSeries, seed)
	f.fams, err = parse(ctx, kept, resp.Header)
	f.parse, f.series = time.Since(t0), series
	if errors.Is(err, context.DeadlineExceeded) {
		err = errTimeout
	}
	return f, err
}

// errTimeout is a scrape that ran out of time.
var errTimeout = errors.New("timed out")

// unwrapURL drops the *url.Error around err: its text names the URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// parse reads an exposition with the Prometheus project's text parser,
// which is linear in the body: OpenMetrics 1.0, by its Content-Type,
// rewritten as text (omText; the body as it is when that is refused, as
// AIPerf falls back to the text parser), else the text format (version
// 0.0.4, also when the type is missing or unknown). JSON is refused:
// TensorRT-LLM serves iteration statistics as JSON at /metrics. The parse
// ends with ctx's error once ctx ends (the scrape's timeout, or the run's
// end).
func parse(ctx context.Context, body []byte, h http.Header) ([]*dto.MetricFamily, error) {
	ct := h.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "application/json" {
		return nil, errors.New("answered application/json, not Prometheus text " +
			"(TensorRT-LLM serves Prometheus at /prometheus/metrics with return_perf_metrics: true)")
	}
	if expfmt.ResponseFormat(h).FormatType() == expfmt.TypeOpenMetrics {
		text, totals := omText(body)
		fams, err := parseText(ctx, text)
		if err == nil {
			for _, mf := range fams {
				if mf.GetType() == dto.MetricType_COUNTER && totals[mf.GetName()] {
					name := mf.GetName() + "_total" // as expfmt's OpenMetrics parser names it
					mf.Name = &name
				}
			}
			return fams, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
	}
	return parseText(ctx, body)
}

// parseText reads a text exposition, stopping with ctx's error once ctx
// ends.
func parseText(ctx context.Context, body []byte) ([]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	m, err := p.TextToMetricFamilies(ctxio.Reader(ctx, bytes.NewReader(body))) // it reads 4 KiB at a time
	if ctx.Err() != nil {
		return nil, fmt.Errorf("parse the body: %w", ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text: %w", err)
	}
	if len(m) == 0 {
		return nil, errors.New("no metric families in the body")
	}
	fams := make([]*dto.MetricFamily, 0, len(m))
	for _, f := range m {
		fams = append(fams, f)
	}
	return fams, nil
}
