package mlflow

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/mlflow/mlflowfake"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

func artifactDir(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"profile_export_aiperf.json": "{}", "profile_export_aiperf.csv": "a,b\n",
		"profile_export.jsonl": "{}\n", "plots/ttft.png": "PNG", "inputs.json.partial": "x"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	return dir
}

func finishedRun() *result.Run {
	n := 2
	return &result.Run{BenchmarkID: "0123456789abcdef", ToolVersion: "v1", Status: result.StatusComplete,
		Config: plan.Profile{EndpointType: "chat", Model: []string{"m"}, URL: []string{"http://h:8000"}, RequestCount: &n},
		Info:   result.TrialInfo{Sweep: "demo", CellLabel: "concurrency_4", Trial: 1, Params: []plan.Param{{Name: "concurrency", Value: 4}}},
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: "time_to_first_token", Stats: &metrics.Stats{Avg: 12, P99: 20, Count: 2}},
			{Tag: "request_throughput", Value: 3.5},
			{Tag: "usage_prompt_tokens", Stats: &metrics.Stats{Avg: 100, P95: 110}},
		}},
		Records: []metrics.Record{{PhaseKind: plan.KindProfiling}, {PhaseKind: plan.KindProfiling}},
	}
}

// TestRunAgainstFake logs a trial's run to the fake: a new experiment, a
// child of the parent, live scalars, AIPerf's summary keys (system/ for
// diagnostics), parameters and tags, the artifacts under exports/ and
// plots/, and mlflow_export.json.
func TestRunAgainstFake(t *testing.T) {
	fake := mlflowfake.Start(t)
	ctx := context.Background()
	parent, err := StartParent(ctx, Options{TrackingURI: fake.URL, Experiment: "perf"}, "demo",
		map[string]string{"sweep.cells": "4"})
	require.NoError(t, err)
	dir := artifactDir(t)
	r, err := Start(ctx, Options{TrackingURI: fake.URL, Experiment: "perf", ParentRunID: parent.Info.RunID,
		RunName: "concurrency_4 (trial 1)", Tags: map[string]string{"team": "perf"}, ArtifactDir: dir,
		BenchmarkID: "0123456789abcdef", Streaming: true, Interval: time.Hour})
	require.NoError(t, err)
	r.StartLive()
	for i := range 3 {
		r.Record(&metrics.Record{Index: i, OutputTokens: 4, ResponseNs: metrics.StampsOf(50e6, 60e6, 70e6, 80e6)})
	}
	out := r.Finish(ctx, finishedRun())
	require.NoError(t, out.Err)
	require.NoError(t, parent.End(ctx, "FINISHED"))

	runs := fake.Runs()
	require.Len(t, runs, 2)
	assert.Equal(t, "demo", runs[0].Name)
	assert.Equal(t, "4", runs[0].Params["sweep.cells"])
	child := runs[1]
	assert.Equal(t, parent.Info.RunID, child.Parent)
	assert.Equal(t, fake.Experiments()["perf"], child.Experiment)
	assert.Equal(t, "FINISHED", child.Status)
	assert.Equal(t, "concurrency_4 (trial 1)", child.Name)
	assert.Len(t, child.Metrics[liveDuration], 3)
	assert.Equal(t, []float64{0.05, 0.05, 0.05}, child.Metrics[liveFirst])
	assert.Equal(t, []float64{12}, child.Metrics["time_to_first_token"])
	assert.Equal(t, []float64{20}, child.Metrics["time_to_first_token.p99"])
	assert.Equal(t, []float64{3.5}, child.Metrics["request_throughput"])
	assert.Equal(t, []float64{110}, child.Metrics["system/usage_prompt_tokens.p95"])
	assert.NotContains(t, child.Metrics, "usage_prompt_tokens")
	assert.Equal(t, []float64{2}, child.Metrics["aiperf.completed_requests"])
	assert.Equal(t, []float64{2}, child.Metrics["aiperf.total_expected_requests"])
	assert.Equal(t, "4", child.Params["cell.concurrency"])
	assert.Equal(t, "chat", child.Params["endpoint.type"])
	assert.Equal(t, "perf", child.Tags["team"])
	assert.Equal(t, "concurrency_4", child.Tags["aiperf.cell"])
	assert.Equal(t, "0123456789abcdef", child.Tags["benchmark_id"])
	assert.ElementsMatch(t, []string{"exports/profile_export_aiperf.json", "exports/profile_export_aiperf.csv",
		"exports/profile_export.jsonl", "plots/ttft.png", "exports/mlflow_export.json"}, keys(child.Artifacts))
	var meta map[string]any
	require.NoError(t, json.Unmarshal(child.Artifacts["exports/mlflow_export.json"], &meta))
	assert.Equal(t, child.ID, meta["run_id"])
	assert.Equal(t, parent.Info.RunID, meta["parent_run_id"])
	assert.Equal(t, true, meta["reused_live_run"])
	assert.Contains(t, meta["uploaded_artifacts"], "plots/ttft.png")
	assert.Contains(t, meta["metric_keys"], "system/usage_prompt_tokens.p95")

	// aiperf plot --mlflow-upload: a figure made later goes to the same run.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plots", "itl.png"), []byte("PNG2"), 0o644))
	up, err := UploadFigures(ctx, plan.RedactURL(fake.URL), child.ID, dir, []string{filepath.Join(dir, "plots", "itl.png")}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"plots/itl.png"}, up)
	assert.Equal(t, []byte("PNG2"), fake.Runs()[1].Artifacts["plots/itl.png"])
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLogBatchSplits: 2500 metrics and 150 params go in requests within
// MLflow's limits (the fake refuses a larger one).
func TestLogBatchSplits(t *testing.T) {
	fake := mlflowfake.Start(t)
	c, err := NewClient(fake.URL, nil)
	require.NoError(t, err)
	ctx := context.Background()
	exp, err := c.ExperimentID(ctx, "x")
	require.NoError(t, err)
	info, err := c.CreateRun(ctx, exp, "r", nil, time.Now())
	require.NoError(t, err)
	ms := make([]Metric, 2500)
	for i := range ms {
		ms[i] = Metric{Key: "k", Value: float64(i), Timestamp: 1, Step: int64(i)}
	}
	ps := make([]KV, 150)
	for i := range ps {
		ps[i] = KV{Key: "p" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Value: "v"}
	}
	require.NoError(t, c.LogBatch(ctx, info.RunID, ms, ps, nil))
	run := fake.Runs()[0]
	assert.Len(t, run.Metrics["k"], 2500)
	assert.Len(t, run.Params, 150)
	batches := 0
	for _, call := range fake.Calls() {
		if call.Path == "/api/2.0/mlflow/runs/log-batch" {
			batches++
			assert.Equal(t, 200, call.Status)
		}
	}
	assert.Equal(t, 3, batches)
}

// TestErrorsRedactCredentials: the server's error, echoing the token, is
// reported without it.
func TestErrorsRedactCredentials(t *testing.T) {
	fake := mlflowfake.Start(t)
	fake.Auth = "Bearer right"
	t.Setenv("MLFLOW_TRACKING_TOKEN", "wrong-t0ken")
	_, err := Start(context.Background(), Options{TrackingURI: fake.URL, BenchmarkID: "b",
		Redact: plan.NewRedactor(EnvSecrets()...).Redact})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401 UNAUTHENTICATED")
	assert.NotContains(t, err.Error(), "wrong-t0ken")
}

// TestServerErrorStaysOnOneLine: a tracking server's error code and message
// carrying line breaks and escapes are shown escaped, so the error (printed
// after `aiperf: error:`) stays on its one line.
func TestServerErrorStaysOnOneLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error_code": "BAD\nCODE", "message": "refused\r\nStored: run 1\u001b[2K"}`))
	}))
	t.Cleanup(srv.Close)
	_, err := Start(context.Background(), Options{TrackingURI: srv.URL, BenchmarkID: "b"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `400 BAD\nCODE: refused\r\nStored: run 1\x1b[2K`)
	assert.NotContains(t, err.Error(), "\n")
}

// TestEnvSecretsHoldTheBasicCredential: with $MLFLOW_TRACKING_USERNAME and
// $MLFLOW_TRACKING_PASSWORD the Basic credential sent is a secret as the
// password is (a server echoing the header leaks neither); the user name
// alone is not one.
func TestEnvSecretsHoldTheBasicCredential(t *testing.T) {
	t.Setenv("MLFLOW_TRACKING_TOKEN", "")
	t.Setenv("MLFLOW_TRACKING_USERNAME", "alice")
	t.Setenv("MLFLOW_TRACKING_PASSWORD", "pw-secret-1")
	cred := base64.StdEncoding.EncodeToString([]byte("alice:pw-secret-1"))
	assert.Equal(t, []string{"pw-secret-1", cred}, EnvSecrets())
	rd := plan.NewRedactor(EnvSecrets()...)
	assert.Equal(t, "401: Authorization: Basic <redacted> of alice", rd.Redact("401: Authorization: Basic "+cred+" of alice"))
}

// TestRealServer runs against a real MLflow tracking server when
// MLFLOW_TRACKING_URI names one (none can run on the CI machines).
func TestRealServer(t *testing.T) {
	uri := os.Getenv("MLFLOW_TRACKING_URI")
	if uri == "" {
		t.Skip("MLFLOW_TRACKING_URI is not set: no real MLflow server to test against (the fake's tests stand in)")
	}
	ctx := context.Background()
	dir := artifactDir(t)
	r, err := Start(ctx, Options{TrackingURI: uri, Experiment: "aiperf-go-test", ArtifactDir: dir,
		BenchmarkID: "0123456789abcdef"})
	require.NoError(t, err)
	out := r.Finish(ctx, finishedRun())
	require.NoError(t, out.Err)
	c, err := NewClient(uri, nil)
	require.NoError(t, err)
	info, ms, _, tags, err := c.GetRun(ctx, r.Info.RunID)
	require.NoError(t, err)
	assert.Equal(t, "FINISHED", info.Status)
	assert.Equal(t, 12.0, ms["time_to_first_token"])
	assert.Equal(t, 110.0, ms["system/usage_prompt_tokens.p95"])
	assert.Equal(t, "0123456789abcdef", tags["benchmark_id"])
	assert.Contains(t, out.Uploaded, "plots/ttft.png")
}

// BenchmarkRecord is the finisher's cost per record of the live MLflow
// scalars (the queue drained as fast as it fills).
func BenchmarkRecord(b *testing.B) {
	r := &Run{o: Options{Streaming: true}, queue: make(chan Metric, 8)}
	rec := &metrics.Record{OutputTokens: 4, ResponseNs: metrics.StampsOf(50e6, 60e6, 70e6, 80e6)}
	b.ReportAllocs()
	for b.Loop() {
		r.Record(rec)
		for range 4 {
			<-r.queue
		}
	}
}

// TestFinishStopsAtAServerGoneQuiet: a tracking server that stops
// answering after the run was created gets one call of the finish (the
// summary batch), not one per artifact and a status update each waiting
// for its timeout; the outcome says no metric was logged.
func TestFinishStopsAtAServerGoneQuiet(t *testing.T) {
	fake := mlflowfake.Start(t)
	ctx := context.Background()
	r, err := Start(ctx, Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t), BenchmarkID: "0123456789abcdef"})
	require.NoError(t, err)
	fake.Quiet.Store(true)
	out := r.Finish(ctx, finishedRun())
	require.Error(t, out.Err)
	assert.True(t, NoAnswer(out.Err), "%v", out.Err)
	assert.Contains(t, out.Err.Error(), "mlflow POST /api/2.0/mlflow/runs/log-batch")
	assert.EqualValues(t, 1, fake.Unanswered.Load(), "nothing after the call that went unanswered")
	assert.Zero(t, out.Metrics, "the batch was not logged")
	assert.Empty(t, out.Uploaded)
}

// TestFinishOfAnInterruptedRun: a run interrupted before its finish (the
// context already cancelled) still logs its summary and artifacts and ends
// KILLED, bounded by its own deadline.
func TestFinishOfAnInterruptedRun(t *testing.T) {
	fake := mlflowfake.Start(t)
	r, err := Start(context.Background(), Options{TrackingURI: fake.URL, ArtifactDir: artifactDir(t), BenchmarkID: "0123456789abcdef"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run := finishedRun()
	run.Status = result.StatusInterrupted
	out := r.Finish(ctx, run)
	require.NoError(t, out.Err)
	assert.Positive(t, out.Metrics)
	assert.NotEmpty(t, out.Uploaded)
	runs := fake.Runs()
	require.Len(t, runs, 1)
	assert.Equal(t, "KILLED", runs[0].Status)
}
