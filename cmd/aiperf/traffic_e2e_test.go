package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/mock"
)

// mooncake is the first 200 lines of the public Mooncake FAST'25
// conversation trace (licence note beside it).
var mooncake = filepath.Join("..", "..", "internal", "dataset", "testdata", "mooncake_conversation_head200.jsonl")

// traceRow is one Mooncake trace record.
type traceRow struct {
	Timestamp   float64 `json:"timestamp"`
	InputLength int     `json:"input_length"`
	HashIDs     []int   `json:"hash_ids"`
}

func readTrace(t *testing.T, path string) []traceRow {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rows []traceRow
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var r traceRow
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		rows = append(rows, r)
	}
	return rows
}

// impliedHitRatio is the prefix-cache hit ratio the trace's hash ids imply
// with an unbounded cache: for each record in order, its leading blocks
// already seen, over every input token.
func impliedHitRatio(rows []traceRow, block int) float64 {
	seen := map[int]bool{}
	hit, total := 0, 0
	for _, r := range rows {
		lead := 0
		for lead < len(r.HashIDs) && seen[r.HashIDs[lead]] {
			lead++
		}
		hit += min(lead*block, r.InputLength)
		total += r.InputLength
		for _, h := range r.HashIDs {
			seen[h] = true
		}
	}
	return float64(hit) / float64(total)
}

// scrape reads counters of the mock's /metrics with the Prometheus parser.
func scrape(t *testing.T, url string, names ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, n := range names {
		f, ok := families[n]
		require.True(t, ok, "no %s", n)
		for _, m := range f.GetMetric() {
			out[n] += m.GetCounter().GetValue()
		}
	}
	return out
}

// TestMooncakeTraceReplays: a slice of the public Mooncake trace (its first
// 60 records: 15 s, 0.74 M prompt tokens) replays against the mock, every
// record once at its timestamp, and the mock's prefix cache sees the
// sharing the trace's hash ids record.
func TestMooncakeTraceReplays(t *testing.T) {
	head, err := os.ReadFile(mooncake)
	require.NoError(t, err)
	dir := t.TempDir()
	trace := writeFile(t, dir, "mooncake_head60.jsonl", strings.Join(strings.SplitAfter(string(head), "\n")[:60], ""))
	rows := readTrace(t, trace)
	require.Len(t, rows, 60)
	m := startMock(t, mock.Config{Fast: true})
	const speedup = 40
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none",
		"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--reset-kv-cache",
		"--replay-speedup", "40", "--extra-inputs", "max_completion_tokens:2", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "fixed mode")
	assert.Contains(t, inv.stdout, "Send lag: p50")

	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, len(rows), "every record sent once")
	start := lines[0].Metadata.ScheduledNs
	byConv := map[string]int64{}
	for _, l := range lines {
		start = min(start, l.Metadata.ScheduledNs)
		byConv[l.Metadata.ConversationID] = l.Metadata.ScheduledNs
	}
	require.Len(t, byConv, len(rows))
	for i, r := range rows {
		id := "mooncake_head60.jsonl:" + strconv.Itoa(i+1)
		want := int64(r.Timestamp * 1e6 / speedup)
		assert.InDelta(t, want, byConv[id]-start, 1e3, "record %d is scheduled at its timestamp / %d", i+1, speedup)
	}
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, float64(len(rows)), metricAvg(t, export, "request_count"))
	assert.Contains(t, export["client_audit"], "send_lag_ms")

	got := scrape(t, m.URL, "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total")
	ratio := got["vllm:prefix_cache_hits_total"] / got["vllm:prefix_cache_queries_total"]
	want := impliedHitRatio(rows, 512)
	assert.InEpsilon(t, want, ratio, 0.05, "the mock's hit ratio %.4f against the trace's %.4f", ratio, want)
	assert.Greater(t, want, 0.01, "the slice shares prefixes")

	inputs := readJSON(t, filepath.Join(dir, "out", "inputs.json"))
	assert.Len(t, inputs["data"], len(rows), "inputs.json: one entry per conversation")
}

// jsonlLine is what these tests read of a profile_export.jsonl line.
type jsonlLine struct {
	Metadata struct {
		ScheduledNs    int64  `json:"scheduled_ns"`
		ConversationID string `json:"conversation_id"`
		TurnIndex      int    `json:"turn_index"`
		SessionNum     int    `json:"session_num"`
		XCorrelationID string `json:"x_correlation_id"`
		WorkerID       string `json:"worker_id"`
		XRequestID     string `json:"x_request_id"`
		RequestStartNs int64  `json:"request_start_ns"`
		RequestEndNs   int64  `json:"request_end_ns"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value any `json:"value"`
	} `json:"metrics"`
	Error any `json:"error"`
}

func jsonlLines(t *testing.T, path string) []jsonlLine {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []jsonlLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l jsonlLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		out = append(out, l)
	}
	return out
}

// captureWriter keeps a copy of what a handler writes, flushes included.
type captureWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.buf.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// parseSSE returns a chat stream's content and the cached tokens its usage
// reports.
func parseSSE(stream string) (content string, cached int) {
	var b strings.Builder
	for line := range strings.SplitSeq(stream, "\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				Details *struct {
					Cached int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if json.Unmarshal([]byte(data), &chunk) != nil {
			continue
		}
		for _, c := range chunk.Choices {
			b.WriteString(c.Delta.Content)
		}
		if chunk.Usage != nil && chunk.Usage.Details != nil {
			cached = chunk.Usage.Details.Cached
		}
	}
	return b.String(), cached
}

// exchange is one request the mock received and what it answered.
type exchange struct {
	session  string
	messages []struct{ Role, Content string }
	reply    string
	cached   int
}

// recorder wraps a handler and keeps every chat exchange.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	all  []exchange
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		rc.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	r.Body = io.NopCloser(bytes.NewReader(body))
	cw := &captureWriter{ResponseWriter: w}
	rc.next.ServeHTTP(cw, r)
	reply, cached := parseSSE(cw.buf.String())
	rc.mu.Lock()
	rc.all = append(rc.all, exchange{session: r.Header.Get("X-Correlation-ID"), messages: req.Messages, reply: reply, cached: cached})
	rc.mu.Unlock()
}

// TestSyntheticSessions: 20 synthetic sessions of 5 turns. Every request of
// a session carries its id, turn k re-sends turns 1..k-1 with the live
// replies, the mock serves their history from its prefix cache from turn
// 2 on, and after the reset the very first turn is cold.
func TestSyntheticSessions(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	rc := &recorder{next: m.srv.Handler()}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", srv.URL, "--streaming", "--ui", "none",
		"--conversation-num", "20", "--conversation-turn-mean", "5", "--conversation-turn-delay-mean", "5",
		"--concurrency", "4", "--isl", "64", "--osl", "16", "--reset-kv-cache", "--artifact-dir", "out", "--no-store")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Contains(t, inv.stdout, "Time to First Token by turn (ms)")
	assert.Contains(t, inv.stdout, "KV cache reset verified")

	require.Len(t, rc.all, 100)
	assert.Empty(t, rc.all[0].cached, "the first turn after the reset is cold")
	bySession := map[string][]exchange{}
	for _, x := range rc.all {
		require.NotEmpty(t, x.session, "every request carries X-Correlation-ID")
		bySession[x.session] = append(bySession[x.session], x)
	}
	require.Len(t, bySession, 20)
	for id, turns := range bySession {
		require.Len(t, turns, 5, "session %s", id)
		for k, x := range turns {
			require.Len(t, x.messages, 2*k+1, "turn %d of %s carries its history", k, id)
			for j := 0; j < k; j++ {
				assert.Equal(t, turns[j].messages[2*j], x.messages[2*j], "turn %d re-sends user turn %d", k, j)
				assert.Equal(t, "assistant", x.messages[2*j+1].Role)
				assert.Equal(t, turns[j].reply, x.messages[2*j+1].Content, "turn %d re-sends the live reply of turn %d", k, j)
			}
			if k > 0 {
				assert.Positive(t, x.cached, "turn %d of %s: its history is in the prefix cache", k, id)
			}
		}
	}
	lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
	require.Len(t, lines, 100)
	turnsOf := map[string][]int{}
	for _, l := range lines {
		turnsOf[l.Metadata.XCorrelationID] = append(turnsOf[l.Metadata.XCorrelationID], l.Metadata.TurnIndex)
		assert.NotEmpty(t, l.Metadata.ConversationID)
		assert.Equal(t, l.Metrics["usage_prompt_tokens"].Value, l.Metrics["input_sequence_length"].Value,
			"turn %d: the client's ISL counts the re-sent history, replies included, as the server does", l.Metadata.TurnIndex)
	}
	assert.Len(t, turnsOf, 20, "x_correlation_id names the session in the export")
}

// TestTraceReplayExampleWarmBeatsCold runs examples/trace_replay.star
// against the mock with a prefill cost: the warm cell's TTFT is lower than
// the cold cell's, beyond run-to-run noise.
func TestTraceReplayExampleWarmBeatsCold(t *testing.T) {
	subprocesses(t)
	// A cold 512-token block costs ~0.5 s of prefill: far above the trial-to-trial
	// noise of -race beside a load of 12 (at ~0.2 s, p was 0.057 there once).
	m := startMock(t, mock.Config{TTFT: 2, ITL: 1, Prefill: 1000})
	script, err := filepath.Abs(filepath.Join("..", "..", "examples", "trace_replay.star"))
	require.NoError(t, err)
	dir := t.TempDir()
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "speedup=8", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	// Every warm trial is faster than every cold one: an ordering, which a
	// loaded machine cannot turn around (each cold request prefills whole
	// blocks the warm one finds cached), where the t-test's p-value of
	// three against three depends on how noisy the machine made them.
	ttft := func(scenario string) []float64 {
		files, err := filepath.Glob(filepath.Join(dir, "artifacts", "trace-replay", scenario, "trial_*", "profile_export_aiperf.json"))
		require.NoError(t, err)
		require.Len(t, files, 3, scenario)
		var avgs []float64
		for _, f := range files {
			avgs = append(avgs, metricAvg(t, readJSON(t, f), "time_to_first_token"))
		}
		return avgs
	}
	cold, warm := ttft("cold"), ttft("warm")
	assert.Less(t, slices.Max(warm), slices.Min(cold), "every warm trial's TTFT below every cold one's: warm %v, cold %v", warm, cold)

	v := compareGroups(t, dir, 3, "trace-replay/cold", "trace-replay/warm").versus(t, "time_to_first_token.avg")
	require.NotNil(t, v.DeltaPct)
	require.NotNil(t, v.P)
	t.Logf("warm against cold: TTFT %+.1f%%, p %.2g, %s", *v.DeltaPct, *v.P, v.Verdict)
	assert.Less(t, *v.DeltaPct, 0.0, "warm TTFT is lower")
	assert.NotEqual(t, "worse", v.Verdict)
}

// TestMalformedInputFileSendsNothing: every problem of an input file is
// reported with its line before any traffic, exit 2.
func TestMalformedInputFileSendsNothing(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	bad := writeFile(t, dir, "trace.jsonl", `{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}
{"timestamp": 10, "input_length": "many"}
{"timestamp": 20, "input_length": 100, "hash_ids": [3, 4, 5]}
not json at all
`)
	inv := cli(t, dir, "profile", "-m", "mock-model", "-u", m.URL, "--streaming", "--ui", "none",
		"--input-file", bad, "--custom-dataset-type", "mooncake_trace", "--reset-kv-cache")
	assert.Equal(t, ExitUsage, inv.code, inv.stderr)
	for _, line := range []string{"trace.jsonl:2:35: input_length: expected an integer", "trace.jsonl:3: hash_ids:",
		"trace.jsonl:4:1: expected a JSON object, got something that is not JSON"} {
		assert.Contains(t, inv.stderr, line, "every bad line is named")
	}
	assert.Contains(t, inv.stderr, "nothing was sent")
	assert.Zero(t, m.control().InferenceRequests)
	assert.Zero(t, m.control().ResetCount, "refused before the reset too")
}
