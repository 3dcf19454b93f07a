package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The otel: and mlflow: sections are AIPerf's OTelConfig and MLflowConfig
// (ai-dynamo/aiperf src/aiperf/config/otel.py @ 9b3f8a3, mlflow.py @
// 03d93ab, fields of BenchmarkConfig), each key the flag its CLI converter
// (src/aiperf/config/flags/_converter_telemetry.py, build_otel and
// build_mlflow) maps to it.
func TestOtelAndMLflowMapToFlags(t *testing.T) {
	f, err := parse(
		"benchmark:",
		"  model: m",
		"  otel:",
		"    metrics_url: collector:4318",
		"    stream_metrics_enabled: true",
		"    stream_timing_enabled: false",
		"    custom_resource_attributes: {deployment.environment: lab, team: inference}",
		"    gen_ai_provider: vllm",
		"  mlflow:",
		"    trackingUri: http://u:s3cret@mlflow:5000",
		"    experiment: perf",
		"    run_name: nightly",
		"    tags: team:perf,env:ci",
		"    parent_run_id: abc123",
		"    artifact_globs: ['*.json', 'plots/*.png']",
	)
	require.NoError(t, err)
	p := f.Profile
	assert.Equal(t, "collector:4318", p.OtelURL)
	assert.Equal(t, "http://collector:4318/v1/metrics", p.OtelMetricsURL())
	assert.Equal(t, []string{"metrics"}, p.Stream)
	assert.Equal(t, []string{"deployment.environment=lab", "team=inference"}, p.OtelResourceAttributes)
	attrs, err := p.ResourceAttributes()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"deployment.environment": "lab", "team": "inference"}, attrs)
	assert.Equal(t, "vllm", p.GenAIProvider())
	assert.Equal(t, "http://u:s3cret@mlflow:5000", p.MLflowTrackingURI)
	assert.Equal(t, "perf", p.MLflowExperimentName())
	assert.Equal(t, "nightly", p.MLflowRunName)
	tags, err := p.MLflowTags()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "perf", "env": "ci"}, tags)
	assert.Equal(t, "abc123", p.MLflowParentRunID)
	assert.Equal(t, []string{"*.json", "plots/*.png"}, p.MLflowArtifactGlob)
	require.NoError(t, p.Check(), "a valid profile")

	// The password is a secret of the profile: redacted wherever it is shown.
	assert.Contains(t, p.Secrets(), "s3cret")
	assert.NotContains(t, p.Redactor().Redact(p.Redacted().MLflowTrackingURI), "s3cret")

	// Each switch alone, and both (AIPerf's default: no --stream).
	for _, c := range []struct {
		lines []string
		want  []string
	}{
		{[]string{"stream_metrics_enabled: false"}, []string{"timing"}},
		{[]string{"stream_timing_enabled: false"}, []string{"metrics"}},
		{[]string{"stream_metrics_enabled: true", "stream_timing_enabled: true"}, nil},
	} {
		lines := []string{"benchmark:", "  otel:", "    metrics_url: http://c:4318"}
		for _, l := range c.lines {
			lines = append(lines, "    "+l)
		}
		f, err := parse(lines...)
		require.NoError(t, err)
		assert.Equal(t, c.want, f.Profile.Stream, c.lines)
	}
}

// A bad otel: or mlflow: value is an error naming the file, line and key,
// and never shows a URL's credentials.
func TestOtelAndMLflowErrors(t *testing.T) {
	tests := []struct {
		yaml []string
		err  string
	}{
		{[]string{"benchmark:", "  otel:", "    metrics_url: grpc://u:pw-s3cret@c:4317"},
			`bench.yaml:3: benchmark.otel.metrics_url: must be host[:port] or an http(s) URL (OTLP/HTTP; gRPC is not supported), got "grpc://<redacted>@c:4317/v1/metrics"`},
		{[]string{"benchmark:", "  otel:", "    metrics_url: c:4318", "    stream: metrics"},
			`bench.yaml:4: benchmark.otel: unknown key "stream" (did you mean "stream_timing_enabled" or "stream_metrics_enabled"?)`},
		{[]string{"benchmark:", "  otel:", "    stream_metrics_enabled: false", "    stream_timing_enabled: false"},
			`bench.yaml:4: benchmark.otel.stream_timing_enabled: streaming neither metrics nor timing is not supported yet: leave out otel.metrics_url to stream nothing`},
		{[]string{"benchmark:", "  otel:", "    stream_timing_enabled: sometimes"},
			`bench.yaml:3: benchmark.otel.stream_timing_enabled: expected false | true, got string "sometimes"`},
		{[]string{"benchmark:", "  otel:", "    custom_resource_attributes: {team: [a, b]}"},
			`bench.yaml:3: benchmark.otel.custom_resource_attributes.team: expected string, got list`},
		{[]string{"benchmark:", "  otel:", "    custom_resource_attributes: [team=a]"},
			`bench.yaml:3: benchmark.otel.custom_resource_attributes: expected an object, got list`},
		{[]string{"benchmark:", "  mlflow:", "    tracking_uri: ftp://u:pw-s3cret@m"},
			`bench.yaml:3: benchmark.mlflow.tracking_uri: must be an http(s) URL of an MLflow tracking server, got "ftp://<redacted>@m"`},
		{[]string{"benchmark:", "  mlflow:", "    tracking_uri: http://m", "    experiment_name: perf"},
			`bench.yaml:4: benchmark.mlflow: unknown key "experiment_name" (expected one of: tracking_uri, experiment, run_name, tags, parent_run_id, artifact_globs)`},
		{[]string{"benchmark:", "  mlflow:", "    tags: team"},
			`bench.yaml:3: benchmark.mlflow.tags: must be key:value pairs, got "team"`},
		{[]string{"benchmark:", "  mlflow:", "    artifact_globs: 5"},
			`bench.yaml:3: benchmark.mlflow.artifact_globs: expected string, got int 5`},
	}
	for _, tc := range tests {
		_, err := parse(tc.yaml...)
		require.Error(t, err, tc.yaml)
		assert.Equal(t, tc.err, err.Error())
		assert.NotContains(t, err.Error(), "pw-s3cret")
	}
}
