package config

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// The body's otel: and mlflow: sections are AIPerf's OTelConfig and
// MLflowConfig (src/aiperf/config/otel.py and mlflow.py, config schema
// 2.0), read into the --otel-* and --mlflow-* options. Their URLs may hold
// credentials: plan.Profile redacts them wherever it is shown, and no
// error here echoes one.

// otelFields are otel:'s keys: metrics_url (--otel-url),
// stream_metrics_enabled and stream_timing_enabled (--stream),
// custom_resource_attributes (--otel-resource-attributes) and
// gen_ai_provider (--gen-ai-provider).
func (d *decoder) otelFields() []field {
	on := [2]bool{true, true} // AIPerf's defaults: both domains streamed
	domain := func(i int) func(string, *yaml.Node) {
		return func(path string, v *yaml.Node) {
			b, ok := d.bool(path, v)
			if !ok {
				return
			}
			on[i] = b
			d.setStream(path, v, on)
		}
	}
	return []field{
		{keys("metrics_url"), func(path string, v *yaml.Node) {
			d.opt("otel_url")(path, v)
			if u := d.f.Profile.OtelMetricsURL(); u != "" {
				if err := plan.CheckIntegrationURL(u, plan.OtelURLShape); err != nil {
					d.errorf(v, path, "%v", err)
				}
			}
		}},
		{keys("stream_metrics_enabled"), domain(0)},
		{keys("stream_timing_enabled"), domain(1)},
		{keys("custom_resource_attributes"), d.resourceAttributes},
		{keys("gen_ai_provider"), d.opt("gen_ai_provider")},
	}
}

// setStream sets --stream from otel:'s two switches (metrics, timing).
func (d *decoder) setStream(path string, v *yaml.Node, on [2]bool) {
	p := &d.f.Profile
	switch {
	case on[0] && on[1]:
		p.Stream = nil // both: the default
	case on[0]:
		p.Stream = []string{plan.StreamMetrics}
	case on[1]:
		p.Stream = []string{plan.StreamTiming}
	default:
		d.errorf(v, path, "streaming neither metrics nor timing is not supported yet: leave out otel.metrics_url to stream nothing")
		return
	}
	if _, dup := d.setAt["stream"]; !dup {
		d.mark("stream", v, path)
	}
}

// resourceAttributes reads otel.custom_resource_attributes: {key: value}.
func (d *decoder) resourceAttributes(path string, v *yaml.Node) {
	if !d.mapping(v, path) {
		return
	}
	var attrs []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := deref(v.Content[i]), deref(v.Content[i+1])
		at := join(path, k.Value)
		s, ok := d.str(at, val)
		if !ok {
			return
		}
		if strings.TrimSpace(k.Value) == "" || strings.ContainsAny(k.Value+s, ",=") {
			d.errorf(k, at, "a resource attribute's key and value cannot hold ',' or '=' (nor the key be empty)")
			return
		}
		attrs = append(attrs, k.Value+"="+s)
	}
	d.f.Profile.OtelResourceAttributes = attrs
	d.mark("otel_resource_attributes", v, path)
}

// mlflowFields are mlflow:'s keys, each the --mlflow-* flag of its name
// (tags: AIPerf's comma-separated "key:value" text, or a list of them).
func (d *decoder) mlflowFields() []field {
	return []field{
		{keys("tracking_uri"), func(path string, v *yaml.Node) {
			d.opt("mlflow_tracking_uri")(path, v)
			if u := d.f.Profile.MLflowTrackingURI; u != "" {
				if err := plan.CheckIntegrationURL(u, plan.MLflowURIShape); err != nil {
					d.errorf(v, path, "%v", err)
				}
			}
		}},
		{keys("experiment"), d.opt("mlflow_experiment")},
		{keys("run_name"), d.opt("mlflow_run_name")},
		{keys("tags"), func(path string, v *yaml.Node) {
			d.opt("mlflow_tag")(path, v)
			if _, err := d.f.Profile.MLflowTags(); err != nil {
				d.errorf(v, path, "%v", err)
			}
		}},
		{keys("parent_run_id"), d.opt("mlflow_parent_run_id")},
		{keys("artifact_globs"), d.opt("mlflow_artifact_glob")},
	}
}
