package main

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
)

// exported is one profile_export.jsonl line: its request ID and its TTFT
// and request latency, in ms.
type exported struct {
	id            string
	ttft, latency float64
}

func readRecords(t *testing.T, path string) []exported {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []exported
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Metadata struct {
				XRequestID string `json:"x_request_id"`
			} `json:"metadata"`
			Metrics struct {
				TTFT    struct{ Value float64 } `json:"time_to_first_token"`
				Latency struct{ Value float64 } `json:"request_latency"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		out = append(out, exported{l.Metadata.XRequestID, l.Metrics.TTFT.Value, l.Metrics.Latency.Value})
	}
	require.NoError(t, sc.Err())
	return out
}

// assertStats checks an export's statistics block against the distribution
// of want (ms).
func assertStats(t *testing.T, export map[string]any, tag string, want []float64) {
	t.Helper()
	block, ok := export[tag].(map[string]any)
	require.True(t, ok, "export has no %s", tag)
	st := metrics.Compute(want)
	for stat, v := range map[string]float64{"avg": st.Avg, "min": st.Min, "max": st.Max, "p50": st.P50, "p90": st.P90,
		"std": st.Std, "sum": st.Sum} {
		assert.InDelta(t, v, block[stat].(float64), 1e-6, "%s %s", tag, stat)
	}
	assert.Equal(t, float64(st.Count), block["count"], tag)
}

// TestNetworkRTTPerOrigin: with two servers, each request's latencies are
// adjusted by its own server's round trip (the mean of that server's
// probes), network_rtt is the mean taken out, and the audit says which
// round trip went with which server.
func TestNetworkRTTPerOrigin(t *testing.T) {
	var mu sync.Mutex
	origin := map[string]int{} // X-Request-ID → server
	record := func(i int) func(http.Handler) http.Handler {
		return func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id := r.Header.Get("X-Request-ID"); id != "" {
					mu.Lock()
					origin[id] = i
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			})
		}
	}
	a := startMockBehind(t, mock.Config{TTFT: 5, ITL: 1}, record(0))
	b := startMockBehind(t, mock.Config{TTFT: 5, ITL: 1}, record(1))
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", a.URL, "-u", b.URL, "--streaming", "--ui", "none",
		"--isl", "16", "--osl", "4", "--num-dataset-entries", "4", "--request-count", "10", "--no-server-metrics",
		"--network-latency-automatic", "--network-latency-ping-interval", "0.05", "--artifact-dir", "out")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	// Each server's round trip, from its own probes.
	b2, err := os.ReadFile(filepath.Join(dir, "out", "profile_export_network_latency.jsonl"))
	require.NoError(t, err)
	var sum [2]float64
	var n [2]int
	for _, line := range strings.Split(strings.TrimSpace(string(b2)), "\n") {
		var s struct {
			TargetURL string   `json:"target_url"`
			RTTNs     *float64 `json:"rtt_ns"`
			Success   bool     `json:"success"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &s))
		i := slices.Index([]string{a.URL, b.URL}, s.TargetURL)
		require.GreaterOrEqual(t, i, 0, s.TargetURL)
		if s.Success {
			sum[i] += *s.RTTNs
			n[i]++
		}
	}
	require.Positive(t, n[0])
	require.Positive(t, n[1])
	rtt := [2]float64{math.Trunc(sum[0]/float64(n[0])) / 1e6, math.Trunc(sum[1]/float64(n[1])) / 1e6} // ms, from whole ns

	var ttft, latency []float64
	var taken float64
	for _, r := range readRecords(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
		mu.Lock()
		i, ok := origin[r.id]
		mu.Unlock()
		require.True(t, ok, "request %s reached a server", r.id)
		ttft = append(ttft, max(0, r.ttft-rtt[i]))
		latency = append(latency, max(0, r.latency-rtt[i]))
		taken += rtt[i]
	}
	require.Len(t, ttft, 10)
	exp := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assertStats(t, exp, "network_adjusted_time_to_first_token", ttft)
	assertStats(t, exp, "network_adjusted_request_latency", latency)
	assert.InDelta(t, taken/10, metricAvg(t, exp, "network_rtt"), 1e-5, "the mean round trip taken out")
	warnings, _ := exp["client_audit"].(map[string]any)["warnings"].([]any)
	var said bool
	for _, w := range warnings {
		s, _ := w.(string)
		said = said || (strings.Contains(s, "network_rtt per server") && strings.Contains(s, a.URL) && strings.Contains(s, b.URL))
	}
	assert.True(t, said, "the audit says which round trip went with which server: %v", warnings)
}

// TestNetworkAdjustedClampIsCoherent: a round trip above some requests'
// raw values floors those requests at 0, and the adjusted metrics are the
// statistics of the floored per-request values (mean, sum, spread and
// extremes agreeing), not each statistic clamped on its own.
func TestNetworkAdjustedClampIsCoherent(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 8, ITL: 1})
	for _, given := range []string{"8.3", "1000"} {
		dir := t.TempDir()
		inv := cli(t, dir, quick(m.URL, "--request-count", "12", "--no-server-metrics", "--network-latency-mean", given,
			"--artifact-dir", "out")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		rtt := map[string]float64{"8.3": 8.3, "1000": 1000}[given]
		var ttft, latency []float64
		for _, r := range readRecords(t, filepath.Join(dir, "out", "profile_export.jsonl")) {
			ttft = append(ttft, max(0, r.ttft-rtt))
			latency = append(latency, max(0, r.latency-rtt))
		}
		exp := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
		assertStats(t, exp, "network_adjusted_time_to_first_token", ttft)
		assertStats(t, exp, "network_adjusted_request_latency", latency)
	}
}
