package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/result"
)

// tracedRun is minimalRun with its requests traced: the first on a new
// connection, with --export-http-trace's reads and writes, the second on a
// reused one without them.
func tracedRun() *result.Run {
	run := minimalRun()
	r0, r1 := &run.Records[0], &run.Records[1]
	r0.Status, r1.Status = 200, 200
	r0.HTTP = &metrics.HTTPTrace{GetConnNs: 100, DNSStartNs: 200, DNSDoneNs: 300, ConnectStartNs: 300, ConnectDoneNs: 500,
		GotConnNs: 600, HeadersSentNs: 700, SentNs: 800, FirstByteNs: 5 * msNs, HeadersNs: 5*msNs + 10, BodyStartNs: 6 * msNs,
		BodyEndNs: 250 * msNs, BytesSent: 300, BytesReceived: 900, Writes: 1, Reads: 2, Full: true,
		RequestChunks: [][2]int64{{800, 300}}, ResponseChunks: [][2]int64{{5 * msNs, 400}, {250 * msNs, 500}},
		LocalAddr: "127.0.0.1:50000", RemoteAddr: "[::1]:8000"}
	r1.HTTP = &metrics.HTTPTrace{GetConnNs: 10*msNs + 1, GotConnNs: 10*msNs + 2, Reused: true, SentNs: 10*msNs + 3,
		BodyStartNs: 20 * msNs, BodyEndNs: 1510 * msNs, BytesSent: 300, BytesReceived: 800, Writes: 1, Reads: 3}
	run.Profiling = metrics.Summarize(run.Records, false)
	return run
}

// TestTraceDataInTheJSONL: with --export-http-trace a request's line has
// AIPerf's trace_data: wall-clock stamps (the send's wall time plus the
// offset from it), the reads and writes, the computed durations, the
// connection's ends, and no field for an event that did not happen; the
// metrics are in the line either way.
func TestTraceDataInTheJSONL(t *testing.T) {
	run := tracedRun()
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, run))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2)
	var first, second map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &second))

	td := first["trace_data"].(map[string]any)
	wall := func(ns int64) float64 { return float64(wallNs + ns) } // the first request was sent at 0
	assert.Equal(t, TraceType, td["trace_type"])
	assert.Equal(t, wall(600), td["request_send_start_ns"])
	assert.Equal(t, wall(800), td["request_send_end_ns"])
	assert.Equal(t, wall(6*msNs), td["response_receive_start_ns"])
	assert.Equal(t, wall(250*msNs), td["response_receive_end_ns"])
	assert.Equal(t, []any{[]any{wall(800), 300.0}}, td["request_chunks"])
	assert.Equal(t, []any{[]any{wall(5 * msNs), 400.0}, []any{wall(250 * msNs), 500.0}}, td["response_chunks"])
	assert.Equal(t, 900.0, td["response_bytes_total"])
	assert.Equal(t, 2.0, td["response_chunks_count"])
	assert.Equal(t, 200.0, td["response_status_code"])
	assert.Equal(t, "OK", td["response_reason"])
	assert.Equal(t, wall(200), td["dns_lookup_start_ns"])
	assert.Equal(t, wall(500), td["tcp_connect_end_ns"])
	assert.Equal(t, 100.0, td["dns_lookup_ns"])
	assert.Equal(t, 200.0, td["connecting_ns"])
	assert.Equal(t, 200.0, td["sending_ns"])
	assert.Equal(t, float64(250*msNs-600), td["duration_ns"])
	assert.Equal(t, "127.0.0.1", td["local_ip"])
	assert.Equal(t, 50000.0, td["local_port"])
	assert.Equal(t, "::1", td["remote_ip"])
	assert.Equal(t, 8000.0, td["remote_port"])
	for _, absent := range []string{"tls_handshake_start_ns", "connection_reused_ns", "error_timestamp_ns",
		"request_headers", "response_headers"} {
		assert.NotContains(t, td, absent)
	}
	assert.Contains(t, first["metrics"], metrics.TagHTTPWaiting)
	assert.Less(t, strings.Index(lines[0], `"metrics"`), strings.Index(lines[0], `"trace_data"`), "AIPerf's key order")
	assert.NotContains(t, first, "error", "a success has no error key, as AIPerf's exclude_none dump")

	assert.NotContains(t, second, "trace_data", "traced for its metrics only (--show-trace-timing)")
	m := second["metrics"].(map[string]any)
	assert.Equal(t, map[string]any{"value": 1.0, "unit": "ratio"}, m[metrics.TagHTTPConnectionReused])
	assert.Equal(t, map[string]any{"value": 800.0 / 1024, "unit": "KB"}, m[metrics.TagHTTPDataReceived])

	td = nil
	require.NoError(t, json.Unmarshal(mustLine(t, appendTraceData(nil, &run.Records[1])), &td))
	assert.Equal(t, float64(wallNs+10*msNs+2), td["connection_reused_ns"], "the reused connection's")
	assert.NotContains(t, td, "tcp_connect_start_ns")
	assert.NotContains(t, td, "dns_lookup_ns")
}

func mustLine(t *testing.T, b []byte) []byte {
	t.Helper()
	require.True(t, json.Valid(b), "%s", b)
	return b
}

// TestConsoleHTTPTraceTable: the HTTP Trace Timing table follows the main
// one with --show-trace-timing only, k6's phases in AIPerf's order.
func TestConsoleHTTPTraceTable(t *testing.T) {
	run := tracedRun()
	var buf bytes.Buffer
	Console(&buf, run)
	assert.NotContains(t, buf.String(), HTTPTraceTitle, "not asked for")
	assert.NotContains(t, buf.String(), "HTTP Blocked")

	run.Config.ShowTraceTiming = true
	buf.Reset()
	Console(&buf, run)
	out := buf.String()
	require.Contains(t, out, HTTPTraceTitle)
	table := out[strings.Index(out, HTTPTraceTitle):]
	last := -1
	for _, row := range []string{"HTTP Blocked (ms)", "HTTP DNS Lookup (ms)", "HTTP Connecting (ms)", "HTTP Sending (ms)",
		"HTTP Waiting (TTFB) (ms)", "HTTP Receiving (ms)", "HTTP Duration (excl. conn) (ms)", "HTTP Connection Overhead (ms)",
		"HTTP Total Time (ms)", "HTTP Data Sent (KB)", "HTTP Data Received (KB)", "HTTP Connection Reused (ratio)"} {
		at := strings.Index(table, row)
		require.GreaterOrEqual(t, at, 0, row)
		assert.Greater(t, at, last, "%s in order", row)
		last = at
	}
	assert.NotContains(t, table, "Chunks", "exported only, as AIPerf")
	assert.Less(t, strings.Index(out, "Request Latency"), strings.Index(out, HTTPTraceTitle), "after the main table")
}
