package servermetrics

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// vllmExposition is a vLLM-like exposition at step i: gauges, counters (one
// labelled), a histogram, an untyped family, an info family and a summary.
func vllmExposition(i int) string {
	l := `model_name="m",engine="0"`
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n"+
		"vllm:num_requests_running{%s} %d\n", l, []int{0, 4, 8, 6, 0}[i])
	fmt.Fprintf(&b, "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\n"+
		"vllm:prompt_tokens_total{%s} %d\n", l, 1000+700*i)
	fmt.Fprintf(&b, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n"+
		"vllm:request_success_total{%s,finished_reason=\"length\"} %d\nvllm:request_success_total{%s,finished_reason=\"stop\"} %d\n", l, 10+3*i, l, 5+i)
	fmt.Fprintf(&b, "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n"+
		"# TYPE vllm:time_to_first_token_seconds histogram\n")
	for j, le := range []string{"0.01", "0.1", "1.0", "+Inf"} {
		fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{%s,le=%q} %d\n", l, le, []int{2, 10 + 2*i, 12 + 4*i, 13 + 4*i}[j])
	}
	fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_count{%s} %d\nvllm:time_to_first_token_seconds_sum{%s} %g\n", l, 13+4*i, l, 1.5+0.25*float64(i))
	fmt.Fprintf(&b, "# TYPE process_open_fds untyped\nprocess_open_fds %d\n", 40+i)
	fmt.Fprintf(&b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n"+
		"vllm:cache_config_info{block_size=\"16\",enable_prefix_caching=\"True\"} 1.0\n")
	fmt.Fprintf(&b, "# TYPE rpc_seconds summary\nrpc_seconds{quantile=\"0.5\"} 0.2\nrpc_seconds_sum %d\nrpc_seconds_count %d\n", i, 2*i)
	return b.String()
}

// dcgmExposition is two GPUs at step i.
func dcgmExposition(i int) string {
	var b strings.Builder
	for _, f := range []struct {
		name, help string
		v          func(gpu int) float64
	}{
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", func(g int) float64 { return float64(10*i + g) }},
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", func(int) float64 { return 73403 }},
		{"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", func(g int) float64 { return 100 + 50*float64(i) + float64(g) }},
		{"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", func(int) float64 { return 1980 }},
		{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries (in count).", func(int) float64 { return 0 }},
	} {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, f.help, f.name)
		for g := range 2 {
			fmt.Fprintf(&b, "%s{gpu=\"%d\",UUID=\"GPU-%d\",pci_bus_id=\"00000000:1%d:00.0\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\"} %g\n",
				f.name, g, g, g, g, f.v(g))
		}
	}
	// DCGM's energy counter, in mJ since boot: 1 kJ a step on GPU 0, 2 on GPU 1.
	b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n" +
		"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
	for g := range 2 {
		fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\"} %d\n",
			g, g, 5_000_000_000+int64(i)*int64(g+1)*1_000_000)
	}
	return b.String()
}

// fixture is a run over the two exporters on a fake clock: the baseline
// at 0 s, profiling from 1 s to 4.5 s with scrapes each second, 2 s slices.
func fixture(t *testing.T) (Result, func(string) string) {
	srv, gpu := newExporter(t, vllmExposition(0)), newExporter(t, dcgmExposition(0))
	var clock int64
	c := collect(t, Options{Endpoints: []Target{{URL: srv.url, Source: SourceServer}, {URL: gpu.url, Source: SourceGPU}},
		Now: func() int64 { return clock }, SliceDuration: 2 * time.Second, Warmup: []string{"step"}})
	clock = 1e9
	c.Mark("profiling", true)
	for i := 1; i <= 3; i++ {
		clock += 1e9
		srv.set(vllmExposition(i))
		gpu.set(dcgmExposition(i))
		c.Mark("step", true)
	}
	clock += 5e8
	srv.set(vllmExposition(4))
	gpu.set(dcgmExposition(4))
	c.Mark("profiling", false)
	r := c.Stop()
	require.Empty(t, r.Warnings)
	hosts := strings.NewReplacer(strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/metrics"), "vllm:8000",
		strings.TrimSuffix(strings.TrimPrefix(gpu.url, "http://"), "/metrics"), "dcgm:9400")
	return r, hosts.Replace
}

var meta = Meta{ToolVersion: "0.0.0-test", BenchmarkID: "b-1", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	InputConfig: map[string]any{"model": "m"}}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

// The exports have AIPerf's shape, down to key order: golden files.
func TestExportsGolden(t *testing.T) {
	r, hosts := fixture(t)
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"server_metrics_export.json", func(b *bytes.Buffer) error { return WriteJSON(b, &r, "", meta) }},
		{"server_metrics_export.csv", func(b *bytes.Buffer) error { return WriteCSV(b, &r, "", meta) }},
		{"server_metrics_export.jsonl", func(b *bytes.Buffer) error { return WriteJSONL(b, &r, meta) }},
		{"telemetry_data.json", func(b *bytes.Buffer) error { return WriteGPUJSON(b, &r, "", meta) }},
		{"gpu_telemetry.csv", func(b *bytes.Buffer) error { return WriteGPUCSV(b, &r, "") }},
		{"gpu_telemetry_export.jsonl", func(b *bytes.Buffer) error { return WriteGPUJSONL(b, &r, meta) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, tc.write(&b))
			golden(t, tc.file, hosts(b.String()))
		})
	}
}

// The JSON export reads as AIPerf's readers expect: the documented access
// paths give the phase's figures.
func TestJSONExportAccessPaths(t *testing.T) {
	r, _ := fixture(t)
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, &r, "", meta))
	var doc struct {
		SchemaVersion string `json:"schema_version"`
		Summary       struct {
			EndpointsConfigured []string `json:"endpoints_configured"`
			StartTime           string   `json:"start_time"`
		}
		Metrics map[string]struct {
			Type   string
			Unit   string
			Series []struct {
				EndpointURL string             `json:"endpoint_url"`
				Labels      map[string]string  `json:"labels"`
				Stats       map[string]float64 `json:"stats"`
				Buckets     map[string]float64 `json:"buckets"`
			}
		}
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Equal(t, "1.0", doc.SchemaVersion)
	assert.Equal(t, "2026-01-02T03:04:05.000000", doc.Summary.StartTime)
	prompt := doc.Metrics["vllm:prompt_tokens"]
	assert.Equal(t, "counter", prompt.Type)
	assert.Equal(t, "tokens", prompt.Unit)
	assert.Equal(t, 2800.0, prompt.Series[0].Stats["total"], "1000 → 3800 between the marks")
	assert.InDelta(t, 2800/3.5, prompt.Series[0].Stats["rate"], 1e-9)
	ttft := doc.Metrics["vllm:time_to_first_token_seconds"].Series[0]
	assert.Equal(t, 16.0, ttft.Stats["count"])
	assert.Equal(t, map[string]float64{"0.01": 0, "0.1": 8, "1": 16, "+Inf": 16}, ttft.Buckets)
	assert.Len(t, doc.Metrics["vllm:request_success"].Series, 2)
	assert.NotContains(t, doc.Metrics, "rpc_seconds", "summaries are left out")
	assert.Equal(t, "unknown", doc.Metrics["process_open_fds"].Type)
	assert.NotContains(t, doc.Metrics, "DCGM_FI_DEV_GPU_UTIL", "GPU telemetry has its own export")
}

// Exports of a Result read back from JSON: the summaries work, the time
// series need the collecting process's samples.
func TestExportsOfAStoredResult(t *testing.T) {
	r, _ := fixture(t)
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	var back Result
	require.NoError(t, json.Unmarshal(raw, &back))
	var a, b bytes.Buffer
	require.NoError(t, WriteJSON(&a, &r, "", meta))
	require.NoError(t, WriteJSON(&b, &back, "", meta))
	assert.Equal(t, a.String(), b.String())
	assert.ErrorIs(t, WriteJSONL(&b, &back, meta), ErrNoSamples)
	assert.ErrorIs(t, WriteGPUJSONL(&b, &back, meta), ErrNoSamples)
	assert.ErrorIs(t, WriteParquet(&b, &back, meta), ErrNoSamples)
	assert.Equal(t, Headline(&r), Headline(&back))
}
