package main

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/starter"
)

// gapsMock is an in-process mock on a loopback port of 24200-24399 (the
// range these tests may use), counting the inference requests it gets.
func gapsMock(t *testing.T, cfg mock.Config) (base string, inference *atomic.Int64) {
	t.Helper()
	cfg.CountTokens, cfg.EncodeTokens = countTokens(), defaultTokenizer().Encode
	srv, err := mock.New(cfg)
	require.NoError(t, err)
	var l net.Listener
	for port := 24200; port < 24400; port++ {
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			break
		}
	}
	require.NoError(t, err, "no free port in 24200-24399")
	inference = new(atomic.Int64)
	h := srv.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			inference.Add(1)
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + l.Addr().String(), inference
}

// AIPerf's shorthand of a URL string for gpu_telemetry: and
// server_metrics: runs: the GPU exporter named is scraped, the server
// metrics URL named too, and the server metrics are exported as AIPerf's
// config model defaults them (json, csv, parquet); --server-metrics-formats
// on the command line still wins.
func TestConfigGapsTelemetryShorthandRuns(t *testing.T) {
	t.Setenv(plan.DefaultDCGMEnv, "") // no default exporter: only the one the file names
	base, _ := gapsMock(t, mock.Config{Fast: true, GPUMetrics: true, GPUs: 1})
	port := base[strings.LastIndex(base, ":")+1:]
	dir := t.TempDir()
	writeFile(t, dir, "bench.yaml", strings.Join([]string{
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + base + "', streaming: true}",
		"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
		"  phases: {type: concurrency, concurrency: 2, requests: 8}",
		"  gpuTelemetry: " + base + "/dcgm/metrics",
		"  serverMetrics: http://localhost:" + port + "/metrics",
	}, "\n")+"\n")

	inv := cli(t, dir, "profile", "--config", "bench.yaml", "--ui", "none", "--artifact-dir", "out")
	require.Equal(t, 0, inv.code, inv.stderr)
	out := filepath.Join(dir, "out")
	assert.Contains(t, readJSON(t, filepath.Join(out, "profile_export_aiperf.json")), "telemetry_data")
	assert.FileExists(t, filepath.Join(out, "gpu_telemetry_export.jsonl"))
	sm := readJSON(t, filepath.Join(out, "server_metrics_export.json"))
	assert.Contains(t, sm["summary"].(map[string]any)["endpoints_configured"], "http://localhost:"+port+"/metrics")
	for _, name := range []string{"server_metrics_export.json", "server_metrics_export.csv", "server_metrics_export.parquet"} {
		assert.FileExists(t, filepath.Join(out, name))
	}

	inv = cli(t, dir, "profile", "--config", "bench.yaml", "--ui", "none", "--artifact-dir", "out2", "--server-metrics-formats", "json")
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "out2", "server_metrics_export.json"))
	assert.NoFileExists(t, filepath.Join(dir, "out2", "server_metrics_export.parquet"))
	assert.NoFileExists(t, filepath.Join(dir, "out2", "server_metrics_export.csv"))
}

// AIPerf's telemetry keys this tool does not honour are refused as not
// supported yet (never as unknown keys), each naming the file, line and
// key and what to do, with exit 2 before any request is sent.
func TestConfigGapsTelemetryRefusedBeforeTraffic(t *testing.T) {
	base, inference := gapsMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "bench.yaml", strings.Join([]string{
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + base + "', streaming: true}",
		"  phases: {type: concurrency, requests: 4}",
		"  gpu_telemetry:",
		"    collector: pynvml",
		"    mode: realtime_dashboard",
		"    metrics_file: gpu.csv",
		"  server_metrics:",
		"    discovery: {mode: kubernetes, namespace: llm}",
	}, "\n")+"\n")
	for _, args := range [][]string{{"config", "validate", "bench.yaml"}, {"profile", "--config", "bench.yaml", "--ui", "none"}} {
		inv := cli(t, dir, args...)
		assert.Equal(t, 2, inv.code, inv.stderr)
		for _, want := range []string{
			"bench.yaml:6: benchmark.gpu_telemetry.collector: pynvml (a local GPU collector) is not supported yet: GPU telemetry is read from DCGM exporters here",
			"bench.yaml:7: benchmark.gpu_telemetry.mode: realtime_dashboard (AIPerf's live GPU panel) is not supported yet: set mode: summary",
			"bench.yaml:8: benchmark.gpu_telemetry.metrics_file: metrics_file: (GPU metrics replayed from a CSV file) is not supported yet",
			"bench.yaml:10: benchmark.server_metrics.discovery.mode: kubernetes (finding the servers' /metrics through the Kubernetes API) is not supported yet: " +
				"list the servers' metrics URLs under server_metrics.urls",
			"bench.yaml:10: benchmark.server_metrics.discovery.namespace: namespace: (Kubernetes discovery of the servers' /metrics) is not supported yet",
		} {
			assert.Contains(t, inv.stderr, want, args)
		}
		assert.NotContains(t, inv.stderr, "unknown key")
	}
	assert.Zero(t, inference.Load(), "nothing is sent")
}

// AIPerf's ramping.yaml sets a prefill ramp on a phase without
// prefill_concurrency, which AIPerf ignores: the file is accepted with a
// note naming the key, and runs.
func TestConfigGapsPrefillRampWithoutCapRuns(t *testing.T) {
	base, inference := gapsMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "ramping.yaml", strings.Join([]string{
		`schemaVersion: "2.0"`,
		"benchmark:",
		"  model: mock-model",
		"  endpoint: {url: '" + base + "', type: chat, streaming: true}",
		"  dataset: {type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}",
		"  phases:",
		"    - {name: warmup, type: concurrency, concurrency: 2, concurrencyRamp: 0.1, requests: 2}",
		"    - name: profiling",
		"      type: concurrency",
		"      concurrency: 2",
		"      requests: 6",
		"      prefillRamp: 30s",
	}, "\n")+"\n")
	note := "ramping.yaml:12: benchmark.phases[1].prefillRamp: ramps prefill_concurrency, which this phase does not set: " +
		"ignored, as AIPerf does" // after "note: " and the file's absolute path
	inv := cli(t, dir, "config", "validate", "ramping.yaml")
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "note: "+filepath.Join(dir, note))
	inv = cli(t, dir, "profile", "--config", "ramping.yaml", "--ui", "none", "--artifact-dir", "out")
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.Contains(t, inv.stderr, "note: "+filepath.Join(dir, note))
	assert.EqualValues(t, 8, inference.Load())
}

// AIPerf's bundled templates that run here are bundled too: config init
// lists them, and every template config init writes (with the mock's URL)
// passes config validate without a note. The fixed schedule one runs as
// written, its eight timed requests all sent.
func TestConfigGapsBundledTemplates(t *testing.T) {
	added := []string{"http_trace_metrics", "fixed_schedule", "gpu_telemetry", "ramping", "embeddings", "multi_turn_conversation"}
	base, inference := gapsMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "config", "init", "--list")
	require.Equal(t, 0, inv.code, inv.stderr)
	for _, name := range added {
		assert.Contains(t, inv.stdout, " "+name+" ", "config init --list")
	}
	for _, tm := range starter.List() {
		file := tm.Name + ".yaml"
		inv := cli(t, dir, "config", "init", "-t", tm.Name, "-u", base, "-m", "mock-model", "-o", file)
		require.Equal(t, 0, inv.code, inv.stderr)
		inv = cli(t, dir, "config", "validate", file)
		assert.Equal(t, 0, inv.code, "%s: %s", tm.Name, inv.stderr)
		assert.NotContains(t, inv.stderr, "note:", tm.Name)
	}
	t.Setenv(plan.DefaultDCGMEnv, "")
	inv = cli(t, dir, "profile", "--config", "fixed_schedule.yaml", "--ui", "none", "--artifact-dir", "fixed")
	require.Equal(t, 0, inv.code, inv.stderr)
	assert.EqualValues(t, 8, inference.Load())
	assert.Equal(t, 8, countLines(t, filepath.Join(dir, "fixed", "profile_export.jsonl")))
}
