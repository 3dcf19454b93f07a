package plan

import (
	"fmt"
	"net/url"
	"slices"
)

// DefaultScrapeInterval is --server-metrics-interval when not given, in
// seconds: AIPerf's 333 ms.
const DefaultScrapeInterval = 0.333

// MaxSeries bounds --server-metrics-max-series: ten million series cost
// seconds a scrape.
const MaxSeries = 10_000_000

// ScrapeTargets are the Prometheus endpoints to scrape: the /metrics of
// every --url origin and every --server-metrics URL (unless
// --no-server-metrics), and every --gpu-telemetry URL (unless
// --no-gpu-telemetry; DefaultGPUTargets are the exporters looked for
// besides). A URL without a path gets /metrics; duplicates are dropped.
func (p *Profile) ScrapeTargets() (server, gpu []string) {
	if !p.NoServerMetrics {
		for _, o := range p.Origins() {
			if p.SageMakerOn() {
				break // SageMaker Runtime serves no /metrics of its containers
			}
			server = appendTarget(server, o)
		}
		for _, raw := range p.ServerMetrics {
			server = appendTarget(server, raw)
		}
	}
	if !p.NoGPUTelemetry {
		for _, raw := range p.gpuURLs() {
			gpu = appendTarget(gpu, raw)
		}
	}
	return server, gpu
}

// appendTarget appends raw as a metrics URL unless list holds it.
func appendTarget(list []string, raw string) []string {
	u, err := url.Parse(NormalizeURL(raw))
	if err != nil {
		return list
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	if s := u.String(); !slices.Contains(list, s) {
		list = append(list, s)
	}
	return list
}

// scrape checks the server-metrics and GPU-telemetry options.
func (v *validator) scrape(p *Profile) {
	for _, f := range []struct {
		name string
		urls []string
	}{{"server_metrics", p.ServerMetrics}, {"gpu_telemetry", p.GPUTelemetry}} {
		for _, raw := range f.urls {
			if f.name == "gpu_telemetry" && !v.gpuValue(raw) {
				continue
			}
			u, err := url.Parse(NormalizeURL(raw))
			switch {
			case err != nil || u.Hostname() == "":
				v.add(f.name, fmt.Sprintf("is not a URL: %q", RedactURL(raw)))
			case badPort(u) != "":
				v.add(f.name, fmt.Sprintf("%s: %q", badPort(u), RedactURL(raw)))
			case u.Scheme != "http" && u.Scheme != "https":
				v.add(f.name, fmt.Sprintf("must use http or https, got %q", u.Scheme))
			}
		}
	}
	v.check(!(p.NoServerMetrics && len(p.ServerMetrics) > 0), "no_server_metrics", "cannot be used with --server-metrics")
	v.check(!(p.NoGPUTelemetry && len(p.GPUTelemetry) > 0), "no_gpu_telemetry", "cannot be used with --gpu-telemetry")
	interval := DefaultScrapeInterval
	if x := p.ServerMetricsInterval; x != nil && !v.nonFinite["server_metrics_interval"] {
		ok := *x >= 0.01 && *x <= 3600
		v.check(ok, "server_metrics_interval", fmt.Sprintf("must be between 0.01 and 3600 seconds, got %g", *x))
		if ok {
			interval = *x
		}
	}
	v.intRange("server_metrics_max_series", p.ServerMetricsMaxSeries, 1, MaxSeries)
	v.seconds("slice_duration", p.SliceDuration, false)
	if x := p.SliceDuration; x != nil && !v.nonFinite["slice_duration"] && *x > 0 {
		// A slice shorter than the scrape interval holds no scrape, and the
		// number of slices must stay bounded by the number of scrapes.
		v.check(*x >= interval, "slice_duration",
			fmt.Sprintf("must be at least the scrape interval (%g s), got %g", interval, *x))
	}
}
