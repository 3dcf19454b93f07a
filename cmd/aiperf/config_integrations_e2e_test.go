package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/otelexport"
	"github.com/aiperf-go/aiperf/internal/otelexport/otelcoltest"
)

// integrationsConfig is a small benchmark against url with the given
// body sections (otel:, mlflow:) appended.
func integrationsConfig(url, sections string) string {
	return `schemaVersion: "2.0"
benchmark:
  model: mock-model
  endpoint: {url: ` + url + `, streaming: true}
  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}
  phases: {type: concurrency, concurrency: 2, requests: 12}
` + sections
}

// TestConfigOtelSection: a config file's otel: section (AIPerf's
// OTelConfig keys) streams to the OpenTelemetry Collector's own OTLP
// receiver as --otel-url, --stream, --otel-resource-attributes and
// --gen-ai-provider do: one duration point per request, the GenAI
// attributes and the resource's, and no aiperf.timing.* counters.
func TestConfigOtelSection(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	col := otelcoltest.Start(t)
	dir := t.TempDir()
	path := writeFile(t, dir, "bench.yaml", integrationsConfig(m.URL, `  otel:
    metrics_url: `+strings.TrimSuffix(col.URL, "/v1/metrics")+`
    stream_metrics_enabled: true
    stream_timing_enabled: false
    custom_resource_attributes: {deployment.environment: ci}
    gen_ai_provider: vllm
`))
	inv := cli(t, dir, "profile", "--config", path, "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	last := col.Last()
	n, _ := otelcoltest.Points(last, otelexport.MetricDuration, map[string]string{"gen_ai.operation.name": "chat",
		"gen_ai.provider.name": "vllm", "gen_ai.request.model": "mock-model", "aiperf.phase_kind": "profiling"})
	assert.Equal(t, uint64(12), n, "one duration point per request")
	for _, p := range last {
		assert.Equal(t, "ci", p.Res["deployment.environment"])
		assert.False(t, strings.HasPrefix(p.Metric, "aiperf.timing."), "stream_timing_enabled: false streams no %s", p.Metric)
	}
	exports := storedExports(t, dir)
	require.Len(t, exports, 1)
	assert.Equal(t, "otel", exports[0].Kind)
	assert.Equal(t, col.URL, exports[0].Target)
}

// TestConfigMLflowSection: a config file's mlflow: section (AIPerf's
// MLflowConfig keys) logs the run to the FAKE MLflow server as the
// --mlflow-* flags do, and the tracking URI's password reaches no output,
// export, store row or config expand listing.
func TestConfigMLflowSection(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	uri := strings.Replace(fake.URL, "://", "://ci:pw-s3cret@", 1)
	path := writeFile(t, dir, "bench.yaml", integrationsConfig(m.URL, `  artifacts: {dir: out}
  mlflow:
    tracking_uri: `+uri+`
    experiment: perf
    run_name: nightly
    tags: team:perf,env:ci
`))
	inv := cli(t, dir, "profile", "--config", path, "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	runs := fake.Runs()
	require.Len(t, runs, 1)
	run := runs[0]
	assert.Equal(t, "nightly", run.Name)
	assert.Equal(t, "FINISHED", run.Status)
	assert.Equal(t, fake.Experiments()["perf"], run.Experiment)
	assert.Equal(t, "perf", run.Tags["team"])
	assert.Equal(t, "ci", run.Tags["env"])
	assert.Equal(t, []float64{12}, run.Metrics["aiperf.completed_requests"])
	assert.Contains(t, run.Artifacts, "exports/profile_export_aiperf.json")

	assert.NotContains(t, inv.stdout+inv.stderr, "pw-s3cret")
	for _, a := range run.Artifacts {
		assert.NotContains(t, string(a), "pw-s3cret", "no uploaded file holds the password")
	}
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "out"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := os.ReadFile(p)
			assert.NotContains(t, string(b), "pw-s3cret", p)
		}
		return err
	}))
	ex := cli(t, dir, "config", "expand", path, "--full")
	require.Equal(t, ExitOK, ex.code, ex.stderr)
	assert.Contains(t, ex.stdout, "tracking_uri:")
	assert.NotContains(t, ex.stdout+ex.stderr, "pw-s3cret", "config expand prints the body redacted")
	cmd, cfg, exports := storedRunRow(t, dir)
	assert.NotContains(t, cmd+cfg+exports, "pw-s3cret", "the store holds no credential")
	assert.Contains(t, exports, "mlflow")
}

// TestConfigImagesSection: a config file's dataset.images: (AIPerf's
// ImageConfig keys) sends batch_size images of the given size with every
// request, as the --image-* flags do: the mock decodes each and counts
// its tokens, so the server's prompt tokens are the text's plus two
// 256×128 images' by the mock's documented formula.
func TestConfigImagesSection(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	path := writeFile(t, dir, "bench.yaml", `schemaVersion: "2.0"
benchmark:
  model: Qwen/Qwen2-VL-2B-Instruct
  endpoint: {url: `+m.URL+`, streaming: true, use_server_token_count: true}
  dataset:
    type: synthetic
    entries: 4
    prompts: {isl: 30, osl: 2}
    images: {batch_size: 2, width: 256, height: 128, format: png}
  phases: {type: concurrency, concurrency: 2, requests: 6}
`)
	inv := cli(t, dir, "profile", "--config", path, "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "sends no images")
	exp := onlyExport(t, dir)
	assert.Equal(t, 6.0, metricAvg(t, exp, "request_count"))
	assert.Equal(t, float64(30+2*mock.ImageTokens(256, 128)), metricAvg(t, exp, "usage_prompt_tokens"),
		"each request's two images counted by the mock")
}

// TestConfigRuntimeSection: a config file's runtime: section (AIPerf's
// RuntimeConfig) sets --ui (ui: none prints nothing on stderr, where the
// default ui names the tokenizer) and
// --workers-max (workers: 1 caps --workers 2, exit 2 before traffic),
// and a flag given beside the file wins.
func TestConfigRuntimeSection(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	path := writeFile(t, dir, "bench.yaml", integrationsConfig(m.URL, "  runtime: {ui: none, workers: 1, record_processors: 32}\n"))
	inv := cli(t, dir, "profile", "--config", path, "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stderr, "tokens counted with", "ui: none")
	inv = cli(t, dir, "profile", "--config", path, "--no-store", "--ui", "simple")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "tokens counted with", "--ui beats the file's ui")

	sent := m.control().InferenceRequests
	inv = cli(t, dir, "profile", "--config", path, "--no-store", "--workers", "2")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "--workers 2 is more than --workers-max 1 (runtime.workers in "+path+")")
	assert.Equal(t, sent, m.control().InferenceRequests, "nothing was sent")
}
