package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
)

// TestRawExportRedacted: --export-level raw writes each profiling
// request's payload and responses, as AIPerf's profile_export_raw.jsonl; a
// server echoing the secrets in its bodies (error JSON, an SSE error frame)
// gets none of them into it, nor anywhere else.
func TestRawExportRedacted(t *testing.T) {
	e := startEchoServer(t)
	dir := t.TempDir()
	args := append(quick(e.fullURL, "--api-key", leakAPIKey, "--request-count", "16", "--export-level", "raw",
		"--artifact-dir", "out"), leakHeaders()...)
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, "stdout:\n%s\nstderr:\n%s", inv.stdout, inv.stderr)

	path := filepath.Join(dir, "out", "profile_export_raw.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 16, "one line per profiling request")
	var streamed, echoed int
	for _, l := range lines {
		var line struct {
			Metadata struct {
				XRequestID string `json:"x_request_id"`
			} `json:"metadata"`
			StartPerfNs int64 `json:"start_perf_ns"`
			Payload     struct {
				Model    string           `json:"model"`
				Messages []map[string]any `json:"messages"`
				Stream   bool             `json:"stream"`
			} `json:"payload"`
			Status    int `json:"status"`
			Responses []struct {
				PerfNs  int64 `json:"perf_ns"`
				Packets []struct {
					Name, Value string
				} `json:"packets"`
				Text *string `json:"text"`
			} `json:"responses"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &line), l)
		assert.NotEmpty(t, line.Metadata.XRequestID)
		assert.Equal(t, "mock-model", line.Payload.Model, "the payload as sent")
		assert.NotEmpty(t, line.Payload.Messages)
		assert.True(t, line.Payload.Stream)
		if line.Status == 200 && len(line.Responses) > 2 {
			streamed++
			assert.Equal(t, "data", line.Responses[0].Packets[0].Name)
			assert.Positive(t, line.Responses[0].PerfNs)
		}
		if strings.Contains(l, plan.Redacted) {
			echoed++
		}
	}
	assert.Positive(t, streamed, "normal streams keep every event")
	assert.Positive(t, echoed, "the server's echoes are in the bodies, redacted")
	assertNoLeak(t, dir, inv.stdout, inv.stderr)
}
