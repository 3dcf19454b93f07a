package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/report"
)

func TestProfileEndToEnd(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 40, ITL: 4})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "--model", "mock-model", "--url", m.URL, "--endpoint-type", "chat", "--streaming",
		"--concurrency", "8", "--request-count", "40", "--warmup-request-count", "8",
		"--synthetic-input-tokens-mean", "64", "--output-tokens-mean", "16", "--artifact-dir", "artifacts/run1", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	for _, row := range []string{"Time to First Token", "Time to Second Token", "Inter Token Latency", "Request Latency",
		"Output Token Throughput Per User", "Input Sequence Length", "Output Sequence Length", "Output Token Throughput",
		"Request Throughput", "Request Count", "Error Request Count"} {
		assert.Contains(t, inv.stdout, row)
	}
	art := filepath.Join(dir, "artifacts/run1")
	export := readJSON(t, filepath.Join(art, "profile_export_aiperf.json"))
	assert.Equal(t, 40.0, metricAvg(t, export, "request_count"))
	assert.Equal(t, 16.0, metricAvg(t, export, "output_sequence_length"), "OSL equals the requested max tokens")
	assert.Equal(t, 64.0, metricAvg(t, export, "input_sequence_length"))
	// The mock never sends early: its 40 ms TTFT and 15 gaps of 4 ms are
	// lower bounds. (Not ITL: a first token sent late shortens the gaps
	// after it, as the mock keeps every token on its own schedule.)
	assert.GreaterOrEqual(t, metricAvg(t, export, "time_to_first_token"), 40.0, "TTFT can only be later than the mock's 40 ms")
	assert.GreaterOrEqual(t, metricAvg(t, export, "request_latency"), 40.0+15*4, "the last token can only be later than due")
	assert.Positive(t, metricAvg(t, export, "inter_token_latency"))
	warm := export["warmup_metrics"].(map[string]any)
	assert.Equal(t, 8.0, warm["request_count"].(map[string]any)["avg"], "warmup is reported apart")
	assert.Equal(t, 40, countLines(t, filepath.Join(art, "profile_export.jsonl")), "one line per profiling request")
	_, err := os.Stat(filepath.Join(art, "profile_export_aiperf.csv"))
	require.NoError(t, err)
	assert.Equal(t, 48, m.control().InferenceRequests)

	// Every profile run lands in the store.
	list := cli(t, dir, "runs", "list")
	require.Equal(t, ExitOK, list.code, list.stderr)
	assert.Contains(t, list.stdout, "mock-model")
	assert.Contains(t, list.stdout, "complete")
}

func TestProfileNonStreamingPublishesNoTTFT(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	args := []string{"profile", "-m", "mock-model", "-u", m.URL, "--endpoint-type", "completions", "--ui", "none",
		"--isl", "16", "--osl", "4", "--request-count", "6", "--artifact-dir", "out", "--no-store"}
	inv := cli(t, dir, args...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.NotContains(t, export, "time_to_first_token")
	assert.NotContains(t, export, "inter_token_latency")
	assert.Equal(t, 4.0, metricAvg(t, export, "output_sequence_length"))
	_, err := os.Stat(filepath.Join(dir, "aiperf.db"))
	assert.True(t, os.IsNotExist(err), "--no-store writes no database")
}

func TestProfileRejectsBadFlagsBeforeTraffic(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"warmup zero", []string{"--warmup-request-count", "0"}, "--warmup-request-count must be greater than 0"},
		{"warmup duration zero", []string{"--warmup-duration", "0"}, "--warmup-duration must be greater than 0"},
		{"concurrency", []string{"--concurrency", "0"}, "--concurrency must be at least 1"},
		{"rate", []string{"--request-rate", "0"}, "--request-rate must be greater than 0"},
		{"rate mode", []string{"--request-rate", "5", "--request-rate-mode", "bursty"}, "--request-rate-mode"},
		{"negative number needs =", []string{"--request-count", "-3"}, "--request-count"},
		{"request count", []string{"--request-count=-3"}, "--request-count must be at least 1"},
		{"duration", []string{"--benchmark-duration=-1"}, "--benchmark-duration must be greater than 0"},
		{"grace without duration", []string{"--benchmark-grace-period", "5"}, "--benchmark-grace-period needs --benchmark-duration"},
		{"endpoint type", []string{"--endpoint-type", "generate"}, "--endpoint-type"},
		{"endpoint path", []string{"--endpoint", "v1/x"}, "--endpoint must be a path"},
		{"isl", []string{"--isl", "0"}, "--synthetic-input-tokens-mean must be at least 1"},
		{"osl", []string{"--osl", "0"}, "--output-tokens-mean must be at least 1"},
		{"osl stddev alone", []string{"--osl-stddev", "2", "--osl", "4"}, ""},
		{"entries", []string{"--num-dataset-entries", "0"}, "--num-dataset-entries must be at least 1"},
		{"header", []string{"-H", "Broken"}, "--header must be Key:Value"},
		{"extra inputs", []string{"--extra-inputs", "nocolon"}, "--extra-inputs must be key:value"},
		{"timeout", []string{"--request-timeout-seconds", "0"}, "--request-timeout-seconds must be greater than 0"},
		{"not a number", []string{"--concurrency", "many"}, "--concurrency"},
		{"unknown flag", []string{"--concurency", "2"}, "unknown flag --concurency"},
		{"num profile runs", []string{"--num-profile-runs", "11"}, "--num-profile-runs must be between 1 and 10"},
		{"confidence", []string{"--confidence-level", "1.5"}, "--confidence-level must be between 0 and 1"},
		{"reset path", []string{"--reset-kv-cache-path", "flush"}, "--reset-kv-cache-path must be a relative path starting with '/'"},
		{"reset path url", []string{"--reset-kv-cache-path", "http://h/flush"}, "--reset-kv-cache-path must be a relative path"},
		{"profiler path", []string{"--server-profiler-start-path", "start"}, "--server-profiler-start-path must be a relative path"},
		{"hook timeout", []string{"--reset-kv-cache-timeout-seconds", "0"}, "--reset-kv-cache-timeout-seconds must be greater than 0"},
		{"profiler timeout", []string{"--server-profiler-timeout-seconds=-1"}, "--server-profiler-timeout-seconds must be greater than 0"},
		{"trtllm", []string{"--server", "trtllm", "--reset-kv-cache"}, "--reset-kv-cache cannot be used with --server trtllm"},
		{"server", []string{"--server", "tgi"}, "--server"},
		{"url scheme", []string{"-u", "ftp://x:1"}, "--url must use http or https"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := cli(t, "", quick(m.URL, tc.args...)...)
			if tc.want == "" {
				assert.Equal(t, ExitOK, inv.code, inv.stderr)
				return
			}
			assert.Equal(t, ExitUsage, inv.code, inv.stderr)
			assert.Contains(t, inv.stderr, tc.want)
		})
	}
	assert.Equal(t, 10, m.control().InferenceRequests, "only the one valid case sent traffic (the default 10 requests)")
}

func TestProfileAllRequestsFailedExitsOne(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true, ErrorRate: 100})
	inv := cli(t, "", quick(m.URL, "--request-count", "5")...)
	assert.Equal(t, ExitFailure, inv.code)
	assert.Contains(t, inv.stderr, "every profiling request failed: 5 of 5")
	assert.Contains(t, inv.stderr, "HTTPError 500")
	assert.Contains(t, inv.stdout, "Error Request Count", "the table is still printed")
}

func TestProfileUnreachableServerIsOneLine(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	url := m.URL
	m.Close()
	inv := cli(t, "", quick(url, "--request-count", "5")...)
	assert.Equal(t, ExitFailure, inv.code)
	lines := strings.Split(strings.TrimSpace(inv.stderr), "\n")
	require.Len(t, lines, 1, inv.stderr)
	assert.Contains(t, lines[0], "is unreachable")
	assert.Contains(t, lines[0], "connection refused: check that it is running and that --url (a config file's "+
		"endpoint.url) names its host and port (nothing was sent)", "what to do about it")
}

func TestProfileSecretsNeverStoredOrExported(t *testing.T) {
	const secret = "sk-e2e-very-secret"
	m := startMock(t, mock.Config{Fast: true, APIKey: secret})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--api-key", secret, "-H", "X-Api-Key:"+secret, "--request-count", "3",
		"--reset-kv-cache", "--artifact-dir", "out", "-v")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.NotContains(t, inv.stdout+inv.stderr, secret)
	for _, f := range []string{"out/profile_export_aiperf.json", "out/profile_export_aiperf.csv", "out/profile_export.jsonl", "aiperf.db"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret, f)
	}
	show := cli(t, dir, "runs", "show", "1")
	require.Equal(t, ExitOK, show.code, show.stderr)
	assert.NotContains(t, show.stdout, secret)
}

// TestProfileFlagsOverlayYAML: explicit flags, aliases included, override the
// config file; load flags go to its only profiling phase, and are refused
// where they would be ambiguous.
func TestProfileFlagsOverlayYAML(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	phases := "  phases:\n    - {name: warmup, kind: warmup, concurrency: 1, requests: 2}\n    - {name: profiling, concurrency: 1, requests: 4}"

	t.Run("applied", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "", phases))
		inv := cli(t, dir, "profile", "-f", "bench.yaml", "--ui", "none", "--no-store",
			"--isl", "24", "--osl=3", "--num-requests", "6", "--concurrency", "2")
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
		assert.Equal(t, 6.0, metricAvg(t, export, "request_count"), "--num-requests reaches the YAML profiling phase")
		assert.Equal(t, 24.0, metricAvg(t, export, "input_sequence_length"), "--isl overrides prompts.isl")
		assert.Equal(t, 3.0, metricAvg(t, export, "output_sequence_length"), "--osl overrides prompts.osl")
		warm := export["warmup_metrics"].(map[string]any)
		assert.Equal(t, 2.0, warm["request_count"].(map[string]any)["avg"], "the YAML warmup phase is kept")
	})
	t.Run("refused", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "bench.yaml", hookBenchYAML(m.URL, "", phases))
		inv := cli(t, dir, "profile", "-f", "bench.yaml", "--ui", "none", "--no-store", "--warmup-request-count", "5")
		assert.Equal(t, ExitUsage, inv.code, inv.stderr)
		assert.Contains(t, inv.stderr, "--warmup-request-count cannot change the phases the config file lists")
	})
	assert.Equal(t, 8, m.control().InferenceRequests, "the refused run sent nothing")
}

// TestProfileGoodput: AIPerf's tutorial command line with --goodput gives
// goodput, good_request_count and good_request_fraction: a request is good
// exactly when its own TTFT and ITL in the per-request export meet every
// objective (the mock's 40 ms and 2 ms meet these; a machine slow enough to
// miss them changes the count, not its correctness), and none is good under
// a TTFT the mock never meets (it never answers before 40 ms).
func TestProfileGoodput(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 40, ITL: 2})
	for _, c := range []struct {
		slos      string
		ttft, itl float64
	}{{"time_to_first_token:1000 inter_token_latency:100", 1000, 100}, {"time_to_first_token:10 inter_token_latency:100", 10, 100}} {
		dir := t.TempDir()
		inv := cli(t, dir, "profile", "-m", "mock-model", "--endpoint-type", "chat", "--streaming", "--url", m.URL,
			"--request-count", "12", "--concurrency", "4", "--osl", "16", "--goodput", c.slos, "--artifact-dir", "out", "--ui", "none")
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		assert.Contains(t, inv.stdout, "Goodput (requests/sec)")
		good := 0.0
		lines := jsonlLines(t, filepath.Join(dir, "out", "profile_export.jsonl"))
		require.Len(t, lines, 12)
		for _, l := range lines {
			if l.Metrics["time_to_first_token"].Value.(float64) <= c.ttft && l.Metrics["inter_token_latency"].Value.(float64) <= c.itl {
				good++
			}
		}
		if c.ttft < 40 {
			assert.Zero(t, good, "no request beats the mock's TTFT")
		}
		export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
		assert.Equal(t, good, metricAvg(t, export, "good_request_count"), c.slos)
		assert.Equal(t, good/12, metricAvg(t, export, "good_request_fraction"), c.slos)
		assert.InDelta(t, good/metricAvg(t, export, "benchmark_duration"), metricAvg(t, export, "goodput"), 1e-9, c.slos)
	}
}

// TestProfileGraceInf: AIPerf's --benchmark-grace-period inf waits for
// every request in flight, and the run exports and stores (as one year).
func TestProfileGraceInf(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 300, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--streaming", "--concurrency", "2",
		"--benchmark-duration", "0.1", "--benchmark-grace-period", "inf", "--artifact-dir", "out", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 2.0, metricAvg(t, export, "request_count"), "both requests in flight at the end were waited for")
	assert.Equal(t, 365*24*3600.0, export["input_config"].(map[string]any)[report.ExtensionKey].(map[string]any)["benchmark_grace_period"])
}

// TestProfileRequestCancellation: AIPerf's --request-cancellation-rate
// aborts the picked profiling requests --request-cancellation-delay after
// they were sent (the mock's 300 ms TTFT outlasts the 50 ms delay); they
// are reported apart as cancelled_request_count, not as errors, and the
// rest succeed. The delay without the rate is refused before traffic.
func TestProfileRequestCancellation(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 300, ITL: 1})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--streaming", "--concurrency", "8",
		"--request-count", "40", "--warmup-request-count", "4", "--request-cancellation-rate", "25",
		"--request-cancellation-delay", "0.05", "--artifact-dir", "out", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	cancelled := metricAvg(t, export, "cancelled_request_count")
	assert.InDelta(t, 10, cancelled, 8, "about a quarter of 40")
	assert.Equal(t, 40-cancelled, metricAvg(t, export, "request_count"))
	assert.Zero(t, metricAvg(t, export, "error_request_count"))
	assert.Contains(t, inv.stdout, "Cancelled Request Count")
	assert.GreaterOrEqual(t, metricAvg(t, export, "time_to_first_token"), 300.0,
		"only the requests that got their first token count: none cut at 50 ms")

	inv = cli(t, t.TempDir(), "profile", "-m", "mock-model", "--url", m.URL, "--request-cancellation-delay", "1")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--request-cancellation-delay needs --request-cancellation-rate")
}

// TestCancelledRecordsAreAIPerfs: a request cancelled on purpose is in
// profile_export.jsonl as AIPerf's error record, code 499 and type
// RequestCancellationError (not the HTTP status of the reply it cut, nor 0
// before one), with aiperf's message: cut before the reply's headers
// (delay 0) and while it streams (the mock's 100 ms gaps outlast the 50 ms
// delay; whichever it is, the record is the same).
func TestCancelledRecordsAreAIPerfs(t *testing.T) {
	m := startMock(t, mock.Config{TTFT: 10, ITL: 100})
	for _, delay := range []string{"0", "0.05"} {
		dir := t.TempDir()
		inv := cli(t, dir, quick(m.URL, "--request-count", "8", "--concurrency", "2", "--request-cancellation-rate", "50",
			"--random-seed", "1", "--request-cancellation-delay", delay, "--artifact-dir", "out", "--no-store")...)
		require.Equal(t, ExitOK, inv.code, inv.stderr)
		b, err := os.ReadFile(filepath.Join(dir, "out", "profile_export.jsonl"))
		require.NoError(t, err)
		cancelled := 0
		for line := range strings.Lines(string(b)) {
			var rec struct {
				Metadata struct {
					WasCancelled bool `json:"was_cancelled"`
				} `json:"metadata"`
				Error *metrics.Error `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &rec))
			if rec.Metadata.WasCancelled {
				cancelled++
				assert.Equal(t, &metrics.Error{Code: 499, Type: "RequestCancellationError",
					Message: "request cancelled on purpose (--request-cancellation-rate)"}, rec.Error, "delay %s", delay)
			}
		}
		export := readJSON(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
		assert.Equal(t, metricAvg(t, export, "cancelled_request_count"), float64(cancelled), "delay %s", delay)
		assert.Positive(t, cancelled, "delay %s: half of 8 are picked", delay)
	}
}

// TestProfileExportNames: --profile-export-prefix names every export
// (a known suffix dropped), and --export-level summary writes no JSONL.
func TestProfileExportNames(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--request-count", "3",
		"--profile-export-prefix", "run7.json", "--artifact-dir", "out", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	for _, f := range []string{"run7.json", "run7.csv", "run7.jsonl", "run7_server_metrics.json", "run7_server_metrics.csv"} {
		assert.FileExists(t, filepath.Join(dir, "out", f))
	}
	assert.NoFileExists(t, filepath.Join(dir, "out", "profile_export_aiperf.json"))
	assert.Equal(t, 3, countLines(t, filepath.Join(dir, "out", "run7.jsonl")))

	inv = cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--request-count", "3",
		"--export-level", "summary", "--artifact-dir", "sum", "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.FileExists(t, filepath.Join(dir, "sum", "profile_export_aiperf.json"))
	assert.NoFileExists(t, filepath.Join(dir, "sum", "profile_export.jsonl"))
	assert.NoFileExists(t, filepath.Join(dir, "sum", "profile_export.jsonl.partial"))

	inv = cli(t, dir, "profile", "-m", "mock-model", "--url", m.URL, "--profile-export-prefix", "../x")
	assert.Equal(t, ExitUsage, inv.code)
	assert.Contains(t, inv.stderr, "--profile-export-prefix must be a file name")
}
