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
)

// TestNetworkLatencyMean: a given round trip (AIPerf's
// --network-latency-mean) shifts TTFT and request latency by exactly that
// much, leaves their spread and the raw metrics alone, and shows on the
// console; nothing is probed.
func TestNetworkLatencyMean(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 40, ITL: 2})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "8", "--network-latency-mean", "5.0", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	exp := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 5.0, metricAvg(t, exp, "network_rtt"))
	for adjusted, source := range map[string]string{"network_adjusted_time_to_first_token": "time_to_first_token",
		"network_adjusted_request_latency": "request_latency"} {
		a, s := exp[adjusted].(map[string]any), exp[source].(map[string]any)
		for _, stat := range []string{"avg", "min", "max", "p50", "p99"} {
			assert.InDelta(t, s[stat].(float64)-5, a[stat].(float64), 1e-9, "%s %s", adjusted, stat)
		}
		assert.Equal(t, s["std"], a["std"])
	}
	assert.Contains(t, inv.stdout, "Network-Adjusted Time to First Token (ms)")
	assert.Contains(t, inv.stdout, "Network RTT (ms)")
	assert.NoFileExists(t, filepath.Join(dir, "out", "profile_export_network_latency.jsonl"), "nothing probed")
}

// TestNetworkLatencyAutomatic: AIPerf's probing writes every TCP handshake
// to profile_export_network_latency.jsonl, at least five successful ones,
// and network_rtt is their mean.
func TestNetworkLatencyAutomatic(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 20, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "8", "--network-latency-automatic",
		"--network-latency-ping-interval", "0.05", "--artifact-dir", "out")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_network_latency.jsonl"))
	require.NoError(t, err)
	var sum float64
	var ok int
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var s struct {
			TimestampNs int64    `json:"timestamp_ns"`
			TargetURL   string   `json:"target_url"`
			TargetPort  int      `json:"target_port"`
			ProbeType   string   `json:"probe_type"`
			RTTNs       *float64 `json:"rtt_ns"`
			Success     bool     `json:"success"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &s))
		assert.Equal(t, "tcp_connect", s.ProbeType)
		assert.Equal(t, m.URL, s.TargetURL)
		assert.Positive(t, s.TimestampNs)
		if s.Success {
			ok++
			sum += *s.RTTNs
		}
	}
	assert.GreaterOrEqual(t, ok, 5)
	exp := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.InDelta(t, sum/float64(ok)/1e6, metricAvg(t, exp, "network_rtt"), 2e-6, "the mean of the successful probes, in ms")
	assert.Contains(t, exp, "network_adjusted_time_to_first_token")
	assert.Contains(t, exp, "network_adjusted_request_latency")
}
