package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// secret appears in the fixture's raw configuration only; no export may
// contain it.
const secret = "sk-live-7f3a9c"

const (
	msNs   = int64(1_000_000)
	wallNs = int64(1_767_323_045_000_000_000) // 2026-01-02T03:04:05Z
)

// streamed builds a successful streamed request sent at sentMs whose chunks
// arrive at chunkMs (all in ms from the run start).
func streamed(index int, sentMs int64, isl int, chunkMs ...int64) metrics.Record {
	resp := make([]int64, len(chunkMs))
	for i, c := range chunkMs {
		resp[i] = c * msNs
	}
	sent := sentMs * msNs
	return metrics.Record{
		Index: index, Phase: plan.KindProfiling, PhaseKind: plan.KindProfiling,
		RequestID: "req-" + string(rune('a'+index)), Model: "mock-model", Streaming: true,
		Session: index, CorrelationID: "sess-" + string(rune('a'+index)), Conversation: "conv-" + string(rune('0'+index%3)),
		ScheduledNs: sent - msNs/4, SentNs: sent, EndNs: resp[len(resp)-1] + msNs/2,
		WallStartNs: wallNs + sent, ResponseNs: metrics.StampsOf(resp...), FirstOutputNs: resp[0],
		InputTokens: isl, OutputTokens: len(chunkMs), RequestedOutputTokens: len(chunkMs),
		Usage:  &metrics.Usage{PromptTokens: isl + 1, CompletionTokens: len(chunkMs), TotalTokens: new(isl + 1 + len(chunkMs))},
		Status: 200,
	}
}

// fixtureRun is a finished streaming run: two warmup requests, four
// successes, two failures with the same error, one failure of another kind
// and one cancelled request, with control-hook calls and a client audit.
func fixtureRun(t *testing.T) *result.Run {
	t.Helper()
	warm1 := streamed(0, 0, 64, 40, 44, 48)
	warm2 := streamed(1, 1, 64, 41, 45, 49)
	for _, r := range []*metrics.Record{&warm1, &warm2} {
		r.Phase, r.PhaseKind = plan.KindWarmup, plan.KindWarmup
	}
	okA := streamed(2, 100, 256, 140, 144, 148, 152)
	okB := streamed(3, 101, 250, 143, 147, 151, 155)
	okC := streamed(4, 102, 260, 150, 156, 160, 164)
	okD := streamed(5, 103, 262, 145, 149, 153, 157)
	okD.Retried = true
	fail := func(index int, sentMs, endMs int64, e metrics.Error) metrics.Record {
		r := streamed(index, sentMs, 255, endMs)
		r.ResponseNs, r.FirstOutputNs, r.OutputTokens, r.Usage = metrics.Stamps{}, 0, 0, nil
		r.Status, r.Error = e.Code, &e
		return r
	}
	e500 := metrics.Error{Code: 500, Type: "HTTPError", Message: "Internal Server Error"}
	f1 := fail(6, 104, 110, e500)
	f2 := fail(7, 105, 111, e500)
	f3 := fail(8, 106, 190, metrics.Error{Type: "IncompleteStream", Message: "connection closed before [DONE]"})
	cancelled := streamed(9, 107, 258, 170, 174)
	cancelled.Cancelled = true
	records := []metrics.Record{warm1, warm2, okA, okB, okC, okD, f1, f2, f3, cancelled}

	var profiling, warmup []metrics.Record
	for _, r := range records {
		if r.PhaseKind == plan.KindWarmup {
			warmup = append(warmup, r)
		} else {
			profiling = append(profiling, r)
		}
	}
	warm := metrics.Summarize(warmup, true)

	cfg := plan.NewProfile()
	cfg.Model = []string{"mock-model"}
	cfg.URL = []string{"http://bench:" + secret + "@127.0.0.1:8000"}
	cfg.Streaming = true
	cfg.APIKey = secret
	cfg.Header = []string{"Authorization:Bearer " + secret, "X-Team:perf"}
	cfg.ResetKVCache = true
	cfg.ServerProfiler = true
	cfg.RandomSeed = 42

	start := time.Unix(0, wallNs).UTC()
	lag := metrics.Compute([]float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25})
	return &result.Run{
		BenchmarkID: "bench-0001",
		ToolVersion: "0.1.0-test",
		Host:        "testhost",
		Config:      cfg.Redacted(),
		CLICommand:  "aiperf profile -m mock-model --streaming --api-key " + plan.Redacted,
		Info: result.TrialInfo{Sweep: "conc", SweepID: 7, SweepUUID: "0b7c5e2a-9d41-4f6e-8a3b-2c1d0e9f8a7b",
			CellLabel: "concurrency_8", Trial: 2, Variation: 3,
			Params: []plan.Param{{Name: "concurrency", Value: 8}, {Name: "osl", Value: 4}}},
		StartTime:    start,
		EndTime:      start.Add(200 * time.Millisecond),
		Status:       result.StatusComplete,
		Profiling:    metrics.Summarize(profiling, true),
		Warmup:       &warm,
		ErrorSummary: metrics.Errors(profiling),
		ControlHooks: []hooks.Call{
			{Hook: "reset_kv_cache", Origin: "http://127.0.0.1:8000", Path: "/reset_prefix_cache", Status: 200,
				Attempts: 2, DurationMs: 1012.5, OK: true, Warning: `2xx with {"success": false}`, StartedAt: wallNs - 2e9},
			{Hook: "profiler_start", Phase: "profiling", Origin: "http://127.0.0.1:8000", Path: "/start_profile",
				Status: 200, Attempts: 1, DurationMs: 3.25, OK: true, StartedAt: wallNs + 99*msNs},
			{Hook: "profiler_stop", Phase: "profiling", Origin: "http://127.0.0.1:8000", Path: "/stop_profile",
				Attempts: 1, DurationMs: 30000, Error: "timeout after 30s", StartedAt: wallNs + 191*msNs},
		},
		Audit: result.Audit{Mode: "rate", TargetRate: 100, AchievedRate: 98.5, SendLagMs: &lag, CapDelayed: 3,
			Retried: 1, ClientBound: true, Warnings: []string{"achieved rate 1.5% below target"}},
		Records: records,
	}
}

// minimalRun is a non-streaming run without warmup, errors, hooks or
// audit extras.
func minimalRun() *result.Run {
	recs := []metrics.Record{
		{Index: 0, Phase: plan.KindProfiling, PhaseKind: plan.KindProfiling, RequestID: "r0", SentNs: 0,
			ResponseNs: metrics.StampsOf(250 * msNs), EndNs: 250 * msNs, WallStartNs: wallNs, InputTokens: 1000, OutputTokens: 128},
		{Index: 1, Phase: plan.KindProfiling, PhaseKind: plan.KindProfiling, RequestID: "r1", SentNs: 10 * msNs,
			ResponseNs: metrics.StampsOf(1510 * msNs), EndNs: 1510 * msNs, WallStartNs: wallNs + 10*msNs, InputTokens: 1000, OutputTokens: 130},
	}
	cfg := plan.NewProfile()
	return &result.Run{
		BenchmarkID: "bench-min", ToolVersion: "0.1.0-test", Config: cfg, Status: result.StatusComplete,
		Profiling: metrics.Summarize(recs, false),
		Audit:     result.Audit{Mode: "concurrency", AchievedRate: 1.32},
		Records:   recs,
	}
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(got))
}
