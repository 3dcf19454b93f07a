package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

// topLevelKeys returns the keys of a JSON object in document order.
func topLevelKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestWriteJSON(t *testing.T) {
	run := fixtureRun(t)
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, run))

	assert.Equal(t, []string{
		"schema_version", "aiperf_version", "benchmark_id", "start_time", "end_time", "was_cancelled", "run_info",
		"time_to_first_token", "time_to_second_token", "time_to_first_output_token", "request_latency",
		"decode_duration", "full_decode_duration", "inter_token_latency", "full_response_inter_token_latency",
		"inter_chunk_latency", "output_token_throughput_per_user", "full_response_output_token_throughput_per_user",
		"e2e_output_token_throughput", "prefill_throughput_per_user",
		"output_sequence_length", "input_sequence_length", "output_token_count",
		"usage_prompt_tokens", "usage_completion_tokens", "usage_total_tokens", "usage_prompt_tokens_diff_pct",
		"usage_completion_tokens_diff_pct", "osl_mismatch_diff_pct", "send_lag", "error_isl",
		"effective_concurrency", "effective_decode_throughput", "effective_prefill_throughput",
		"effective_decode_concurrency", "effective_prefill_concurrency", "effective_total_throughput",
		"effective_decode_throughput_per_user", "effective_prefill_throughput_per_user", "tokens_in_flight",
		"active_decode_throughput", "active_prefill_throughput", "active_decode_throughput_per_user",
		"active_prefill_throughput_per_user", "active_total_throughput",
		"output_token_throughput", "input_token_throughput", "total_token_throughput", "request_throughput",
		"e2e_normalized_interactivity_p75", "e2e_normalized_interactivity_p90", "request_count",
		"error_request_count", "total_isl", "total_osl", "total_error_isl", "benchmark_duration", "usage_discrepancy_count",
		"osl_mismatch_count", "cancelled_request_count", "total_output_tokens", "total_usage_prompt_tokens", "total_usage_completion_tokens",
		"total_usage_total_tokens", "request_error_rate", "warmup_metrics", "error_summary", "runtime_submission_invalid_reasons", "control_hooks",
		"client_audit", "input_config",
	}, topLevelKeys(t, buf.Bytes()))

	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.Equal(t, "1.5", doc["schema_version"])
	assert.Equal(t, "0.1.0-test", doc["aiperf_version"])
	assert.Equal(t, "bench-0001", doc["benchmark_id"])
	// AIPerf's naive datetime.fromtimestamp(...).isoformat(): local time, no zone.
	assert.Equal(t, run.StartTime.Local().Format("2006-01-02T15:04:05"), doc["start_time"])
	assert.Equal(t, run.EndTime.Local().Format("2006-01-02T15:04:05.000000"), doc["end_time"])
	assert.NotContains(t, doc["end_time"], "Z")
	for _, tag := range []string{metrics.TagMinRequestTimestamp, metrics.TagMaxResponseTimestamp} {
		assert.NotContains(t, doc, tag, "AIPerf's INTERNAL metrics are left out")
		assert.NotContains(t, doc["warmup_metrics"], tag)
	}
	assert.Equal(t, false, doc["was_cancelled"])

	assert.Equal(t, map[string]any{
		"benchmark_id":     "bench-0001",
		"sweep_id":         "0b7c5e2a-9d41-4f6e-8a3b-2c1d0e9f8a7b",
		"random_seed":      42.0,
		"trial":            1.0,
		"variation_index":  3.0,
		"run_label":        "run_0002",
		"variation_label":  "concurrency_8",
		"variation_values": map[string]any{"concurrency": 8.0, "osl": 4.0},
		"cli_command":      "aiperf profile -m mock-model --streaming --api-key <redacted>",
	}, doc["run_info"])

	// A record metric carries the full stats block, in AIPerf's key order.
	ttft := doc["time_to_first_token"].(map[string]any)
	assert.Equal(t, "ms", ttft["unit"])
	assert.InDelta(t, 43, ttft["avg"], 1e-9) // 40, 42, 48, 42
	assert.Equal(t, 4.0, ttft["count"])
	assert.InDelta(t, 172, ttft["sum"], 1e-9)
	var ttftRaw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(buf.Bytes(), &ttftRaw))
	assert.Equal(t, []string{"unit", "avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95",
		"p99", "std", "count", "sum"}, topLevelKeys(t, ttftRaw["time_to_first_token"]))

	// Scalars carry unit and avg only.
	assert.Equal(t, map[string]any{"unit": "requests", "avg": 4.0}, doc["request_count"])
	assert.Equal(t, map[string]any{"unit": "requests", "avg": 3.0}, doc["error_request_count"])
	assert.Equal(t, "requests/sec", doc["request_throughput"].(map[string]any)["unit"])

	warm := doc["warmup_metrics"].(map[string]any)
	assert.Equal(t, map[string]any{"unit": "requests", "avg": 2.0}, warm["request_count"])
	assert.Equal(t, 2.0, warm["time_to_first_token"].(map[string]any)["count"])

	assert.Equal(t, []any{
		map[string]any{"error_details": map[string]any{"code": 500.0, "type": "HTTPError", "message": "Internal Server Error"}, "count": 2.0},
		map[string]any{"error_details": map[string]any{"code": 0.0, "type": "IncompleteStream", "message": "connection closed before [DONE]"}, "count": 1.0},
	}, doc["error_summary"])
	assert.Equal(t, []any{}, doc["runtime_submission_invalid_reasons"])

	hooks := doc["control_hooks"].([]any)
	require.Len(t, hooks, 3)
	reset := hooks[0].(map[string]any)
	assert.Equal(t, "reset_kv_cache", reset["hook"])
	assert.Equal(t, "http://127.0.0.1:8000", reset["origin"])
	assert.Equal(t, "/reset_prefix_cache", reset["path"])
	assert.Equal(t, 2.0, reset["attempts"])
	assert.Equal(t, "timeout after 30s", hooks[2].(map[string]any)["error"])

	audit := doc["client_audit"].(map[string]any)
	assert.Equal(t, "rate", audit["mode"])
	assert.Equal(t, 98.5, audit["achieved_rate"])
	assert.Equal(t, true, audit["client_bound"])

	// input_config: AIPerf's configuration sections, our flat profile under
	// the extension key; secrets redacted in both.
	cfg := doc["input_config"].(map[string]any)
	assert.Equal(t, []any{map[string]any{"name": "mock-model"}}, cfg["models"].(map[string]any)["items"])
	endpoint := cfg["endpoint"].(map[string]any)
	assert.Equal(t, plan.Redacted, endpoint["api_key"])
	assert.Equal(t, map[string]any{"Authorization": plan.Redacted, "X-Team": "perf"}, endpoint["headers"])
	assert.Equal(t, true, endpoint["streaming"])
	assert.Equal(t, "chat", endpoint["type"])
	require.Len(t, cfg["datasets"], 1)
	assert.Equal(t, "synthetic", cfg["datasets"].([]any)[0].(map[string]any)["type"])
	assert.NotEmpty(t, cfg["phases"])
	ours := cfg[ExtensionKey].(map[string]any)
	assert.Equal(t, plan.Redacted, ours["api_key"])
	assert.Equal(t, []any{"Authorization:" + plan.Redacted, "X-Team:perf"}, ours["header"])
	assert.Equal(t, true, ours["streaming"])
	assert.NotContains(t, buf.String(), "sk-", "no secret anywhere in the export")
}

func TestWriteJSONMinimal(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, minimalRun()))
	keys := topLevelKeys(t, buf.Bytes())
	assert.NotContains(t, keys, "warmup_metrics")
	assert.NotContains(t, keys, "time_to_first_token")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	assert.Nil(t, doc["start_time"])
	assert.Equal(t, []any{}, doc["error_summary"])
	assert.Equal(t, []any{}, doc["control_hooks"])
	info := doc["run_info"].(map[string]any)
	assert.Nil(t, info["sweep_id"])
	assert.Nil(t, info["cli_command"])
	assert.Equal(t, "base", info["variation_label"])
	assert.Equal(t, map[string]any{}, info["variation_values"])
}

// jsonlRecord mirrors one profile_export.jsonl line.
type jsonlRecord struct {
	Metadata map[string]any `json:"metadata"`
	Metrics  map[string]struct {
		Value any    `json:"value"`
		Unit  string `json:"unit"`
	} `json:"metrics"`
	Error *metrics.Error `json:"error"`
}

func readJSONL(t *testing.T, data []byte) []jsonlRecord {
	t.Helper()
	var out []jsonlRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r jsonlRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestWriteJSONL(t *testing.T) {
	run := fixtureRun(t)
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, run))
	lines := readJSONL(t, buf.Bytes())

	profiling := 0
	for _, r := range run.Records {
		if r.PhaseKind == plan.KindProfiling {
			profiling++
		}
	}
	require.Len(t, lines, profiling, "one line per profiling request, warmup excluded")
	assert.Equal(t, 8, profiling)

	ok := lines[0] // request 2: sent at 100 ms, chunks at 140..152 ms
	md := ok.Metadata
	assert.Equal(t, 2.0, md["session_num"])
	assert.Equal(t, "req-c", md["x_request_id"])
	assert.Equal(t, "sess-c", md["x_correlation_id"], "the session's id, shared by its turns")
	assert.Equal(t, "conv-2", md["conversation_id"], "the dataset's conversation")
	assert.Equal(t, 0.0, md["turn_index"])
	assert.Equal(t, "profiling", md["benchmark_phase"])
	assert.Equal(t, false, md["was_cancelled"])
	assert.NotContains(t, md, "cancellation_time_ns", "None is left out, as AIPerf's exclude_none dump")
	assert.NotContains(t, string(bytes.SplitN(buf.Bytes(), []byte("\n"), 2)[0]), "null")
	assert.Equal(t, false, md["retried"], "retried is always present")
	assert.Equal(t, 0.0, md["malformed_chunks"], "malformed_chunks is always present")
	assert.NotContains(t, md, "usage_untrusted", "only when the usage was refused")
	for _, k := range []string{"worker_id", "record_processor_id", "request_start_ns", "request_end_ns"} {
		assert.Contains(t, md, k)
	}
	// Wall-clock ns lose precision as float64: decode them as int64.
	rawLine := bytes.SplitN(buf.Bytes(), []byte("\n"), 2)[0]
	var exact struct {
		Metadata struct {
			RequestStartNs int64 `json:"request_start_ns"`
			RequestAckNs   int64 `json:"request_ack_ns"`
			RequestEndNs   int64 `json:"request_end_ns"`
			ScheduledNs    int64 `json:"scheduled_ns"`
			SendLagNs      int64 `json:"send_lag_ns"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(rawLine, &exact))
	assert.Equal(t, wallNs+100*msNs, exact.Metadata.RequestStartNs)
	assert.Equal(t, wallNs+140*msNs, exact.Metadata.RequestAckNs)
	assert.Equal(t, wallNs+152*msNs+msNs/2, exact.Metadata.RequestEndNs)
	assert.Equal(t, wallNs+100*msNs-msNs/4, exact.Metadata.ScheduledNs)
	assert.Equal(t, msNs/4, exact.Metadata.SendLagNs)

	assert.Nil(t, ok.Error)
	assert.Equal(t, 40.0, ok.Metrics["time_to_first_token"].Value)
	assert.Equal(t, "ms", ok.Metrics["time_to_first_token"].Unit)
	assert.Equal(t, 52.0, ok.Metrics["request_latency"].Value)
	assert.Equal(t, []any{4.0, 4.0, 4.0}, ok.Metrics["inter_chunk_latency"].Value)
	assert.Equal(t, 256.0, ok.Metrics["input_sequence_length"].Value)
	assert.Equal(t, "tokens/sec/user", ok.Metrics["output_token_throughput_per_user"].Unit)
	assert.NotContains(t, ok.Metrics, "error_isl")

	failed := lines[4] // request 6: HTTP 500
	assert.Equal(t, &metrics.Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}, failed.Error)
	assert.Equal(t, 500.0, failed.Metadata["http_status"])
	assert.NotContains(t, failed.Metadata, "request_ack_ns")
	require.Len(t, failed.Metrics, 1)
	assert.Equal(t, 255.0, failed.Metrics["error_isl"].Value)

	cancelled := lines[7]
	assert.Equal(t, true, cancelled.Metadata["was_cancelled"])
	assert.NotNil(t, cancelled.Metadata["cancellation_time_ns"])
	require.NotNil(t, cancelled.Error)
	assert.Equal(t, 499, cancelled.Error.Code)
	assert.NotContains(t, cancelled.Metrics, "request_latency")
}

// TestWriteJSONLCancelled: a cancelled request is AIPerf's error record,
// code 499 and type RequestCancellationError, whatever error it ended with
// (a reply cut mid-stream, a request the phase's end cut that then failed
// otherwise); its own message is kept, a stand-in given when it has none.
func TestWriteJSONLCancelled(t *testing.T) {
	run := minimalRun()
	run.Records = append(run.Records, run.Records[0], run.Records[0])
	run.Records[0].Error = &metrics.Error{Code: 200, Type: "StreamError", Message: "request cancelled: still in flight at the end of the grace period"}
	run.Records[1].Error = &metrics.Error{Type: "ConnectionError", Message: "connection reset by peer"}
	for i := range run.Records[:3] {
		run.Records[i].Cancelled = true
	}
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, run))
	lines := readJSONL(t, buf.Bytes())
	require.Len(t, lines, 4)
	for i, msg := range []string{"request cancelled: still in flight at the end of the grace period", "connection reset by peer",
		"request still in flight when the run stopped"} {
		assert.Equal(t, &metrics.Error{Code: 499, Type: "RequestCancellationError", Message: msg}, lines[i].Error)
		assert.Equal(t, true, lines[i].Metadata["was_cancelled"])
	}
	assert.Nil(t, lines[3].Error)
}

func TestWriteJSONLNonStreaming(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, minimalRun()))
	lines := readJSONL(t, buf.Bytes())
	require.Len(t, lines, 2)
	assert.NotContains(t, lines[0].Metadata, "request_ack_ns")
	assert.NotContains(t, buf.String(), `"error"`, "no error key on success")
	assert.NotContains(t, buf.String(), "null")
	assert.NotContains(t, lines[0].Metrics, "time_to_first_token")
	assert.NotContains(t, lines[0].Metrics, "inter_chunk_latency")
	assert.Equal(t, 250.0, lines[0].Metrics["request_latency"].Value)
	assert.Equal(t, 128.0, lines[0].Metrics["output_sequence_length"].Value)
}

func TestWriteCSV(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, fixtureRun(t)))
	golden(t, "profile_export_aiperf.csv.golden", buf.Bytes())

	text := buf.String()
	assert.True(t, strings.HasPrefix(text, "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\r\n"),
		"AIPerf's STAT_KEYS")
	assert.NotContains(t, text, "Timestamp", "AIPerf's INTERNAL metrics are left out")
	sections := strings.Split(text, "\r\n\r\n")
	require.Len(t, sections, 2, "two sections separated by one blank line")

	stats, err := csv.NewReader(strings.NewReader(sections[0])).ReadAll()
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, row := range stats[1:] {
		assert.Len(t, row, 15)
		rows[row[0]] = row[1:]
	}
	assert.Equal(t, []string{"43.00", "40.00", "48.00", "172.00"}, rows["Time to First Token (ms)"][:4], "avg, min, max, sum")
	assert.Equal(t, "Active Decode Throughput (tokens/sec)", stats[1][0],
		"rows sorted by tag (active_decode_throughput first), as AIPerf writes them")
	assert.Equal(t, []string{"", "", "", ""}, rows["Effective Concurrency"][3:7],
		"a time-weighted metric has no sum, p1, p5 nor p10: empty cells")
	scalars, err := csv.NewReader(strings.NewReader(sections[1])).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"Metric", "Value"}, scalars[0])
	names := map[string]string{}
	for _, row := range scalars[1:] {
		require.Len(t, row, 2)
		names[row[0]] = row[1]
	}
	assert.Equal(t, "4.00", names["Request Count"], "counts carry no unit")
	assert.Equal(t, "3.00", names["Error Request Count"])
	assert.Contains(t, names, "Request Throughput (requests/sec)")
	assert.Contains(t, names, "Benchmark Duration (sec)")
}

func TestWriteCSVOnlyScalars(t *testing.T) {
	run := minimalRun()
	run.Profiling = metrics.Summarize(nil, false)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, run))
	assert.Equal(t, "Metric,Value\r\nError Request Count,0.00\r\nRequest Count,0.00\r\n", buf.String())
}

func TestWriteAllKeepsSecretsOut(t *testing.T) {
	run := fixtureRun(t)
	dir := filepath.Join(t.TempDir(), "artifacts", "run1")
	paths, err := WriteAll(dir, run)
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(dir, JSONFile), filepath.Join(dir, CSVFile), filepath.Join(dir, JSONLFile),
	}, paths)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no .partial files left behind")

	var console bytes.Buffer
	Console(&console, run)
	outputs := map[string][]byte{"console": console.Bytes()}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotEmpty(t, data)
		outputs[filepath.Base(p)] = data
	}
	for name, data := range outputs {
		assert.NotContains(t, string(data), secret, "%s leaks the secret", name)
	}
	assert.Contains(t, string(outputs[JSONFile]), plan.Redacted)
	assert.Len(t, readJSONL(t, outputs[JSONLFile]), 8)
}

func TestWriteAllFailsOnUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := WriteAll(filepath.Join(file, "run"), fixtureRun(t))
	require.ErrorContains(t, err, "create artifact dir")
}

// A JSONL export the run wrote while it went is renamed into place, not
// written again; one streamed elsewhere (the exports fell back to another
// directory) is written from the records and the partial file removed.
func TestWriteAllTakesTheStreamedJSONL(t *testing.T) {
	run := fixtureRun(t)
	dir := t.TempDir()
	partial := filepath.Join(dir, JSONLFile) + ".partial"
	require.NoError(t, os.WriteFile(partial, []byte("streamed\n"), 0o644))
	run.StreamedJSONL = partial
	_, err := WriteAll(dir, run)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, JSONLFile))
	require.NoError(t, err)
	assert.Equal(t, "streamed\n", string(b))
	assert.NoFileExists(t, partial)

	require.NoError(t, os.WriteFile(partial, []byte("streamed\n"), 0o644))
	other := t.TempDir()
	_, err = WriteAll(other, run)
	require.NoError(t, err)
	written, err := os.ReadFile(filepath.Join(other, JSONLFile))
	require.NoError(t, err)
	assert.Len(t, readJSONL(t, written), len(run.Records)-countWarmup(run), "written from the records")
	assert.NoFileExists(t, partial)
}

func countWarmup(run *result.Run) int {
	n := 0
	for _, r := range run.Records {
		if r.PhaseKind != "profiling" {
			n++
		}
	}
	return n
}
