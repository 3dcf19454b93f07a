package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// TestReasoningUsageMetrics: a reasoning model's server usage reports its
// reasoning tokens (completion_tokens_details.reasoning_tokens): AIPerf's
// usage_reasoning_tokens, their total, and their difference from the
// client's own count of the reasoning text.
func TestReasoningUsageMetrics(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "gpt-oss-mock", "--tokenizer", "builtin", "-u", m.URL, "--streaming",
		"--ui", "none", "--isl", "16", "--osl", "16", "--request-count", "5", "--no-store", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	doc := readJSON(t, filepath.Join(dir, "out", report.JSONFile))
	usage := doc["usage_reasoning_tokens"].(map[string]any)
	assert.Equal(t, 4.0, usage["avg"], "the mock reasons for a quarter of its 16 tokens")
	assert.Equal(t, 5.0, usage["count"])
	assert.Equal(t, 20.0, metricAvg(t, doc, "total_usage_reasoning_tokens"))
	assert.Contains(t, doc, "reasoning_token_count", "the client counted the reasoning text")
	assert.Contains(t, doc, "usage_reasoning_tokens_diff_pct")
	assert.Contains(t, inv.stdout, "Usage Reasoning Tokens (tokens)", "in the Usage table")
}

// TestGPUPowerEfficiency: with the GPUs' DCGM telemetry scraped, AIPerf's
// NVIDIA power-efficiency metrics: their energy over the profiling phase
// (the energy counter's increase) against the run's tokens, requests and
// concurrency, in the console's own section and the exports.
func TestGPUPowerEfficiency(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1, GPUMetrics: true, GPUs: 2})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "16", "--gpu-telemetry",
		m.URL+"/dcgm/metrics", "--no-store", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, report.PowerTitle)
	assert.Contains(t, inv.stdout, "Output Tokens per Joule (tokens/J)")
	doc := readJSON(t, filepath.Join(dir, "out", report.JSONFile))
	energy := metricAvg(t, doc, "nvidia_total_gpu_energy")
	require.Positive(t, energy)
	osl := metricAvg(t, doc, "total_osl")
	assert.InDelta(t, osl/energy, metricAvg(t, doc, "nvidia_output_tokens_per_joule"), 1e-9)
	assert.InDelta(t, energy*1e3/osl, metricAvg(t, doc, "nvidia_energy_per_output_token"), 1e-9)
	assert.InDelta(t, energy/2, metricAvg(t, doc, "nvidia_energy_per_user"), 1e-9, "over --concurrency 2")
	assert.InDelta(t, energy/16, metricAvg(t, doc, "nvidia_energy_per_request"), 1e-9)
	power := metricAvg(t, doc, "nvidia_total_gpu_power")
	assert.GreaterOrEqual(t, power, 2*70.0, "two GPUs of at least the mock's idle 70 W")
	assert.LessOrEqual(t, power, 2*700.0)
	avg := metricAvg(t, doc, "nvidia_average_gpu_power")
	assert.InDelta(t, metricAvg(t, doc, "request_throughput")/avg, metricAvg(t, doc, "nvidia_performance_per_watt"), 1e-9)
	assert.NotContains(t, doc, "nvidia_goodput_per_watt", "no --goodput")
}

// TestRunsExportKeepsGPUTelemetry: a run exported from the store carries
// the GPU telemetry its own export had (telemetry_data, the CSV's GPU
// section), every GPU with every statistic.
func TestRunsExportKeepsGPUTelemetry(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 5, ITL: 1, GPUMetrics: true, GPUs: 2})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "8", "--gpu-telemetry", m.URL+"/dcgm/metrics",
		"--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	telemetry := func(doc map[string]any) map[string]any {
		t.Helper()
		data, ok := doc["telemetry_data"].(map[string]any)
		require.True(t, ok, "telemetry_data")
		return data
	}
	ran := telemetry(readJSON(t, filepath.Join(dir, "out", report.JSONFile)))
	require.NotEmpty(t, ran["endpoints"])

	inv = cli(t, dir, "runs", "export", "1", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &doc))
	stored := telemetry(doc)
	assert.Equal(t, ran["endpoints"], stored["endpoints"])
	summary := stored["summary"].(map[string]any)
	assert.Less(t, summary["start_time"], summary["end_time"], "the collection's bounds")

	gpuSection := func(csv string) string {
		t.Helper()
		i := strings.Index(csv, "Endpoint,GPU_Index,")
		require.GreaterOrEqual(t, i, 0, "a GPU section")
		return csv[i:]
	}
	inv = cli(t, dir, "runs", "export", "1", "--format", "csv")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	section := gpuSection(inv.stdout)
	assert.Equal(t, gpuSection(readFile(t, filepath.Join(dir, "out", "profile_export_aiperf.csv"))), section)
	assert.Greater(t, strings.Count(section, "\n"), 10, "a row per GPU and metric")
}

// TestRunsExportKeepsClientAudit: a run exported from the store carries
// the client audit its own export had, the requests cut on purpose
// (cut, cut_on_purpose) included.
func TestRunsExportKeepsClientAudit(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 10, ITL: 100})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "8", "--request-cancellation-rate", "50",
		"--random-seed", "1", "--request-cancellation-delay", "0.05", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	ran := readJSON(t, filepath.Join(dir, "out", report.JSONFile))["client_audit"].(map[string]any)
	require.Positive(t, ran["cut_on_purpose"], "half of 8 are picked")
	require.Equal(t, ran["cut"], ran["cut_on_purpose"])

	inv = cli(t, dir, "runs", "export", "1", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &doc))
	assert.Equal(t, ran, doc["client_audit"])
}

// TestSpecDecodeAcceptanceMetrics: a server reporting each request's
// speculative-decoding acceptance (vLLM's metrics.speculative_decoding,
// the mock's --spec-decode-stats) gets AIPerf's Spec Decode section, its
// metrics and pooled histogram in the JSON export and each record's
// acceptance in the JSONL; every reply's verify steps and accepted drafts
// are its tokens, so over the run they are the server's completion tokens.
func TestSpecDecodeAcceptanceMetrics(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, SpecDecodeStats: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--osl", "16", "--request-count", "6", "--no-store", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, report.SpecDecodeTitle)
	assert.Contains(t, inv.stdout, "Accepted drafts per step (% of steps): 0: 33%   1: 17%   2: 17%   3: 17%   4: 17%")
	doc := readJSON(t, filepath.Join(dir, "out", report.JSONFile))
	steps, accepted := metricAvg(t, doc, "total_spec_decode_steps"), metricAvg(t, doc, "total_accepted_draft_tokens")
	assert.Equal(t, 36.0, steps, "six steps per 16-token reply")
	assert.Equal(t, metricAvg(t, doc, "total_usage_completion_tokens"), steps+accepted)
	assert.Equal(t, map[string]any{"0": 12.0, "1": 6.0, "2": 6.0, "3": 6.0, "4": 6.0}, doc["pooled_spec_decode_acceptance_histogram"])
	assert.InDelta(t, 1+accepted/steps, metricAvg(t, doc, "spec_decode_token_weighted_acceptance_length"), 1e-12)
	sum, n := jsonlMetricSum(t, filepath.Join(dir, "out", report.JSONLFile), "spec_decode_steps")
	assert.Equal(t, steps, sum)
	assert.Equal(t, 6, n)

	// The server's own counters over the profiling phase say the same.
	var exp serverExport
	b, err := os.ReadFile(filepath.Join(dir, "out", "server_metrics_export.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &exp))
	total := func(family string) float64 {
		f := exp.Metrics[family]
		require.Len(t, f.Series, 1, family)
		return f.Series[0].Stats["total"]
	}
	assert.Equal(t, steps, total("vllm:spec_decode_num_drafts"))
	assert.Equal(t, accepted, total("vllm:spec_decode_num_accepted_tokens"))
	assert.Equal(t, metricAvg(t, doc, "total_draft_tokens"), total("vllm:spec_decode_num_draft_tokens"))
	assert.Contains(t, inv.stdout, "Spec decode acceptance rate", "in the Server section")
}
