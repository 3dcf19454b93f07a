package config

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// The body's gpu_telemetry: and server_metrics: sections are AIPerf's
// GpuTelemetryConfig and ServerMetricsConfig (src/aiperf/config/
// gpu_telemetry.py and server_metrics.py, schema 2.0): an object, or a URL
// string standing for {enabled: true, urls: [URL]}, as AIPerf's
// normalize_before_validation reads it.

// ServerMetricsFormats are the server-metrics exports a config file writes
// when its server_metrics.formats does not say: ServerMetricsConfig's
// default in AIPerf (the command line's default is json and csv).
var ServerMetricsFormats = []string{"json", "csv", "parquet"}

// gpuCollectors are AIPerf's GPU telemetry collectors: dcgm, the one read
// here, and the local ones this tool has no counterpart for.
var gpuCollectors = []string{"dcgm", "pynvml", "amdsmi", "amd_dme"}

// discoveryModes are AIPerf's server_metrics.discovery.mode values.
var discoveryModes = []string{"auto", "kubernetes", "disabled"}

// telemetry is the handler of gpu_telemetry: or server_metrics:, whose
// URLs are the option urls: an object read with fs, or one URL as text.
func (d *decoder) telemetry(urls string, fs func() []field) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		switch {
		case v.Kind == yaml.MappingNode:
			d.fields(v, path, fs())
		case v.Kind == yaml.ScalarNode && (v.ShortTag() == tagStr || d.origin[v] != ""):
			d.opt(urls)(path, v) // AIPerf's shorthand: enabled, with this one URL
		case v.Kind == yaml.SequenceNode:
			d.errorf(v, path, "expected an object or one URL as a string, got a list: put several URLs under urls: (%s: {urls: [...]})",
				path[strings.LastIndex(path, ".")+1:])
		default:
			d.errorf(v, pathOr(path), "expected an object or one URL as a string, got %s", d.describe(v))
		}
	}
}

// collector is what gpu_telemetry: and server_metrics: share: enabled and
// urls (or url).
func (d *decoder) collector(urls, off string) []field {
	return []field{
		{keys("enabled"), func(path string, v *yaml.Node) {
			if on, ok := d.bool(path, v); ok && !on {
				o, _ := plan.LookupOption(off)
				_ = o.Set(&d.f.Profile, true)
				d.mark(off, v, path)
			}
		}},
		{keys("urls", "url"), d.opt(urls)},
	}
}

// gpuTelemetryFields are gpu_telemetry:'s keys. collector: dcgm and mode:
// summary are what this tool does, and change nothing; the other values,
// and metrics_file, are not supported yet.
func (d *decoder) gpuTelemetryFields() []field {
	return append(d.collector("gpu_telemetry", "no_gpu_telemetry"),
		field{keys("collector"), func(path string, v *yaml.Node) {
			if s, ok := d.lowerEnum(path, v, gpuCollectors...); ok && s != "dcgm" {
				d.errorf(v, path, "%s (a local GPU collector) is not supported yet: GPU telemetry is read from DCGM exporters here; "+
					"run dcgm-exporter, list its URL under urls and set collector: dcgm (or leave collector out)", s)
			}
		}},
		field{keys("mode"), func(path string, v *yaml.Node) {
			if s, ok := d.lowerEnum(path, v, "summary", "realtime_dashboard"); ok && s != "summary" {
				d.errorf(v, path, "realtime_dashboard (AIPerf's live GPU panel) is not supported yet: "+
					"set mode: summary (or leave mode out); the GPU telemetry table is printed after the run")
			}
		}},
		field{keys("metrics_file"), d.unlessNull(d.notYet("metrics_file: (GPU metrics replayed from a CSV file)",
			"GPU telemetry is scraped live from DCGM exporters here; list their URLs under urls"))},
	)
}

// serverMetricsFields are server_metrics:'s keys: AIPerf's, and interval
// (an extension: --server-metrics-interval).
func (d *decoder) serverMetricsFields() []field {
	return append(d.collector("server_metrics", "no_server_metrics"),
		field{keys("formats"), d.opt("server_metrics_formats")},
		field{keys("interval"), d.opt("server_metrics_interval")},
		field{keys("discovery"), d.section(d.discoveryFields)},
	)
}

// discoveryFields are server_metrics.discovery:'s keys: AIPerf finds the
// servers' /metrics through the Kubernetes API; this tool scrapes each
// --url origin and the URLs listed, so only the modes that discover
// nothing outside a cluster are accepted.
func (d *decoder) discoveryFields() []field {
	hint := "list the servers' metrics URLs under server_metrics.urls"
	return []field{
		{keys("mode"), func(path string, v *yaml.Node) {
			if s, ok := d.lowerEnum(path, v, discoveryModes...); ok && s == "kubernetes" {
				d.errorf(v, path, "kubernetes (finding the servers' /metrics through the Kubernetes API) is not supported yet: %s", hint)
			}
		}},
		{keys("label_selector"), d.unlessNull(d.notYet("label_selector: (Kubernetes discovery of the servers' /metrics)", hint))},
		{keys("namespace"), d.unlessNull(d.notYet("namespace: (Kubernetes discovery of the servers' /metrics)", hint))},
	}
}

// unlessNull is handle, except that null (AIPerf's default, None) is
// accepted.
func (d *decoder) unlessNull(handle func(string, *yaml.Node)) func(string, *yaml.Node) {
	return func(path string, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == tagNull && d.origin[v] == "" {
			return
		}
		handle(path, v)
	}
}

// lowerEnum reads one of allowed in any case (AIPerf's case-insensitive
// enums), returned in lower case. A value from the environment is not
// echoed.
func (d *decoder) lowerEnum(path string, n *yaml.Node, allowed ...string) (string, bool) {
	s, ok := d.str(path, n)
	if !ok {
		return "", false
	}
	if low := strings.ToLower(strings.TrimSpace(s)); slices.Contains(allowed, low) {
		return low, true
	}
	d.errorf(n, path, "expected %s, got %s", strings.Join(allowed, " | "), d.describe(n))
	return "", false
}

// serverMetricsDefaults gives a file's profile AIPerf's config default of
// server_metrics.formats when the file does not set it.
func (d *decoder) serverMetricsDefaults() {
	if _, set := d.setAt["server_metrics_formats"]; !set {
		d.f.Profile.ServerMetricsFormats = slices.Clone(ServerMetricsFormats)
	}
}
