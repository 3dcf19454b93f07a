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

// TestWorkersTraceTheirRequests: the worker processes of --workers trace
// their requests too, and each trace comes onto the coordinator's clock
// with its record: its wall-clock send follows the record's start by what
// the connection took, not by the distance between two processes' clocks.
func TestWorkersTraceTheirRequests(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--tokenizer", tinyTokenizer(t), "--concurrency", "4", "--request-count", "20",
		"--workers", "2", "--export-http-trace", "--artifact-dir", "out", "--no-store")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 20)
	for _, l := range lines {
		var line struct {
			Metadata struct {
				Start int64 `json:"request_start_ns"`
				End   int64 `json:"request_end_ns"`
			} `json:"metadata"`
			TraceData struct {
				SendStart  int64 `json:"request_send_start_ns"`
				ReceiveEnd int64 `json:"response_receive_end_ns"`
			} `json:"trace_data"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &line))
		md, td := line.Metadata, line.TraceData
		require.NotZero(t, td.SendStart, "a worker's record has its trace_data")
		assert.GreaterOrEqual(t, td.SendStart, md.Start, "the connection is had after the send began")
		assert.LessOrEqual(t, td.ReceiveEnd, md.End, "the body is read before the request ends")
	}
}
