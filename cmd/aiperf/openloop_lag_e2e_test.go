package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// gatedLine is what these tests read of a profile_export.jsonl line.
type gatedLine struct {
	Metadata struct {
		ScheduledNs    int64  `json:"scheduled_ns"`
		SendLagNs      int64  `json:"send_lag_ns"`
		CreditIssuedNs *int64 `json:"credit_issued_ns"`
		TurnIndex      int    `json:"turn_index"`
		XCorrelationID string `json:"x_correlation_id"`
		RequestStartNs int64  `json:"request_start_ns"`
		RequestEndNs   int64  `json:"request_end_ns"`
	} `json:"metadata"`
}

// Open-loop replay against a server slower than the trace: each session's
// later turns come due (20 ms apart) while the previous reply (100 ms at
// least) is still coming, and wait for it. That wait is the server's: each
// such turn is scheduled at the end of the reply it waited for, so its send
// lag measures the client only, and the audit says the replies paced the
// run instead of blaming the client for the trace's rate.
func TestOpenLoopReplyWaitIsNotSendLag(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 100, ITL: 1})
	dir := t.TempDir()
	var rows [][]int
	for s := range 5 {
		rows = append(rows, []int{s * 50, s*50 + 20, s*50 + 40, s*50 + 60})
	}
	writeFile(t, dir, "trace.jsonl", sessionTrace(rows...))
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	inv := cliCtx(ctx, t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--endpoint-type", "chat",
		"--input-file", "trace.jsonl", "--artifact-dir", "out", "--no-store", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	var lines []gatedLine
	b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
	require.NoError(t, err)
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var g gatedLine
		require.NoError(t, json.Unmarshal([]byte(l), &g))
		lines = append(lines, g)
	}
	require.Len(t, lines, 20)
	sessions := map[string][]gatedLine{}
	for _, l := range lines {
		sessions[l.Metadata.XCorrelationID] = append(sessions[l.Metadata.XCorrelationID], l)
	}
	require.Len(t, sessions, 5)
	for id, turns := range sessions {
		slices.SortFunc(turns, func(a, b gatedLine) int { return a.Metadata.TurnIndex - b.Metadata.TurnIndex })
		for k := 1; k < len(turns); k++ {
			md, prev := turns[k].Metadata, turns[k-1].Metadata
			assert.Equal(t, prev.RequestEndNs, md.ScheduledNs, "session %s turn %d: scheduled when the reply it waited for ended", id, k)
			assert.Equal(t, md.RequestStartNs-md.ScheduledNs, md.SendLagNs)
			assert.GreaterOrEqual(t, md.SendLagNs, int64(0))
			require.NotNil(t, md.CreditIssuedNs)
			assert.LessOrEqual(t, md.ScheduledNs, *md.CreditIssuedNs, "scheduled ≤ issued ≤ sent")
			assert.LessOrEqual(t, *md.CreditIssuedNs, md.RequestStartNs)
		}
	}
	audit := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))["client_audit"].(map[string]any)
	warnings := ""
	for _, w := range audit["warnings"].([]any) {
		warnings += w.(string) + "\n"
	}
	assert.Contains(t, warnings, "15 of 20 sends were later turns that waited for their previous reply past their timestamp")
	assert.Contains(t, inv.stdout, "15 of 20 sends were later turns that waited for their previous reply")
}

// A fixed schedule whose first timestamp comes after --benchmark-duration
// would send nothing: refused before any traffic (exit 2), naming the
// duration, the first timestamp and the fixes; nothing is written.
func TestFixedScheduleAfterTheDurationExits2(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	writeFile(t, dir, "d1.jsonl", `{"timestamp":1000,"input_length":10,"output_length":2}
{"timestamp":1200,"input_length":11,"output_length":2}
`)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	inv := cliCtx(ctx, t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--input-file", "d1.jsonl", "--ui", "none",
		"--artifact-dir", "d1", "--benchmark-duration", "0.5")
	require.Equal(t, ExitUsage, inv.code, inv.stderr)
	msg := lineContaining(t, inv.stderr, "--benchmark-duration 0.5")
	assert.Contains(t, msg, "first timestamp 1000")
	assert.Contains(t, msg, "--fixed-schedule-auto-offset")
	assert.NotContains(t, inv.stdout, "Stored:")
	assert.NoDirExists(t, filepath.Join(dir, "d1"))
	assert.Zero(t, m.control().InferenceRequests)

	inv = cliCtx(ctx, t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--input-file", "d1.jsonl", "--ui", "none",
		"--artifact-dir", "d2", "--benchmark-duration", "0.5", "--fixed-schedule-auto-offset")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "d2", "profile_export.jsonl"))
}
