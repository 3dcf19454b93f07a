package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// body is a minimal benchmark body with extra lines after its endpoint.
func body(extra ...string) []string {
	return append([]string{
		"benchmark:",
		"  model: m",
		"  endpoint: {url: 'http://x:8000', streaming: true}",
	}, extra...)
}

// A URL string is AIPerf's shorthand for either section: enabled, with
// that one URL, in either spelling of the key; and the gpu_telemetry
// section of AIPerf's own gpu_telemetry.yaml template is read, its
// collector: dcgm and mode: summary being what this tool does anyway.
func TestTelemetryShorthandAndAIPerfTemplate(t *testing.T) {
	for _, keys := range [][2]string{{"gpu_telemetry", "server_metrics"}, {"gpuTelemetry", "serverMetrics"}} {
		f, err := parse(body(
			"  "+keys[0]+": http://gpu:9400/metrics",
			"  "+keys[1]+": http://sm:9090/metrics",
		)...)
		require.NoError(t, err, keys)
		assert.Equal(t, []string{"http://gpu:9400/metrics"}, f.Profile.GPUTelemetry)
		assert.Equal(t, []string{"http://sm:9090/metrics"}, f.Profile.ServerMetrics)
		assert.False(t, f.Profile.NoGPUTelemetry || f.Profile.NoServerMetrics)
		require.NoError(t, f.Profile.Check())
	}

	f, err := parse(body(
		"  gpuTelemetry:", // as AIPerf's src/aiperf/config/templates/gpu_telemetry.yaml writes it
		"    enabled: true",
		"    collector: dcgm",
		"    mode: summary",
		"    urls:",
		"      - http://localhost:9400/metrics",
		"      - http://localhost:9401/metrics",
		"  serverMetrics:",
		"    discovery: {mode: disabled, labelSelector: null, namespace: null}",
	)...)
	require.NoError(t, err)
	assert.Equal(t, []string{"http://localhost:9400/metrics", "http://localhost:9401/metrics"}, f.Profile.GPUTelemetry)
	assert.Empty(t, f.Notes)
	require.NoError(t, f.Profile.Check())

	for _, ok := range []string{"collector: DCGM", "mode: Summary", "metrics_file: null"} {
		_, err := parse(body("  gpu_telemetry: {" + ok + "}")...)
		require.NoError(t, err, ok)
	}
	_, err = parse(body("  server_metrics: {discovery: {mode: auto}}")...)
	require.NoError(t, err, "auto, AIPerf's default, discovers nothing outside a cluster")
}

// AIPerf's keys this tool does not honour are refused as not supported
// yet, each naming its line, its key and what to do; a value AIPerf does
// not have either is refused with the ones it has; a list is not a
// shorthand (AIPerf's is a string).
func TestTelemetryRefusals(t *testing.T) {
	_, err := parse(body(
		"  gpu_telemetry:",
		"    collector: pynvml",
		"    mode: realtime_dashboard",
		"    metricsFile: gpu.csv",
		"  server_metrics:",
		"    discovery:",
		"      mode: kubernetes",
		"      label_selector: app=vllm",
		"      namespace: llm",
	)...)
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 6, err.Error())
	for i, want := range []string{
		"bench.yaml:5: benchmark.gpu_telemetry.collector: pynvml (a local GPU collector) is not supported yet: " +
			"GPU telemetry is read from DCGM exporters here; run dcgm-exporter, list its URL under urls",
		"bench.yaml:6: benchmark.gpu_telemetry.mode: realtime_dashboard (AIPerf's live GPU panel) is not supported yet: set mode: summary",
		"bench.yaml:7: benchmark.gpu_telemetry.metricsFile: metrics_file: (GPU metrics replayed from a CSV file) is not supported yet: " +
			"GPU telemetry is scraped live from DCGM exporters here; list their URLs under urls",
		"bench.yaml:10: benchmark.server_metrics.discovery.mode: kubernetes (finding the servers' /metrics through the Kubernetes API) " +
			"is not supported yet: list the servers' metrics URLs under server_metrics.urls",
		"bench.yaml:11: benchmark.server_metrics.discovery.label_selector: label_selector: (Kubernetes discovery of the servers' /metrics) is not supported yet",
		"bench.yaml:12: benchmark.server_metrics.discovery.namespace: namespace: (Kubernetes discovery of the servers' /metrics) is not supported yet",
	} {
		assert.Contains(t, lines[i], want)
	}
	assert.NotContains(t, err.Error(), "unknown key")

	for _, c := range []struct{ line, want string }{
		{"  gpu_telemetry: {collector: nvsmi}", `bench.yaml:4: benchmark.gpu_telemetry.collector: expected dcgm | pynvml | amdsmi | amd_dme, got string "nvsmi"`},
		{"  gpu_telemetry: {mode: live}", `bench.yaml:4: benchmark.gpu_telemetry.mode: expected summary | realtime_dashboard, got string "live"`},
		{"  server_metrics: {discovery: {mode: dns}}", `benchmark.server_metrics.discovery.mode: expected auto | kubernetes | disabled, got string "dns"`},
		{"  gpu_telemetry: [http://a:9400/metrics]", "bench.yaml:4: benchmark.gpu_telemetry: expected an object or one URL as a string, " +
			"got a list: put several URLs under urls: (gpu_telemetry: {urls: [...]})"},
		{"  server_metrics: true", "bench.yaml:4: benchmark.server_metrics: expected an object or one URL as a string, got bool true"},
	} {
		_, err := parse(body(c.line)...)
		require.Error(t, err, c.line)
		assert.Contains(t, err.Error(), c.want)
	}
}

// A config file's server metrics are exported as AIPerf's config model
// defaults them (json, csv and parquet) unless formats says otherwise,
// in every variation of a sweep too.
func TestServerMetricsFormatsDefault(t *testing.T) {
	f, err := parse(append(body("  phases: {concurrency: 1, requests: 4}"), "sweep: {type: grid, parameters: {concurrency: [1, 2]}}")...)
	require.NoError(t, err)
	assert.Equal(t, []string{"json", "csv", "parquet"}, f.Profile.ServerMetricsFormats)
	require.Len(t, f.Sweep.Variations, 2)
	for _, v := range f.Sweep.Variations {
		assert.Equal(t, []string{"json", "csv", "parquet"}, v.Profile.ServerMetricsFormats)
	}
	f, err = parse(body("  server_metrics: {formats: [json]}")...)
	require.NoError(t, err)
	assert.Equal(t, []string{"json"}, f.Profile.ServerMetricsFormats)
}

// A prefill ramp on a phase without prefill_concurrency has nothing to
// ramp: AIPerf starts no ramp then, and the file is read with a note
// (AIPerf's own ramping.yaml template does this); with the cap the ramp
// is kept, and a negative ramp is still refused.
func TestPrefillRampWithoutCap(t *testing.T) {
	f, err := parse(body(
		"  phases:",
		"    - {name: warmup, type: concurrency, concurrency: 4, requests: 8}",
		"    - name: profiling",
		"      type: poisson",
		"      rate: 20",
		"      concurrency: 8",
		"      requests: 40",
		"      prefillRamp: 30s",
	)...)
	require.NoError(t, err)
	require.Len(t, f.Profile.Phases, 2)
	assert.Zero(t, f.Profile.Phases[1].PrefillRamp)
	assert.Equal(t, []string{"bench.yaml:11: benchmark.phases[1].prefillRamp: ramps prefill_concurrency, which this phase does not set: " +
		"ignored, as AIPerf does (set prefill_concurrency to cap and ramp the requests in prefill, or remove it)"}, f.Notes)
	require.NoError(t, f.Profile.Check())

	f, err = parse(body("  profiling: {type: concurrency, concurrency: 8, prefill_concurrency: 2, prefill_ramp: {duration: 5}, requests: 9}")...)
	require.NoError(t, err)
	assert.Equal(t, []plan.Phase{{Name: "profiling", Kind: plan.KindProfiling, Concurrency: 8, PrefillConcurrency: 2, PrefillRamp: 5,
		Requests: 9}}, f.Profile.Phases)
	assert.Empty(t, f.Notes)

	f, err = parse(body("  phases: {type: concurrency, requests: 9, prefill_ramp: -1}")...)
	require.NoError(t, err)
	assert.Empty(t, f.Notes)
	require.Error(t, f.Profile.Check(), "a negative ramp is not dropped")
}

// A prefill ramp swept over a phase without prefill_concurrency is
// ignored in each variation, and the note says so once.
func TestSweptPrefillRampWithoutCap(t *testing.T) {
	f, err := parse(append(body("  phases: {type: concurrency, concurrency: 4, requests: 8}"),
		"sweep: {type: grid, parameters: {prefill_ramp: [10, 20]}}")...)
	require.NoError(t, err)
	require.Len(t, f.Sweep.Variations, 2)
	for _, v := range f.Sweep.Variations {
		assert.Zero(t, v.Profile.Phases[0].PrefillRamp)
	}
	require.Len(t, f.Notes, 1, "%q", f.Notes)
	assert.Contains(t, f.Notes[0], "ramps prefill_concurrency, which this phase does not set: ignored, as AIPerf does")
}
