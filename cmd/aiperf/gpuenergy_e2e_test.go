package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

// untrueDCGM serves two GPUs: GPU 0 draws 300 W and its energy counter
// grows, GPU 1 draws 50,000 W (no GPU can) and its energy counter falls
// on every scrape (the exporter is wrong).
func untrueDCGM(t *testing.T) string {
	t.Helper()
	var scrapes atomic.Int64
	start := time.Now()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := scrapes.Add(1)
		gpu0 := 1e9 + time.Since(start).Milliseconds()*300 // mJ: 300 W
		var b strings.Builder
		b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		for g, watts := range []int{300, 50_000} {
			fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\"} %d\n", g, g, watts)
		}
		b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n" +
			"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
		for g, mj := range []int64{gpu0, 1e9 - i*1000} {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%d\"} %d\n", g, g, mj)
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/metrics"
}

// TestGPUPowerEfficiencyRefusesUntrueTelemetry: a GPU whose power draw no
// GPU reaches and whose energy counter falls on every scrape makes every
// power-efficiency metric summed from it untrue: none is printed, exported
// or stored as a number (the GPUs' energy would cover GPU 0 alone, their
// power sum 50,300 W), and a warning says which and why.
func TestGPUPowerEfficiencyRefusesUntrueTelemetry(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--concurrency", "2", "--request-count", "40", "--server-metrics-interval", "0.01",
		"--gpu-telemetry", untrueDCGM(t), "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	tags := []string{"nvidia_total_gpu_power", "nvidia_total_gpu_energy", "nvidia_average_gpu_power", "nvidia_energy_per_request",
		"nvidia_output_tokens_per_joule", "nvidia_energy_per_output_token", "nvidia_energy_per_user", "nvidia_performance_per_watt"}
	doc := readJSON(t, filepath.Join(dir, "out", report.JSONFile))
	csv := readFile(t, filepath.Join(dir, "out", "profile_export_aiperf.csv"))
	for _, tag := range tags {
		assert.NotContains(t, doc, tag, "the JSON export")
	}
	for _, header := range []string{"Total GPU Power (W)", "Total GPU Energy (J)", "Energy per Request", "Output Tokens per Joule"} {
		assert.NotContains(t, csv, header, "the CSV export")
	}
	assert.NotContains(t, inv.stdout, report.PowerTitle, "no power-efficiency row is left to show")
	assert.NotContains(t, inv.stdout, "│ Total GPU Power")
	out := inv.stdout + inv.stderr
	assert.Contains(t, out, "Total GPU Power left out of the console, the exports and the store")
	assert.Contains(t, out, "GPU 1 DCGM_FI_DEV_POWER_USAGE: avg 50,000.00 W, above 10000 W for one GPU")
	assert.Contains(t, out, "Total GPU Energy")
	assert.Contains(t, out, "GPU 1 DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: the counter fell")

	inv = cli(t, dir, "runs", "export", "1", "--format", "json")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	var stored map[string]any
	require.NoError(t, json.Unmarshal([]byte(inv.stdout), &stored))
	for _, tag := range tags {
		assert.NotContains(t, stored, tag, "the store")
	}
	inv = cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stdout, "│ Total GPU Power")
	assert.Contains(t, inv.stdout, "Total GPU Power left out", "the stored run keeps the warning")
}
