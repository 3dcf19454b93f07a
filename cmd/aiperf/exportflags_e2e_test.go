package main

import (
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

// Tests of AIPerf's export flags and fields (issue 25, requirement 5)
// against the mock: outputs.json, the JSONL's credit fields, --plot-required.

// TestJSONLCreditFields: profile_export.jsonl's metadata carries AIPerf's
// request_num (issue order within the profiling phase, from 0, the warmup
// not counted), credit_issued_ns ≤ credit_received_ns ≤ request_start_ns
// (wall clock) and clock_offset_ns, in AIPerf's key order.
func TestJSONLCreditFields(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	out := profileOut(t, m.URL, "--request-count", "6", "--warmup-request-count", "3", "--concurrency", "2")
	raw, err := os.ReadFile(filepath.Join(out, "profile_export.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, 6)
	var nums []int
	for _, line := range lines {
		var rec struct {
			Metadata struct {
				RequestNum       int   `json:"request_num"`
				CreditIssuedNs   int64 `json:"credit_issued_ns"`
				CreditReceivedNs int64 `json:"credit_received_ns"`
				RequestStartNs   int64 `json:"request_start_ns"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		md := rec.Metadata
		nums = append(nums, md.RequestNum)
		assert.Positive(t, md.CreditIssuedNs, line)
		assert.LessOrEqual(t, md.CreditIssuedNs, md.CreditReceivedNs, line)
		assert.LessOrEqual(t, md.CreditReceivedNs, md.RequestStartNs, line)
		assert.Regexp(t, `^\{"metadata":\{"request_num":\d+,"session_num":\d+,.*"turn_index":\d+,"credit_issued_ns":\d+,`+
			`"credit_received_ns":\d+,"request_start_ns":.*"was_cancelled":false,"clock_offset_ns":0,"phase":`, line)
		assert.NotContains(t, line, "null", "None is left out, as AIPerf's exclude_none dump")
	}
	slices.Sort(nums)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, nums, "the profiling phase's issue order, the warmup's not counted")
}

// TestExportOutputsJSON: --export-outputs-json writes AIPerf's outputs.json:
// every profiling request under data and the warmup's under warmup, sorted
// by session and turn, each with its generated text (whose client count is
// its output_token_count) and AIPerf's allowlisted metrics;
// --export-level raw implies it, --no-export-outputs-json opts out, and a
// --profile-export-prefix names it.
func TestExportOutputsJSON(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	count := countTokens()
	for _, tc := range []struct {
		flags []string
		file  string // "" none
	}{
		{[]string{"--export-outputs-json"}, "outputs.json"},
		{[]string{"--export-level", "raw"}, "outputs.json"},
		{[]string{"--export-level", "raw", "--no-export-outputs-json"}, ""},
		{[]string{"--export-outputs-json", "--profile-export-prefix", "foo"}, "foo_outputs.json"},
		{nil, ""},
	} {
		dir := t.TempDir()
		inv := cli(t, dir, quick(m.URL, append([]string{"--request-count", "5", "--warmup-request-count", "2", "--session-turns-mean", "1",
			"--artifact-dir", "out", "--no-store"}, tc.flags...)...)...)
		require.Equal(t, ExitOK, inv.code, "%v: %s", tc.flags, inv.stderr)
		out := filepath.Join(dir, "out")
		if tc.file == "" {
			assert.NoFileExists(t, filepath.Join(out, "outputs.json"), "%v", tc.flags)
			continue
		}
		var doc struct {
			SchemaVersion string           `json:"schema_version"`
			Data, Warmup  []map[string]any // AIPerf's entries, read as any reader would
		}
		b, err := os.ReadFile(filepath.Join(out, tc.file))
		require.NoError(t, err, "%v", tc.flags)
		require.NoError(t, json.Unmarshal(b, &doc))
		assert.Equal(t, "1.1", doc.SchemaVersion)
		require.Len(t, doc.Data, 5, "%v", tc.flags)
		assert.Len(t, doc.Warmup, 2, "%v", tc.flags)
		for i, e := range doc.Data {
			assert.Equal(t, "profiling", e["benchmark_phase"])
			if i > 0 {
				assert.Less(t, doc.Data[i-1]["session_num"], e["session_num"], "sorted by session")
			}
			text, ok := e["response_text"].(string)
			require.True(t, ok, "%v: request %v: response_text %v", tc.flags, e["x_request_id"], e["response_text"])
			assert.NotEmpty(t, text)
			ms := e["metrics"].(map[string]any)
			assert.EqualValues(t, count(text), ms["output_token_count"], "the text counted is the text written")
			assert.Less(t, e["request_start_ns"], e["request_end_ns"])
			for _, tag := range []string{"input_sequence_length", "output_sequence_length", "request_latency",
				"time_to_first_token", "inter_token_latency"} {
				assert.Contains(t, ms, tag)
			}
			assert.Len(t, ms, 6, "AIPerf's allowlist only")
		}
		assert.Equal(t, "warmup", doc.Warmup[0]["benchmark_phase"])
	}
	inv := cli(t, "", quick(m.URL, "--export-outputs-json", "--workers", "2", "--concurrency", "2")...)
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--export-outputs-json is not available with --workers 2")
}

// TestPlotRequired: an --auto-plot that cannot draw (its plots directory
// is a file) is a warning, or with --plot-required a failed run (exit 1)
// whose results are still stored and exported; --no-auto-plot draws
// nothing. --transport http, --max-workers and
// --no-parameter-sweep-same-seed are AIPerf's names, accepted.
func TestPlotRequired(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	for _, tc := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"--auto-plot"}, ExitOK, "warning: auto-plot failed"},
		{[]string{"--auto-plot", "--plot-required"}, ExitFailure, "auto-plot failed (--plot-required; the results are stored and exported"},
		{[]string{"--auto-plot", "--no-auto-plot", "--plot-required"}, ExitOK, ""},
		{[]string{"--transport", "http", "--max-workers", "4", "--no-parameter-sweep-same-seed"}, ExitOK, ""},
	} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "out"), "plots", "not a directory")
		inv := cli(t, dir, quick(m.URL, append([]string{"--request-count", "2", "--artifact-dir", "out"}, tc.flags...)...)...)
		assert.Equal(t, tc.code, inv.code, "%v: %s", tc.flags, inv.stderr)
		assert.FileExists(t, filepath.Join(dir, "out", "profile_export_aiperf.json"), "%v", tc.flags)
		assert.Contains(t, inv.stdout, "Stored: run 1", "%v", tc.flags)
		if tc.want == "" {
			assert.NotContains(t, inv.stderr, "auto-plot", "%v", tc.flags)
		} else {
			assert.Contains(t, inv.stderr, tc.want, "%v", tc.flags)
		}
	}
}
