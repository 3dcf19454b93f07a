package compare_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/compare"
	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func openStore(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(path)
	require.NoError(tb, err)
	db.Now = func() time.Time { return testNow }
	tb.Cleanup(func() { db.Close() })
	return db
}

// trial is one synthetic run's headline values.
type trial struct {
	ttft   float64  // time_to_first_token avg (ms); p99 = ttft + 10
	rps    float64  // request_throughput
	status string   // complete when empty
	bound  bool     // CLIENT-BOUND
	warm   bool     // its KV-cache reset did not clear the cache
	warns  []string // its warnings
}

// setup shapes a synthetic run's configuration and placement.
type setup struct {
	name    string
	model   string
	url     string
	osl     int
	rx      int      // the client's receive coalescing window, µs
	extra   []string // --extra-inputs
	stddev  float64  // --isl-stddev
	count   int      // --request-count (0: unset)
	sweepID int64
	cell    *plan.Cell
}

func stats(avg, p99 float64) *metrics.Stats {
	return &metrics.Stats{Avg: avg, Min: avg * 0.8, Max: p99 * 1.1, P50: avg, P90: (avg + p99) / 2, P99: p99, Std: avg / 10, Count: 100, Sum: avg * 100}
}

func makeRun(s setup, number int, tr trial) *result.Run {
	cfg := plan.NewProfile()
	cfg.Model = []string{s.model}
	if s.model == "" {
		cfg.Model = []string{"mock-model"}
	}
	if s.url != "" {
		cfg.URL = []string{s.url}
	}
	cfg.Streaming = true
	cfg.Concurrency = plan.Ptr(8)
	cfg.OutputTokensMean = plan.Ptr(max(s.osl, 64))
	cfg.ExtraInputs, cfg.SyntheticInputTokensStddev = s.extra, s.stddev
	if s.count > 0 {
		cfg.RequestCount = plan.Ptr(s.count)
	}
	status := tr.status
	if status == "" {
		status = result.StatusComplete
	}
	r := &result.Run{
		Name: s.name, Config: cfg, Status: status, StartTime: testNow, EndTime: testNow.Add(time.Minute),
		Audit: result.Audit{Mode: "concurrency", ClientBound: tr.bound, RxCoalesceUsecs: s.rx},
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: metrics.TagTTFT, Header: "Time to First Token", Unit: "ms", Stats: stats(tr.ttft, tr.ttft+10)},
			{Tag: metrics.TagITL, Header: "Inter Token Latency", Unit: "ms", Stats: stats(4, 6)},
			{Tag: metrics.TagRequestLatency, Header: "Request Latency", Unit: "ms", Stats: stats(tr.ttft+250, tr.ttft+300)},
			{Tag: metrics.TagOutputTokenThroughput, Header: "Output Token Throughput", Unit: "tokens/sec", Value: tr.rps * 64},
			{Tag: metrics.TagRequestThroughput, Header: "Request Throughput", Unit: "requests/sec", Value: tr.rps},
			{Tag: metrics.TagErrorRequestCount, Header: "Error Request Count", Unit: "requests", Value: 0},
		}},
	}
	r.Audit.Warnings = tr.warns
	if tr.warm {
		r.Audit.KVReset = result.ResetNotCleared
	}
	if s.cell != nil {
		r.Info = result.TrialInfo{SweepID: s.sweepID, CellID: s.cell.ID, CellLabel: s.cell.Label, Params: s.cell.Params, Trial: number}
	}
	return r
}

// saveGroup stores standalone runs named s.name, one per trial.
func saveGroup(t *testing.T, db *store.DB, s setup, trials ...trial) {
	t.Helper()
	for i, tr := range trials {
		_, err := db.SaveRun(context.Background(), makeRun(s, i+1, tr), "")
		require.NoError(t, err)
	}
}

func groups(t *testing.T, db *store.DB, opt compare.Options, refs ...string) *compare.GroupsReport {
	t.Helper()
	var gs []*store.Group
	for _, ref := range refs {
		g, err := db.RunsByRef(context.Background(), ref, opt.StatKeys())
		require.NoError(t, err)
		gs = append(gs, g)
	}
	return compare.Groups(gs, opt)
}

func metric(t *testing.T, r *compare.GroupsReport, key string) compare.GroupsMetric {
	t.Helper()
	for _, m := range r.Metrics {
		if m.Metric == key {
			return m
		}
	}
	t.Fatalf("no metric %s", key)
	return compare.GroupsMetric{}
}

func ptr[T any](v T) *T { return &v }

func ttfts(values ...float64) []trial {
	out := make([]trial, len(values))
	for i, v := range values {
		out[i] = trial{ttft: v, rps: 30}
	}
	return out
}

func TestGroupsVerdicts(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	noisy := func(mean float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = mean + rng.NormFloat64()*0.3
		}
		return out
	}
	db := openStore(t, ":memory:")
	saveGroup(t, db, setup{name: "ttft20"}, ttfts(noisy(20, 3)...)...)
	saveGroup(t, db, setup{name: "ttft60"}, ttfts(noisy(60, 3)...)...)
	saveGroup(t, db, setup{name: "same-a"}, ttfts(noisy(40, 3)...)...)
	saveGroup(t, db, setup{name: "same-b"}, ttfts(noisy(40, 3)...)...)
	saveGroup(t, db, setup{name: "single-a"}, ttfts(20)...)
	saveGroup(t, db, setup{name: "single-b"}, ttfts(60)...)
	opt := compare.Options{}

	t.Run("ttft 20 vs 60: +200%, significant and worse", func(t *testing.T) {
		rep := groups(t, db, opt, "ttft20", "ttft60")
		m := metric(t, rep, "time_to_first_token.avg")
		assert.Equal(t, compare.LowerIsBetter, m.Better)
		assert.Equal(t, 3, m.Values[0].N)
		assert.InDelta(t, 20, float64(m.Values[0].Mean), 1)
		v := m.Versus[0]
		assert.InDelta(t, 200, float64(v.DeltaPct), 10)
		assert.True(t, v.Significant)
		assert.Equal(t, compare.Worse, v.Verdict)
		assert.Less(t, float64(v.P), 0.001)
		assert.InDelta(t, 2, float64(v.ThresholdPct), 0, "a latency's default threshold")
		assert.Greater(t, float64(v.TOSTP), 0.99, "+200% is nowhere near equivalent within ±2%")
		thr := metric(t, rep, "request_throughput.avg")
		assert.Equal(t, compare.Identical, thr.Versus[0].Verdict, "the same throughput in every trial: no spread to test")
		assert.Equal(t, compare.HigherIsBetter, thr.Better)
		plain := groups(t, db, compare.Options{Threshold: ptr(0.0)}, "ttft20", "ttft60")
		assert.Equal(t, compare.Identical, metric(t, plain, "request_throughput.avg").Versus[0].Verdict,
			"threshold 0 too")

		back := groups(t, db, opt, "ttft60", "ttft20")
		assert.Equal(t, compare.Better, metric(t, back, "time_to_first_token.avg").Versus[0].Verdict)
	})
	t.Run("same distribution: equivalent, or no significant difference at threshold 0", func(t *testing.T) {
		rep := groups(t, db, opt, "same-a", "same-b")
		plain := groups(t, db, compare.Options{Threshold: ptr(0.0)}, "same-a", "same-b")
		for _, key := range []string{"time_to_first_token.avg", "time_to_first_token.p99", "request_latency.p99"} {
			v := metric(t, rep, key).Versus[0]
			assert.False(t, v.Significant, key)
			assert.Equal(t, compare.Equivalent, v.Verdict, key)
			assert.Less(t, float64(v.TOSTP), 0.05, key)
			p := metric(t, plain, key).Versus[0]
			assert.Equal(t, compare.NoDifference, p.Verdict, key)
			assert.True(t, math.IsNaN(float64(p.TOSTP)), "threshold 0: no TOST")
		}
	})
	t.Run("one trial per side is unreplicated", func(t *testing.T) {
		rep := groups(t, db, opt, "single-a", "single-b")
		v := metric(t, rep, "time_to_first_token.avg").Versus[0]
		assert.Equal(t, compare.Unreplicated, v.Verdict)
		assert.False(t, v.Significant)
		assert.InDelta(t, 200, float64(v.DeltaPct), 1e-9)
		mixed := groups(t, db, opt, "ttft20", "single-b")
		assert.Equal(t, compare.Unreplicated, metric(t, mixed, "time_to_first_token.avg").Versus[0].Verdict)
	})
	t.Run("stricter confidence needs stronger evidence", func(t *testing.T) {
		rep := groups(t, db, compare.Options{ConfidenceLevel: 0.9999999999}, "ttft20", "ttft60")
		assert.Equal(t, compare.Inconclusive, metric(t, rep, "time_to_first_token.avg").Versus[0].Verdict)
		rep = groups(t, db, compare.Options{ConfidenceLevel: 0.9999999999, Threshold: ptr(0.0)}, "ttft20", "ttft60")
		assert.Equal(t, compare.NoDifference, metric(t, rep, "time_to_first_token.avg").Versus[0].Verdict)
	})
}

func TestGroupsNotes(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveGroup(t, db, setup{name: "base"}, ttfts(20, 21)...)
	saveGroup(t, db, setup{name: "other", model: "big-model", osl: 128},
		trial{ttft: 30, rps: 30}, trial{ttft: 31, rps: 30}, trial{ttft: 99, rps: 1, status: result.StatusFailed})
	opt := compare.Options{Keys: []compare.Key{{Metric: "time_to_first_token", Stat: "avg"}, {Metric: "no_such_metric", Stat: "avg"}}}
	rep := groups(t, db, opt, "base", "other")
	assert.Equal(t, []string{"model: base = mock-model, other = big-model", "osl: base = 64, other = 128"}, rep.ConfigDifferences)
	require.Len(t, rep.Groups, 2)
	assert.Equal(t, 2, rep.Groups[1].Trials, "the failed run is left out")
	assert.Len(t, rep.Groups[1].Excluded, 1)
	assert.InDelta(t, 30.5, float64(rep.Metrics[0].Values[1].Mean), 1e-9)
	assert.Equal(t, compare.NoData, rep.Metrics[1].Versus[0].Verdict)
	assert.Contains(t, rep.Notes, "no_such_metric.avg: no compared run has this statistic")

	saveGroup(t, db, setup{name: "broken"}, trial{ttft: 1, rps: 1, status: result.StatusFailed})
	saveGroup(t, db, setup{name: "broken2"}, trial{ttft: 1, rps: 1, status: result.StatusFailed})
	rep = groups(t, db, compare.Options{Keys: opt.Keys[:1]}, "broken", "broken2")
	assert.Contains(t, rep.Notes, "time_to_first_token.avg: no complete run (runs that did not complete are left out, above) has this statistic")
	errs := compare.Key{Metric: "error_request_count", Stat: "avg"}
	rep = groups(t, db, compare.Options{Keys: []compare.Key{errs}}, "broken", "broken2")
	assert.Equal(t, 1, metric(t, rep, "error_request_count.avg").Values[0].N, "a failed run's count of its outcomes counts")
	assert.NotContains(t, rep.Notes, "error_request_count.avg: no complete run (runs that did not complete are left out, above) has this statistic",
		"the row has the failed runs' counts: no note may say it has none")

	saveGroup(t, db, setup{name: "gpu2", url: "http://gpu2:8000"}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "base", "gpu2")
	assert.Equal(t, []string{"url: base = http://localhost:8000, gpu2 = http://gpu2:8000"}, rep.ConfigDifferences,
		"two servers compared: the table says so")
	saveGroup(t, db, setup{name: "typed", url: "localhost:8000/"}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "base", "typed")
	assert.Empty(t, rep.ConfigDifferences, "one server, its URL typed without a scheme and with a trailing slash")

	saveGroup(t, db, setup{name: "1"}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "1", "base")
	assert.Contains(t, rep.Notes, `"1" was read as run 1; it also names runs named "1" (--name): `+
		"give run ids, or NAME/CELL for a sweep's cell, to pick another", "a run id comes first, and the note says what it hid")

	saveGroup(t, db, setup{name: "pinned", rx: 20}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "base", "pinned")
	assert.Equal(t, []string{"rx_coalesce_usecs: base = 0, pinned = 20"}, rep.ConfigDifferences,
		"clients that read differently: the table says so")

	saveGroup(t, db, setup{name: "hot", extra: []string{"temperature:0.9", "ignore_eos:true"}, stddev: 50}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "base", "hot")
	assert.Equal(t, []string{`extra_inputs: base = -, hot = ["temperature:0.9","ignore_eos:true"]`,
		"synthetic_input_tokens_stddev: base = -, hot = 50"}, rep.ConfigDifferences,
		"requests asking the server for other work: the table says so")
	saveGroup(t, db, setup{name: "short", count: 20}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "base", "short")
	assert.Equal(t, []string{"request_count: base = -, short = 20"}, rep.ConfigDifferences,
		"fewer requests sent: request_count.avg's verdict is the configuration's, and the table says so")
	long := strings.Repeat("x", 150)
	saveGroup(t, db, setup{name: "long1", extra: []string{long + "1"}}, ttfts(20, 21)...)
	saveGroup(t, db, setup{name: "long2", extra: []string{long + "2"}}, ttfts(20, 21)...)
	rep = groups(t, db, opt, "long1", "long2")
	require.Len(t, rep.ConfigDifferences, 1, "values are compared whole, shown cut")
	assert.Contains(t, rep.ConfigDifferences[0], "…")
	assert.Less(t, len([]rune(rep.ConfigDifferences[0])), 250)

	saveGroup(t, db, setup{name: "starved"}, trial{ttft: 40, rps: 30, bound: true}, trial{ttft: 41, rps: 30})
	rep = groups(t, db, opt, "base", "starved")
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "warning: starved: 1 of 2 runs were CLIENT-BOUND [",
		"a side the client shaped is called out")
	assert.NotContains(t, strings.Join(rep.Notes, "\n"), "base: ")

	saveGroup(t, db, setup{name: "warm"}, trial{ttft: 20, rps: 30, warm: true}, trial{ttft: 21, rps: 30})
	rep = groups(t, db, opt, "base", "warm")
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "warning: warm: in 1 of 2 runs [",
		"a side whose reset left the cache warm is called out")
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "the KV-cache reset did not clear the cache")

	stopped := []string{"the client process stalled", "server profiler stop failed for 1 origin(s): status 500"}
	saveGroup(t, db, setup{name: "hooked"}, trial{ttft: 20, rps: 30, warns: stopped}, trial{ttft: 21, rps: 30, warns: stopped[:1]})
	rep = groups(t, db, opt, "base", "hooked")
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "warning: hooked: server profiler stop failed in 1 of 2 runs [",
		"a side with a hook warning is called out")
	assert.NotContains(t, strings.Join(rep.Notes, "\n"), "stalled", "other warnings are not")
}

func TestGroupsTableNamesLongReferences(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	long := "a-rather-long-group-label-x"
	saveGroup(t, db, setup{name: "base"}, ttfts(20, 21)...)
	saveGroup(t, db, setup{name: long}, ttfts(30, 31)...)
	short := groups(t, db, compare.Options{}, "base", "base").Table()
	assert.Contains(t, short.Header, "base (n=2)", "short references title their columns")

	tb := groups(t, db, compare.Options{}, "base", long).Table()
	assert.Equal(t, []string{"A (n=2)", "B (n=2)", "B Δ", "B verdict"}, tb.Header[3:])
	assert.Contains(t, tb.Notes, "A = base; B = "+long)
}

// saveSweep stores a sweep over concurrency with the given trials per cell.
func saveSweep(t *testing.T, db *store.DB, name string, cells map[int][]trial, order ...int) {
	t.Helper()
	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: name, Trials: 3})
	require.NoError(t, err)
	for i, c := range order {
		params := []plan.Param{{Name: "concurrency", Value: float64(c)}, {Name: "isl", Value: float64(128)}}
		if i%2 == 1 {
			params[0], params[1] = params[1], params[0] // declaration order must not matter for matching
		}
		cell := plan.Cell{ID: plan.CellID(name, params), Label: plan.CellLabel(params), Index: i, Params: params}
		for n, tr := range cells[c] {
			_, err := db.SaveRun(ctx, makeRun(setup{sweepID: id, cell: &cell}, n+1, tr), "")
			require.NoError(t, err)
		}
	}
	require.NoError(t, db.FinishSweep(ctx, id, result.StatusComplete))
}

var scanCells = map[int][]trial{
	1:  {{ttft: 20, rps: 10}, {ttft: 21, rps: 10.5}, {ttft: 19, rps: 9.5}},
	4:  {{ttft: 25, rps: 35}, {ttft: 26, rps: 36}, {ttft: 24, rps: 34}},
	8:  {{ttft: 60, rps: 30}, {ttft: 61, rps: 31}, {ttft: 90, rps: 1, status: result.StatusFailed}}, // dominated by 4
	16: {{ttft: 80, rps: 60}, {ttft: 82, rps: 62}, {ttft: 78, rps: 58}},
}

func TestSweepReport(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveSweep(t, db, "scan", scanCells, 1, 4, 8, 16)
	opt := compare.Options{}
	s, err := db.SweepRuns(context.Background(), "scan", opt.StatKeys())
	require.NoError(t, err)
	rep := compare.Sweep(s, opt)
	assert.Equal(t, []string{"concurrency", "isl"}, rep.Parameters)
	require.Len(t, rep.Cells, 4)
	pareto := map[string]bool{}
	for _, c := range rep.Cells {
		pareto[c.Label] = c.ParetoOptimal
	}
	assert.Equal(t, map[string]bool{
		"concurrency_1__isl_128": true, "isl_128__concurrency_4": true,
		"concurrency_8__isl_128": false, "isl_128__concurrency_16": true,
	}, pareto)
	assert.Equal(t, compare.ParetoAxes{Throughput: "request_throughput.avg", Latency: "time_to_first_token.p99"}, rep.Pareto)
	assert.Equal(t, 2, rep.Cells[2].Trials)
	assert.Equal(t, 3, rep.Cells[2].Runs)
	best := map[string]string{}
	for _, b := range rep.Best {
		best[b.Metric] = b.Cell
	}
	assert.Equal(t, "concurrency_1__isl_128", best["time_to_first_token.avg"])
	assert.Equal(t, "isl_128__concurrency_16", best["request_throughput.avg"])
	assert.NotContains(t, best, "inter_token_latency.avg", "every cell has the same value: no best")
	assert.NotContains(t, best, "error_request_count.avg")
	e := rep.Cells[1].Values[0] // concurrency 4, ttft avg 25 ± t(0.975, 2)·1/√3
	assert.InDelta(t, 25, float64(e.Mean), 1e-9)
	assert.InDelta(t, 25-4.302652729911275/1.7320508075688772, float64(e.CILow), 1e-9)
}

// TestClientBoundCellIsNeitherBestNorPareto: a cell with a CLIENT-BOUND
// trial (its client failed a share of its requests itself, and its
// numbers look best) is not starred best, is not on the Pareto front and
// pushes no other cell off it; its row says client-bound.
func TestClientBoundCellIsNeitherBestNorPareto(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	cells := map[int][]trial{
		1:   {{ttft: 20, rps: 10}, {ttft: 21, rps: 10.5}},
		300: {{ttft: 5, rps: 900, bound: true}, {ttft: 6, rps: 880}},
	}
	saveSweep(t, db, "bound", cells, 1, 300)
	opt := compare.Options{}
	s, err := db.SweepRuns(context.Background(), "bound", opt.StatKeys())
	require.NoError(t, err)
	rep := compare.Sweep(s, opt)
	require.Len(t, rep.Cells, 2)
	assert.False(t, rep.Cells[0].ClientBound)
	assert.True(t, rep.Cells[1].ClientBound)
	assert.True(t, rep.Cells[0].ParetoOptimal, "the bound cell pushes no cell off the front")
	assert.False(t, rep.Cells[1].ParetoOptimal)
	for _, b := range rep.Best {
		assert.NotEqual(t, rep.Cells[1].Label, b.Cell, b.Metric)
	}
	tb := rep.Table()
	assert.Equal(t, "client-bound", tb.Rows[1][len(tb.Rows[1])-1])
	assert.Contains(t, strings.Join(tb.Notes, "\n"), "a client-bound cell (a CLIENT-BOUND trial: the client shaped its numbers) is neither")
}

func TestSweepTableNamesScenarioCells(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveSweep(t, db, "scan", scanCells, 1, 4)
	s, err := db.SweepRuns(context.Background(), "scan", compare.Options{}.StatKeys())
	require.NoError(t, err)
	tb := compare.Sweep(s, compare.Options{}).Table()
	assert.Equal(t, []string{"concurrency", "isl", "trials"}, tb.Header[:3], "matrix cells are named by their parameters")

	ctx := context.Background()
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "cache", Trials: 1})
	require.NoError(t, err)
	for i, name := range []string{"cold", "warm"} {
		params := []plan.Param{{Name: "warmup_request_count", Value: []any{nil, float64(20)}[i]}}
		cell := plan.Cell{ID: plan.CellID("cache", params), Label: name, Index: i, Params: params}
		_, err := db.SaveRun(ctx, makeRun(setup{sweepID: id, cell: &cell}, 1, trial{ttft: 20, rps: 10}), "")
		require.NoError(t, err)
	}
	s, err = db.SweepRuns(ctx, "cache", compare.Options{}.StatKeys())
	require.NoError(t, err)
	tb = compare.Sweep(s, compare.Options{}).Table()
	assert.Equal(t, []string{"cell", "warmup_request_count", "trials"}, tb.Header[:3], "scenario cells keep their names")
	assert.Equal(t, []string{"cold", "-", "1"}, tb.Rows[0][:3], "an unset value shows as -")
}

func TestSweepDiff(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveSweep(t, db, "before", scanCells, 1, 4, 8)
	after := map[int][]trial{
		1:  scanCells[1],
		4:  {{ttft: 12, rps: 35}, {ttft: 13, rps: 36}, {ttft: 12.5, rps: 34}},
		16: scanCells[16],
	}
	saveSweep(t, db, "after", after, 4, 1, 16) // other order, other param order per cell
	opt := compare.Options{}
	a, err := db.SweepRuns(context.Background(), "before", opt.StatKeys())
	require.NoError(t, err)
	b, err := db.SweepRuns(context.Background(), "after", opt.StatKeys())
	require.NoError(t, err)
	rep := compare.SweepDiff(a, b, opt)
	require.Len(t, rep.Cells, 2)
	assert.Equal(t, "concurrency_1__isl_128", rep.Cells[0].Label)
	assert.Equal(t, compare.Inconclusive, rep.Cells[0].Metrics[0].Versus.Verdict, "same trials, too few to show equivalence")
	assert.Equal(t, compare.NoDifference, compare.SweepDiff(a, b, compare.Options{Threshold: ptr(0.0)}).Cells[0].Metrics[0].Versus.Verdict)
	c4 := rep.Cells[1].Metrics[0]
	assert.Equal(t, "time_to_first_token.avg", c4.Metric)
	assert.Equal(t, compare.Better, c4.Versus.Verdict)
	assert.InDelta(t, -50, float64(c4.Versus.DeltaPct), 1)
	assert.Equal(t, []string{"concurrency_8__isl_128"}, rep.OnlyA)
	assert.Equal(t, []string{"concurrency_16__isl_128"}, rep.OnlyB)
	assert.Empty(t, rep.ConfigDifferences)
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	keys, err := compare.ParseKeys([]string{"time_to_first_token.p99,request_throughput.avg", " time_to_first_token.p99 "})
	require.NoError(t, err)
	assert.Equal(t, []compare.Key{{Metric: "time_to_first_token", Stat: "p99"}, {Metric: "request_throughput", Stat: "avg"}}, keys)
	_, err = compare.ParseKeys([]string{"ttft"})
	require.ErrorContains(t, err, `ttft: want metric.stat`)
	_, err = compare.ParseKeys([]string{"ttft.p42"})
	require.ErrorContains(t, err, `unknown statistic "p42"`)
	keys, err = compare.ParseKeys([]string{"ttft.p99,ITL.avg,latency.p50"}) // the tables' short names
	require.NoError(t, err)
	assert.Equal(t, []compare.Key{{Metric: "time_to_first_token", Stat: "p99"}, {Metric: "inter_token_latency", Stat: "avg"},
		{Metric: "request_latency", Stat: "p50"}}, keys)
	_, err = compare.ParseKeys([]string{"time_to_frst_token.p99"})
	assert.EqualError(t, err, `time_to_frst_token.p99: unknown metric "time_to_frst_token" (did you mean "time_to_first_token"?)`,
		"a near miss gets the name, not the whole list")
	_, err = compare.ParseKeys([]string{"effective_concurrency.p75"})
	assert.EqualError(t, err, "effective_concurrency.p75: effective_concurrency is time-weighted and has no p75: "+
		"use one of avg, min, max, p50, p90, p95, p99, std", "a statistic the metric does not have is not compared as 0")
	_, err = compare.ParseKeys([]string{"effective_concurrency.p95"})
	assert.NoError(t, err)
}

func TestDirectionOf(t *testing.T) {
	t.Parallel()
	tests := map[string]compare.Direction{
		"time_to_first_token.p99":              compare.LowerIsBetter,
		"inter_token_latency.avg":              compare.LowerIsBetter,
		"request_latency.std":                  compare.LowerIsBetter,
		"error_request_count.avg":              compare.LowerIsBetter,
		"request_throughput.avg":               compare.HigherIsBetter,
		"output_token_throughput_per_user.p50": compare.HigherIsBetter,
		"output_sequence_length.avg":           compare.Neutral,
		"time_to_first_token.count":            compare.Neutral,
		// AIPerf's directions of the metrics the names do not tell.
		"usage_prompt_cache_read_tokens.p50":                 compare.HigherIsBetter,
		"total_usage_prompt_cache_read_tokens.avg":           compare.HigherIsBetter,
		"overall_usage_prompt_cache_read_pct.avg":            compare.HigherIsBetter,
		"usage_prompt_cache_miss_tokens.avg":                 compare.LowerIsBetter,
		"usage_prompt_cache_write_tokens.avg":                compare.Neutral,
		"usage_prompt_tokens.avg":                            compare.Neutral,
		"usage_reasoning_tokens_diff_pct.p99":                compare.LowerIsBetter,
		"osl_mismatch_count.avg":                             compare.LowerIsBetter,
		"decode_duration.p99":                                compare.LowerIsBetter,
		"full_response_output_token_throughput_per_user.p50": compare.HigherIsBetter,
		"e2e_output_token_throughput.p10":                    compare.HigherIsBetter,
		"spec_decode_acceptance_length.avg":                  compare.HigherIsBetter,
		"nvidia_output_tokens_per_joule.avg":                 compare.HigherIsBetter,
		"nvidia_energy_per_output_token.avg":                 compare.LowerIsBetter,
		"cancelled_request_count.avg":                        compare.LowerIsBetter,
		"total_error_isl.avg":                                compare.LowerIsBetter,
	}
	for spec, want := range tests {
		keys, err := compare.ParseKeys([]string{spec})
		require.NoError(t, err)
		assert.Equal(t, want, compare.DirectionOf(keys[0]), spec)
	}
}

// golden compares got with testdata/NAME.golden (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestRenderGolden renders every report kind in every format against
// testdata/*.golden (go test -update rewrites them).
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	db := openStore(t, ":memory:")
	saveGroup(t, db, setup{name: "ttft20"}, ttfts(20.1, 19.8, 20.3)...)
	saveGroup(t, db, setup{name: "ttft60", osl: 128}, ttfts(59.7, 60.4, 60.1)...)
	saveGroup(t, db, setup{name: "single"}, ttfts(20)...)
	saveSweep(t, db, "before", scanCells, 1, 4, 8)
	saveSweep(t, db, "after", map[int][]trial{1: scanCells[16], 4: scanCells[4]}, 1, 4)
	opt := compare.Options{}
	ctx := context.Background()
	sweep := func(ref string) *store.SweepRuns {
		s, err := db.SweepRuns(ctx, ref, opt.StatKeys())
		require.NoError(t, err)
		return s
	}
	reports := map[string]compare.Report{
		"groups":    groups(t, db, opt, "ttft20", "ttft60", "single"),
		"sweep":     compare.Sweep(sweep("before"), opt),
		"sweepdiff": compare.SweepDiff(sweep("before"), sweep("after"), opt),
	}
	for name, rep := range reports {
		for _, format := range []string{"table", "markdown", "csv", "json"} {
			t.Run(name+"."+format, func(t *testing.T) {
				var buf bytes.Buffer
				require.NoError(t, compare.Render(&buf, rep, format))
				golden(t, name+"."+format, buf.Bytes())
			})
		}
	}
	t.Run("unknown format", func(t *testing.T) {
		err := compare.Render(&bytes.Buffer{}, reports["groups"], "xml")
		require.ErrorContains(t, err, `unknown format "xml"`)
	})
}

// BenchmarkCompareSweep1000 times `aiperf compare --sweep` over a stored
// sweep of 1,000 cells × 1 trial with a full summary per run: the store
// query, the computation and the table rendering.
func BenchmarkCompareSweep1000(b *testing.B) {
	db := openStore(b, filepath.Join(b.TempDir(), "aiperf.db"))
	ctx := context.Background()
	const cells = 1000
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "big", Trials: 1})
	require.NoError(b, err)
	tags := []string{metrics.TagTTFT, metrics.TagTTST, metrics.TagTTFO, metrics.TagRequestLatency, metrics.TagITL,
		metrics.TagICL, metrics.TagPerUserThroughput, metrics.TagOSL, metrics.TagISL, metrics.TagOutputTokenCount, metrics.TagSendLag}
	scalars := []string{metrics.TagOutputTokenThroughput, metrics.TagTotalTokenThroughput, metrics.TagRequestThroughput,
		metrics.TagRequestCount, metrics.TagErrorRequestCount, metrics.TagTotalISL, metrics.TagTotalOSL, metrics.TagBenchmarkDuration}
	for i := range cells {
		params := []plan.Param{{Name: "concurrency", Value: float64(1 + i%50)}, {Name: "isl", Value: float64(128 * (1 + i/50))}}
		cell := plan.Cell{ID: plan.CellID("big", params), Label: plan.CellLabel(params), Index: i, Params: params}
		r := makeRun(setup{sweepID: id, cell: &cell}, 1, trial{})
		r.Profiling.Metrics = nil
		for j, tag := range tags {
			r.Profiling.Metrics = append(r.Profiling.Metrics, metrics.Metric{Tag: tag, Unit: "ms", Stats: stats(float64(10+i+j), float64(20+i+j))})
		}
		for j, tag := range scalars {
			r.Profiling.Metrics = append(r.Profiling.Metrics, metrics.Metric{Tag: tag, Unit: "x", Value: float64(1000 - i + j)})
		}
		for k := range 10 {
			r.Records = append(r.Records, metrics.Record{Index: k, Phase: "profiling", PhaseKind: plan.KindProfiling,
				SentNs: int64(k) * 1e6, EndNs: int64(k)*1e6 + 5e8, ResponseNs: metrics.StampsOf(int64(k)*1e6+2e7, int64(k)*1e6+4e8)})
		}
		_, err := db.SaveRun(ctx, r, "")
		require.NoError(b, err)
	}
	opt := compare.Options{}
	b.ResetTimer()
	for b.Loop() {
		s, err := db.SweepRuns(ctx, "big", opt.StatKeys())
		if err != nil {
			b.Fatal(err)
		}
		rep := compare.Sweep(s, opt)
		if len(rep.Cells) != cells {
			b.Fatal(fmt.Sprintf("%d cells", len(rep.Cells)))
		}
		if err := compare.Render(&bytes.Buffer{}, rep, compare.FormatTable); err != nil {
			b.Fatal(err)
		}
	}
}
