package store_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/hooks"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

var dump = flag.Bool("dump", false, "keep test databases in a temporary directory and print their paths")

// testNow is the fixed clock of test stores.
var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// MustOpenDB opens an in-memory store (a file kept for inspection with
// -dump) with a fixed clock, closed when the test ends.
func MustOpenDB(tb testing.TB) *store.DB {
	tb.Helper()
	path := ":memory:"
	if *dump {
		dir, err := os.MkdirTemp("", "aiperf-store-")
		require.NoError(tb, err)
		path = filepath.Join(dir, "aiperf.db")
		tb.Logf("store: %s", path)
	}
	return openAt(tb, path)
}

func openAt(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(path)
	require.NoError(tb, err)
	db.Now = func() time.Time { return testNow }
	tb.Cleanup(func() { db.Close() })
	return db
}

// runOpts shapes a synthetic run.
type runOpts struct {
	name    string
	records int
	ttftMs  float64 // time_to_first_token avg; p99 is 1.5×
	reqPerS float64 // request_throughput
	sweepID int64
	cell    *plan.Cell
	trial   int
	status  string
}

// newRun builds a realistic run: a redacted config, profiling and warmup
// summaries, an error summary, control-hook calls, an audit and records.
func newRun(o runOpts) *result.Run {
	if o.status == "" {
		o.status = result.StatusComplete
	}
	if o.ttftMs == 0 {
		o.ttftMs = 20
	}
	if o.reqPerS == 0 {
		o.reqPerS = 50
	}
	cfg := plan.NewProfile()
	cfg.Model = []string{"mock-model"}
	cfg.URL = []string{"http://127.0.0.1:8000"}
	cfg.Streaming = true
	cfg.Concurrency = plan.Ptr(4)
	cfg.OutputTokensMean = plan.Ptr(64)
	cfg.RequestCount = plan.Ptr(o.records)
	start := testNow.Add(-time.Minute)
	stats := func(avg float64) *metrics.Stats {
		return &metrics.Stats{Avg: avg, Min: avg * 0.5, Max: avg * 2, P1: avg * 0.55, P5: avg * 0.6, P10: avg * 0.7,
			P25: avg * 0.85, P50: avg, P75: avg * 1.1, P90: avg * 1.3, P95: avg * 1.4, P99: avg * 1.5,
			Std: avg * 0.1, Count: o.records, Sum: avg * float64(o.records)}
	}
	r := &result.Run{
		BenchmarkID: fmt.Sprintf("bench-%s-%d", o.name, o.trial),
		ToolVersion: "0.1.0-test",
		Host:        "testhost",
		Config:      cfg,
		CLICommand:  "aiperf profile --model mock-model --streaming",
		Name:        o.name,
		StartTime:   start,
		EndTime:     start.Add(30 * time.Second),
		Status:      o.status,
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: metrics.TagTTFT, Header: "Time to First Token", Unit: "ms", Stats: stats(o.ttftMs)},
			{Tag: metrics.TagITL, Header: "Inter Token Latency", Unit: "ms", Stats: stats(4)},
			{Tag: metrics.TagRequestLatency, Header: "Request Latency", Unit: "ms", Stats: stats(o.ttftMs + 250)},
			{Tag: metrics.TagOutputTokenThroughput, Header: "Output Token Throughput", Unit: "tokens/sec", Value: o.reqPerS * 64},
			{Tag: metrics.TagRequestThroughput, Header: "Request Throughput", Unit: "requests/sec", Value: o.reqPerS},
			{Tag: metrics.TagRequestCount, Header: "Request Count", Unit: "requests", Value: float64(o.records - 1)},
			{Tag: metrics.TagErrorRequestCount, Header: "Error Request Count", Unit: "requests", Value: 1},
		}},
		Warmup: &metrics.Summary{Metrics: []metrics.Metric{
			{Tag: metrics.TagTTFT, Header: "Time to First Token", Unit: "ms", Stats: stats(o.ttftMs * 3)},
		}},
		ErrorSummary: []metrics.ErrorCount{{Error: metrics.Error{Code: 500, Type: "HTTPError", Message: "internal error"}, Count: 1}},
		ControlHooks: []hooks.Call{
			{Hook: "reset_kv_cache", Origin: "http://127.0.0.1:8000", Path: "/reset_prefix_cache", Status: 200, Attempts: 2, DurationMs: 1.5, OK: true, StartedAt: start.UnixNano(),
				Unanswered: 1, UnansweredAt: start.UnixNano() + 1e6},
			{Hook: "profiler_start", Phase: "profiling", Origin: "http://127.0.0.1:8000", Path: "/start_profile", Status: 503, Attempts: 3, DurationMs: 12, Error: "status 503", StartedAt: start.UnixNano() + 1},
		},
		Audit: result.Audit{Mode: "concurrency", AchievedRate: o.reqPerS, SendLagMs: &metrics.Stats{Avg: 0.1, P50: 0.05, P99: 0.9, Count: o.records},
			Retried: 1, CapSkipped: 3, Warnings: []string{"client busy"}, RxCoalesceUsecs: 20, TokensCountedWith: "o200k_base (built-in tiktoken encoding)",
			Workers: []result.Worker{{Name: "worker-0", ClockOffsetNs: -120, ClockRTTNs: 40000, Records: 7, AchievedRate: 2.5}}},
	}
	if o.cell != nil {
		r.Info = result.TrialInfo{Sweep: "scan", SweepID: o.sweepID, CellID: o.cell.ID, CellLabel: o.cell.Label, Params: o.cell.Params, Trial: o.trial}
	}
	for i := range o.records {
		sent := int64(i) * 1e6
		rec := metrics.Record{Index: i, Phase: "profiling", PhaseKind: plan.KindProfiling, RequestID: fmt.Sprint(i),
			Model: "mock-model", Streaming: true, ScheduledNs: sent - 1000, SentNs: sent, EndNs: sent + 300e6,
			WallStartNs: start.UnixNano(), ResponseNs: metrics.StampsOf(sent+20e6, sent+100e6, sent+290e6),
			InputTokens: 550, OutputTokens: 64, Status: 200}
		if i == o.records-1 {
			rec.ResponseNs, rec.Status = metrics.Stamps{}, 500
			rec.Error = &metrics.Error{Code: 500, Type: "HTTPError", Message: "internal error"}
		}
		r.Records = append(r.Records, rec)
	}
	return r
}

// testCell is a sweep cell with the given concurrency.
func testCell(sweep string, concurrency, index int) plan.Cell {
	params := []plan.Param{{Name: "concurrency", Value: float64(concurrency)}}
	return plan.Cell{ID: plan.CellID(sweep, params), Label: plan.CellLabel(params), Index: index, Params: params}
}

func count(tb testing.TB, db *store.DB, query string, args ...any) int {
	tb.Helper()
	n, err := store.CountForTest(context.Background(), db, query, args...)
	require.NoError(tb, err)
	return n
}

func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("creates parent directories and applies settings", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "a", "b", "aiperf.db")
		db := openAt(t, path)
		require.FileExists(t, path)
		for pragma, want := range map[string]string{
			"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "30000", "synchronous": "1",
		} {
			got, err := store.PragmaForTest(ctx, db, pragma)
			require.NoError(t, err)
			assert.Equal(t, want, got, pragma)
		}
		assert.Equal(t, store.MigrationCount(), count(t, db, `SELECT count(*) FROM migrations`))
	})
	t.Run("reopening applies nothing twice", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "aiperf.db")
		db := openAt(t, path)
		_, err := db.SaveRun(ctx, newRun(runOpts{name: "x", records: 3}), "")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		again := openAt(t, path)
		assert.Equal(t, store.MigrationCount(), count(t, again, `SELECT count(*) FROM migrations`))
		assert.Equal(t, 1, count(t, again, `SELECT count(*) FROM runs`))
	})
	t.Run("a path is the file it spells", func(t *testing.T) {
		// "?" and "file:" used to reach SQLite as a query and a URI: the
		// runs went to another file than the one readers then opened.
		dir := t.TempDir()
		for _, name := range []string{"x.db?mode=ro", "file:x.db", "a#b%20.db"} {
			path := filepath.Join(dir, name)
			db, err := store.Open(path)
			require.NoError(t, err, name)
			_, err = db.SaveRun(ctx, newRun(runOpts{name: "x", records: 1}), "")
			require.NoError(t, err)
			require.NoError(t, db.Close())
			require.FileExists(t, filepath.Join(dir, name))
			r, err := store.OpenReadOnly(path)
			require.NoError(t, err, name)
			assert.Equal(t, 1, count(t, r, `SELECT count(*) FROM runs`), name)
			require.NoError(t, r.Close())
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, entries, 3, "no other file was written")
		_, err = store.Open("")
		require.ErrorContains(t, err, "the path is empty")
	})
	t.Run("a directory that cannot be made is refused, saying what to do", func(t *testing.T) {
		// It was MkdirAll's bare error, exit 1.
		blocker := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(blocker, nil, 0o644))
		path := filepath.Join(blocker, "sub", "aiperf.db")
		_, err := store.Open(path)
		unusable(t, err, path, "cannot be created: its directory "+blocker+" cannot be made (not a directory): "+
			"give a path in a directory that exists or can be made")
	})
}

// TestOpenRelativeFileColonPath: a relative path beginning "file:" (as
// --store file:x.db gives it) is the file of that name, for Open and
// OpenReadOnly alike; it used to be taken as an SQLite URI by Open only,
// which wrote x.db where readers then looked for "file:x.db".
func TestOpenRelativeFileColonPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := store.Open("file:x.db")
	require.NoError(t, err)
	_, err = db.SaveRun(context.Background(), newRun(runOpts{name: "x", records: 1}), "")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	assert.FileExists(t, filepath.Join(dir, "file:x.db"))
	assert.NoFileExists(t, filepath.Join(dir, "x.db"))
	r, err := store.OpenReadOnly("file:x.db")
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, 1, count(t, r, `SELECT count(*) FROM runs`))
}

// TestScheduledRateStored: a rate run's schedule rate comes back from the
// store, so runs show judges its send rate by the schedule, as the run did;
// a concurrency run has none.
func TestScheduledRateStored(t *testing.T) {
	t.Parallel()
	db := MustOpenDB(t)
	ctx := context.Background()
	r := newRun(runOpts{name: "x", records: 2})
	r.Audit.Mode, r.Audit.TargetRate, r.Audit.ScheduledRate = "rate", 20, 17.16
	id, err := db.SaveRun(ctx, r, "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, 17.16, got.Audit.ScheduledRate)
	id, err = db.SaveRun(ctx, newRun(runOpts{name: "y", records: 2}), "")
	require.NoError(t, err)
	got, err = db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Zero(t, got.Audit.ScheduledRate)
}

// TestTokensCountedWithStored: the tokenizer a run was counted with comes
// back from the store, so runs export writes the client audit whole.
func TestTokensCountedWithStored(t *testing.T) {
	t.Parallel()
	db := MustOpenDB(t)
	ctx := context.Background()
	id, err := db.SaveRun(ctx, newRun(runOpts{name: "x", records: 2}), "")
	require.NoError(t, err)
	got, err := db.GetRun(ctx, id, false)
	require.NoError(t, err)
	assert.Equal(t, "o200k_base (built-in tiktoken encoding)", got.Audit.TokensCountedWith)
}
