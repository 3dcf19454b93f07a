package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/livemetrics/promtest"
	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/mock"
	"github.com/aiperf-go/aiperf/internal/otelexport"
	"github.com/aiperf-go/aiperf/internal/otelexport/otelcoltest"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

// TestOtelURLDeliversEveryRequest: a profile run with --otel-url delivers,
// to the OpenTelemetry Collector's own OTLP receiver, one
// gen_ai.client.operation.duration point per completed request with the
// GenAI attributes, and the store records where the run was exported.
func TestOtelURLDeliversEveryRequest(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	col := otelcoltest.Start(t)
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "25", "--concurrency", "4", "--otel-url",
		strings.TrimSuffix(col.URL, "/v1/metrics"), "--gen-ai-provider", "vllm", "--otel-resource-attributes",
		"deployment.environment=ci", "--artifact-dir", filepath.Join(dir, "out"), "--no-server-metrics")...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	// No warning at all: the export's. (No scrape either: on a machine
	// short of CPU its parse-time warning is right, and not this test's.)
	assert.NotContains(t, inv.stderr, "warning")

	last := col.Last()
	n, _ := otelcoltest.Points(last, otelexport.MetricDuration, map[string]string{"gen_ai.operation.name": "chat",
		"gen_ai.provider.name": "vllm", "gen_ai.request.model": "mock-model", "aiperf.phase_kind": "profiling"})
	assert.Equal(t, uint64(25), n, "one duration point per request")
	n, _ = otelcoltest.Points(last, otelexport.MetricTimeToFirst, map[string]string{"aiperf.phase_kind": "profiling"})
	assert.Equal(t, uint64(25), n)
	for _, p := range last {
		assert.Equal(t, "ci", p.Res["deployment.environment"])
	}

	exports := storedExports(t, dir)
	require.Len(t, exports, 1)
	assert.Equal(t, "otel", exports[0].Kind)
	assert.Equal(t, col.URL, exports[0].Target)
	assert.True(t, exports[0].OK, exports[0].Detail)
}

// TestOtelUnreachableIsOneWarning: a collector nobody listens on costs one
// warning; the run succeeds and is stored.
func TestOtelUnreachableIsOneWarning(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	inv := cli(t, dir, quick(m.URL, "--request-count", "5", "--otel-url", "http://user:pw-s3cret@"+closedAddr(t))...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	assert.Equal(t, 1, strings.Count(inv.stderr, "OpenTelemetry collector at"), inv.stderr)
	assert.NotContains(t, inv.stdout+inv.stderr, "pw-s3cret")
	cmd, cfg, exports := storedRunRow(t, dir)
	assert.NotContains(t, cmd+cfg+exports, "pw-s3cret", "the store holds no credential")
	assert.Contains(t, exports, `"ok":false`, "the store says the collector got nothing")
}

// storedRunRow is the command line, configuration and exports the store
// holds of the one run in dir's store.
func storedRunRow(t *testing.T, dir string) (cmd, cfg, exports string) {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow(`SELECT cli_command, config, exports FROM runs`).Scan(&cmd, &cfg, &exports))
	return cmd, cfg, exports
}

func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func storedExports(t *testing.T, dir string) []result.Export {
	db, err := sql.Open("sqlite3", filepath.Join(dir, "aiperf.db"))
	require.NoError(t, err)
	defer db.Close()
	var raw string
	require.NoError(t, db.QueryRow(`SELECT exports FROM runs ORDER BY id DESC LIMIT 1`).Scan(&raw))
	var out []result.Export
	require.NoError(t, json.Unmarshal([]byte(raw), &out))
	return out
}

// TestMetricsListenScrapedByPrometheus: Debian's Prometheus, scraping
// --metrics-listen, answers the run's completed-request count equal to
// its request count (the run waits for that last scrape).
func TestMetricsListenScrapedByPrometheus(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	addr := closedAddr(t)
	prom := promtest.Start(t, addr)
	started := time.Now()
	inv := cli(t, "", quick(m.URL, "--request-count", "30", "--concurrency", "3", "--name", "live",
		"--metrics-listen", addr)...)
	require.Equal(t, ExitOK, inv.code, inv.stderr)
	got := prom.WaitScraped(t, `aiperf_requests_completed_total{run="live",phase="profiling"}`, started)
	require.Len(t, got, 1)
	assert.Equal(t, 30.0, got[0].Value)
	assert.Equal(t, "base", got[0].Labels["cell"])
}

const mlflowGrid = `
base = profile(
    model = "mock-model",
    url = vars["url"],
    tokenizer = vars["tok"],
    streaming = True,
    request_count = 4,
    output_tokens_mean = 2,
    num_dataset_entries = 4,
    mlflow_experiment = "perf",
    mlflow_tag = ["team:perf"],
)

sweep(
    name = "mlgrid",
    base = base,
    matrix = {"concurrency": [1, 2], "synthetic_input_tokens_mean": [16, 32]},
)
`

// TestSweepLogsParentAndChildRuns: a 2×2 sweep with --mlflow-tracking-uri
// makes one parent run and a child per trial, each with the cell's
// parameters, AIPerf's summary metrics and the trial's artifacts, in the
// FAKE MLflow server's recorded calls.
func TestSweepLogsParentAndChildRuns(t *testing.T) {
	subprocesses(t)
	m := startMock(t, mock.Config{Fast: true})
	fake := mlflowfake.Start(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "grid.star", mlflowGrid)
	inv := cli(t, dir, "sweep", script, "--set", "url="+m.URL, "--set", "tok="+tinyTokenizer(t),
		"--mlflow-tracking-uri", fake.URL, "--ui", "none")
	require.Equal(t, ExitOK, inv.code, inv.stderr)

	runs := fake.Runs()
	require.Len(t, runs, 5, "one parent and four children")
	parent := runs[0]
	assert.Equal(t, "mlgrid", parent.Name)
	assert.Equal(t, "FINISHED", parent.Status)
	assert.Equal(t, fake.Experiments()["perf"], parent.Experiment)
	labels := map[string]bool{}
	for _, child := range runs[1:] {
		assert.Equal(t, parent.ID, child.Parent)
		assert.Equal(t, "FINISHED", child.Status)
		assert.Equal(t, "perf", child.Tags["team"])
		labels[child.Tags["aiperf.cell"]] = true
		assert.Contains(t, []string{"1", "2"}, child.Params["cell.concurrency"])
		assert.Contains(t, []string{"16", "32"}, child.Params["cell.synthetic_input_tokens_mean"])
		assert.Equal(t, []float64{4}, child.Metrics["aiperf.completed_requests"])
		assert.Contains(t, child.Metrics, "request_throughput")
		assert.Contains(t, child.Metrics, "time_to_first_token.p99")
		assert.Contains(t, child.Metrics, "system/usage_prompt_tokens")
		assert.Len(t, child.Metrics["live.gen_ai.client.operation.duration"], 4)
		assert.Contains(t, child.Artifacts, "exports/profile_export_aiperf.json")
		assert.Contains(t, child.Artifacts, "exports/profile_export.jsonl")
		assert.Contains(t, child.Artifacts, "exports/mlflow_export.json")
	}
	assert.Len(t, labels, 4, "a child per cell")

	// aiperf plot --mlflow-upload: the sweep's figures go to its parent run.
	pl := cli(t, dir, "plot", "--sweep", "mlgrid", "--format", "png", "-o", filepath.Join(dir, "figs"), "--mlflow-upload",
		"--only", "ttft_vs_throughput") // one figure: PNGs are slow to draw under -race
	require.Equal(t, ExitOK, pl.code, pl.stderr)
	assert.Contains(t, pl.stdout, "figures to mlflow run "+parent.ID)
	uploaded := 0
	for path := range fake.Runs()[0].Artifacts {
		assert.True(t, strings.HasPrefix(path, "plots/") && strings.HasSuffix(path, ".png"), path)
		uploaded++
	}
	assert.Positive(t, uploaded)
}

// TestCtrlCEndsTheWaitForALastScrape: with --metrics-listen and nobody
// scraping, the run prints its table, then waits for a last scrape; a
// Ctrl-C during that wait ends it at once (it used to wait out the whole
// --metrics-linger and exit 0), the run is stored complete, and the exit
// code is 130.
func TestCtrlCEndsTheWaitForALastScrape(t *testing.T) {
	m := startMock(t, mock.Config{Fast: true})
	dir := t.TempDir()
	cmd, stdout, stderr := startAiperf(t, dir, filepath.Join(dir, "aiperf.db"), quick(m.URL, "--request-count", "6",
		"--metrics-listen", closedAddr(t), "--metrics-linger", "3600", "--artifact-dir", "out")...)
	awaitOutput(t, stderr, "for a last scrape")
	// The table is printed before the wait: the run is held there (a linger
	// of an hour), so it shows up without a Ctrl-C. (stdout is read by a
	// goroutine of its own: it may lag the stderr line.)
	awaitOutput(t, stdout, "Request Latency")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Equal(t, ExitInterrupted, exitCode(t, cmd, 2*time.Minute), "stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "interrupted after the run ended (its table, exports and stored result are complete)")
	assert.Contains(t, stdout.String(), "Stored: run 1")
	runs, err := openStore(t, dir).ListRuns(context.Background(), store.RunFilter{})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, result.StatusComplete, runs[0].Status)
}
