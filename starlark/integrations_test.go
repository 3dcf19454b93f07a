package starlark_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/starlark"
)

// TestIntegrationOptions: profile(...) takes the OpenTelemetry, MLflow and
// live-metrics options, and a script's print of a profile redacts their
// credentials.
func TestIntegrationOptions(t *testing.T) {
	sweeps := loadScript(t, `
p = profile(model = "m", otel_url = "http://u:otel-s3cret@c:4318", stream = ["metrics"],
    otel_resource_attributes = ["team=inference"], gen_ai_provider = "vllm",
    mlflow_tracking_uri = "http://localhost:5000", mlflow_experiment = "perf", mlflow_tag = ["team:perf"],
    metrics_listen = "127.0.0.1:9464", metrics_linger = 5)
if "otel-s3cret" in str(p):
    fail("secret shown")
sweep(name = "s", base = p)
`, starlark.Options{})
	require.Len(t, sweeps, 1)
	p := sweeps[0].Cells[0].Profile
	assert.Equal(t, "http://u:otel-s3cret@c:4318", p.OtelURL)
	assert.Equal(t, []string{"metrics"}, p.Stream)
	assert.Equal(t, "vllm", p.GenAIProvider())
	assert.Equal(t, "perf", p.MLflowExperiment)
	assert.Equal(t, "127.0.0.1:9464", p.MetricsListen)
	assert.Equal(t, 5.0, p.Linger())
	assert.Equal(t, sweeps[0].Digest(), func() string { // where a sweep is sent is not part of its identity
		s := sweeps[0]
		s.Cells = append(s.Cells[:0:0], s.Cells...)
		s.Cells[0].Profile.OtelURL, s.Cells[0].Profile.MetricsListen = "", ""
		return s.Digest()
	}())
}
