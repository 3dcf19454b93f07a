package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultGPUTargets: AIPerf's default DCGM exporters (gpu-telemetry.md)
// are looked for unless --no-gpu-telemetry, the environment replaces them,
// and one --gpu-telemetry already names is not looked for twice.
func TestDefaultGPUTargets(t *testing.T) {
	p := valid()
	assert.Equal(t, []string{"http://localhost:9400/metrics", "http://localhost:9401/metrics"}, p.DefaultGPUTargets())

	p.GPUTelemetry = []string{GPUDashboard, "localhost:9401"}
	_, gpu := p.ScrapeTargets()
	assert.Equal(t, []string{"http://localhost:9401/metrics"}, gpu, "the dashboard keyword names no endpoint")
	assert.Equal(t, []string{"http://localhost:9400/metrics"}, p.DefaultGPUTargets())
	require.NoError(t, p.Check())

	t.Setenv(DefaultDCGMEnv, `["http://dcgm-a:9400/metrics", "dcgm-b:9500"]`)
	assert.Equal(t, []string{"http://dcgm-a:9400/metrics", "http://dcgm-b:9500/metrics"}, p.DefaultGPUTargets(), "a JSON array")
	t.Setenv(DefaultDCGMEnv, "dcgm-c:1, ,http://localhost:9401")
	assert.Equal(t, []string{"http://dcgm-c:1/metrics"}, p.DefaultGPUTargets(), "a comma-separated list")

	p.GPUTelemetry, p.NoGPUTelemetry = nil, true
	assert.Empty(t, p.DefaultGPUTargets(), "--no-gpu-telemetry: none")
}

// TestGPUTelemetryKeywords: AIPerf's collector keywords this tool cannot
// serve are refused by name, with what to do instead.
func TestGPUTelemetryKeywords(t *testing.T) {
	p := valid()
	p.GPUTelemetry = []string{"pynvml", "amdsmi", "custom_gpu_metrics.csv", "dashboard"}
	err := p.Check()
	require.Error(t, err)
	for _, want := range []string{"--gpu-telemetry pynvml is not supported", "--gpu-telemetry amdsmi is not supported",
		"give its URL", `"custom_gpu_metrics.csv": a custom metrics file is not supported`} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "dashboard")
}
