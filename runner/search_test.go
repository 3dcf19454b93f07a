package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/report"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
	"github.com/aiperf-go/aiperf/store"
)

// slaSearch is max-concurrency-under-sla over [1, 100] with TTFT p99 < 170:
// against byConcurrency (TTFT avg 10·c, p99 twice that) it holds up to 8.
func slaSearch(rule search.TrialRule) plan.Search {
	base := plan.NewProfile()
	base.Model, base.URL = []string{"m"}, []string{"http://127.0.0.1:1"}
	return plan.Search{Name: "sla", Base: base, Config: search.Config{
		Planner:   search.PlannerMonotonic,
		Space:     search.Space{{Name: "concurrency", Path: "phases.profiling.concurrency", Lo: 1, Hi: 100, Kind: search.KindInt}},
		Objective: search.Objective{Metric: "request_throughput", Stat: "avg", Direction: search.Maximize},
		Filters:   []search.Filter{{Metric: "time_to_first_token", Stat: "p99", Op: "lt", Threshold: 170}},
		Trials:    rule,
	}}
}

// byConcurrency answers every trial with a TTFT avg of 10 ms per unit of
// its profile's concurrency.
func byConcurrency(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
	return completeRun(spec, 10*float64(*spec.Profile.Concurrency)), nil
}

// searchSetup is a real store with the search begun in it, and options.
func searchSetup(t *testing.T, s plan.Search, l runner.Executor) (*store.DB, runner.SearchOptions) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "aiperf.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	id, err := db.BeginSweep(context.Background(), store.SweepMeta{Name: s.Name, PlanSHA256: s.Digest(), Kind: store.KindSearch})
	require.NoError(t, err)
	return db, runner.SearchOptions{Executor: l, Store: db, SweepID: id, Dir: t.TempDir(), Confidence: 0.95}
}

// A search runs each probe as trials of its own cell, in AIPerf's layout,
// stores every probe and trial, rewrites search_history.json and stops at
// the boundary: 1, 2, 4, 8, 16, 12, 10, 9, answer 8.
func TestSearchRunsProbesAsCells(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	var sent []int
	l := &fakeExecutor{respond: func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
		sent = append(sent, *spec.Profile.Concurrency)
		return byConcurrency(ctx, n, spec)
	}}
	db, o := searchSetup(t, s, l)
	var progress bytes.Buffer
	o.Progress = report.Wide(&progress) // whole lines, as aiperf --wide prints them

	out, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err, progress.String())
	assert.Equal(t, "monotonic_precision_reached", out.Reason)
	assert.Equal(t, 8, out.Completed)
	require.NotNil(t, out.Summary.Bracket)
	assert.Equal(t, 8.0, out.Summary.Bracket.Pass.Value)
	assert.Equal(t, 9.0, out.Summary.Bracket.Fail.Value)
	assert.Equal(t, []int{1, 2, 4, 8, 16, 12, 10, 9}, sent)
	for i, c := range l.calls {
		assert.Equal(t, filepath.Join(o.Dir, search.TrialDir(i, 1)), c.dir)
	}

	var doc search.HistoryDoc
	readJSONFile(t, filepath.Join(o.Dir, runner.HistoryFile), &doc)
	require.NotNil(t, doc.ConvergenceReason)
	assert.Equal(t, "monotonic_precision_reached", *doc.ConvergenceReason)
	assert.Equal(t, 8, doc.TrialsSpent)
	assert.Len(t, doc.Iterations, 8)
	stored, sw, err := db.SearchDoc(context.Background(), "sla")
	require.NoError(t, err)
	assert.Equal(t, *doc.ConvergenceReason, *stored.ConvergenceReason)
	assert.Equal(t, o.SweepID, sw.ID)

	sr, err := db.SweepRuns(context.Background(), "sla", nil)
	require.NoError(t, err)
	require.Len(t, sr.Cells, 8, "a cell per probe")
	for i, c := range sr.Cells {
		assert.Equal(t, i, c.Index)
		require.Len(t, c.Runs, 1)
		assert.Equal(t, float64(sent[i]), c.Params[0].Value)
	}
	lines := progress.String()
	assert.Contains(t, lines, "search sla probe 4: concurrency 16 (")
	assert.Contains(t, lines, "search sla probe 4: concurrency 16: fail: time_to_first_token:p99:lt:170 at 320; request_throughput.avg 0.625 after 1 trial")
	assert.Contains(t, lines, "search sla probe 3: concurrency 8: pass: time_to_first_token:p99:lt:170 at 160")
	assert.Contains(t, lines, "search sla: stopped (monotonic_precision_reached)")
	assert.Equal(t, "concurrency: 8 passed (one trial), 9 failed (one trial: time_to_first_token:p99:lt:170); 8 probes, 8 trials against 100 for a 100-cell grid",
		out.Summary.String())
}

// A search interrupted mid-probe stores the trials that ended; run again
// it replays them and continues with the first trial not run: no trial
// runs twice and the answer is the uninterrupted one. A different search
// under the same sweep is refused before any trial.
func TestSearchResumes(t *testing.T) {
	s := slaSearch(search.TrialRule{Min: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &fakeExecutor{respond: func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
		if n == 7 { // probe 3's second trial: interrupted, as by Ctrl-C
			cancel()
			return &result.Run{Status: result.StatusInterrupted, Info: spec.Info, Config: spec.Profile.Redacted()}, nil
		}
		return byConcurrency(ctx, n, spec)
	}}
	db, o := searchSetup(t, s, first)
	out, err := runner.Search(ctx, s, o)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, `search "sla" interrupted after 7 trials (rerun with --resume to continue it)`)
	assert.NotContains(t, err.Error(), "context canceled", "the cause, as a sweep's: the signal, or nothing")
	assert.True(t, out.Interrupted)
	assert.Equal(t, 7, out.Completed)

	changed := s
	changed.Config.Filters = []search.Filter{{Metric: "time_to_first_token", Stat: "p99", Op: "lt", Threshold: 50}}
	none := &fakeExecutor{}
	o.Executor = none
	_, err = runner.Search(context.Background(), changed, o)
	assert.ErrorContains(t, err, `search "sla": the store holds probe 3 at concurrency 8, but this search now proposes concurrency 3 for probe 3: it is not the search that stored them`)
	assert.ErrorIs(t, err, runner.ErrRefused)
	assert.Empty(t, none.calls)

	again := &fakeExecutor{respond: byConcurrency}
	o.Executor = again
	out, err = runner.Search(context.Background(), s, o)
	require.NoError(t, err)
	assert.Equal(t, 7, out.Skipped)
	assert.Equal(t, 16-7, out.Completed, "8 probes of 2 trials, 7 stored before")
	assert.Equal(t, 8.0, out.Summary.Bracket.Pass.Value)
	assert.Equal(t, 9.0, out.Summary.Bracket.Fail.Value)
	seen := map[string]bool{}
	for _, k := range append(first.keys()[:7], again.keys()...) {
		assert.False(t, seen[k], "trial %s ran twice", k)
		seen[k] = true
	}
	assert.Equal(t, search.TrialDir(3, 2), relTo(t, o.Dir, again.calls[0].dir), "it continues with the interrupted trial")
	h, err := db.SearchHistory(context.Background(), o.SweepID, nil)
	require.NoError(t, err)
	assert.Equal(t, 16, h.TrialsSpent())
}

func relTo(t *testing.T, base, path string) string {
	t.Helper()
	rel, err := filepath.Rel(base, path)
	require.NoError(t, err)
	return rel
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// TestSearchStopsBeforeALoadItCannotDrive: with 8 requests a probe, a probe
// at concurrency 16 would never have 16 in flight: the search stops before
// it, its answer ending with what it drove (8 passed, nothing failed).
func TestSearchStopsBeforeALoadItCannotDrive(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	s.Base.RequestCount = new(8)
	var sent []int
	l := &fakeExecutor{respond: func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
		sent = append(sent, *spec.Profile.Concurrency)
		return completeRun(spec, 1), nil
	}}
	_, o := searchSetup(t, s, l)
	var progress bytes.Buffer
	o.Progress = report.Wide(&progress) // whole lines, as aiperf --wide prints them
	out, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err, progress.String())
	assert.Equal(t, runner.ReasonUndriven, out.Reason)
	assert.Equal(t, []int{1, 2, 4, 8}, sent)
	assert.Contains(t, progress.String(), "search sla: stopped (undriven_load): the next probe, concurrency 16, cannot be driven: "+
		"its concurrency 16 is more than the 8 requests it sends")
	assert.Equal(t, "concurrency: 8 passed (one trial), nothing failed", out.Summary.Bracket.String())
}

// A probe whose filtered statistic no trial measured says so in its
// verdict line ("not measured"), not "at NaN".
func TestSearchVerdictOfAnUnmeasuredStatistic(t *testing.T) {
	s := slaSearch(search.TrialRule{})
	s.Config.Filters = []search.Filter{{Metric: "inter_token_latency", Stat: "p99", Op: "lt", Threshold: 80}}
	_, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
	var progress bytes.Buffer
	o.Progress = report.Wide(&progress) // whole lines, as aiperf --wide prints them
	_, err := runner.Search(context.Background(), s, o)
	require.NoError(t, err, progress.String())
	assert.Contains(t, progress.String(), "search sla probe 0: concurrency 1: fail: inter_token_latency:p99:lt:80 not measured; "+
		"request_throughput.avg 10 after 1 trial")
	assert.NotContains(t, progress.String(), "NaN")
}

// failingPlanner proposes lo, then fails with an error that names its
// search at its line, as a Starlark planner's does.
type failingPlanner struct{ err error }

func (p failingPlanner) Next(obs []search.Observation) search.Decision {
	panic("Search.Next calls NextFrom")
}

func (p failingPlanner) NextFrom(_ search.History, obs []search.Observation) (search.Decision, error) {
	if len(obs) == 0 {
		return search.Decision{Point: search.Point{1}, Why: "start"}, nil
	}
	return search.Decision{}, p.err
}

// A planner's failure that names its search is not prefixed with the name
// again; one that does not is.
func TestSearchPlannerErrorNamesTheSearchOnce(t *testing.T) {
	for given, want := range map[string]string{
		`/p/later.star:3:1: search "sla": planner plan: no idea`: `/p/later.star:3:1: search "sla": planner plan: no idea`,
		`no idea`: `search "sla": no idea`,
	} {
		s := slaSearch(search.TrialRule{})
		s.Config.Planner = "starlark:plan"
		s.Planner = failingPlanner{err: errors.New(given)}
		_, o := searchSetup(t, s, &fakeExecutor{respond: byConcurrency})
		_, err := runner.Search(context.Background(), s, o)
		assert.EqualError(t, err, want)
	}
}

// TestSearchStopsAtAnUnmeasuredProbe: a probe whose trials all failed (the
// server went away: no request succeeded) is unmeasured, neither a pass
// nor a breach, with or without an SLA, and the search stops there rather
// than bisecting on it to a false boundary.
func TestSearchStopsAtAnUnmeasuredProbe(t *testing.T) {
	for _, filtered := range []bool{true, false} {
		s := slaSearch(search.TrialRule{})
		if !filtered { // a grid needs no SLA
			s.Config.Filters, s.Config.Planner, s.Config.Grid = nil, search.PlannerGrid, []search.Point{{1}, {2}, {4}, {8}}
		}
		var sent []int
		l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
			c := *spec.Profile.Concurrency
			sent = append(sent, c)
			r := completeRun(spec, 10*float64(c))
			if c >= 4 { // the server is gone from here on
				r.Status, r.Error, r.Profiling = result.StatusFailed, "every profiling request failed: 8 of 8", metrics.Summary{}
			}
			return r, nil
		}}
		_, o := searchSetup(t, s, l)
		var progress bytes.Buffer
		o.Progress = report.Wide(&progress)
		out, err := runner.Search(context.Background(), s, o)
		require.ErrorIs(t, err, runner.ErrTrialsFailed, "filtered %v", filtered)
		assert.Equal(t, runner.ReasonUnmeasured, out.Reason)
		assert.Equal(t, []int{1, 2, 4}, sent, "no probe after the unmeasured one")
		assert.Contains(t, progress.String(), "search sla probe 2: concurrency 4: unmeasured (every trial failed)")
		assert.Contains(t, progress.String(), "search sla: stopped (unmeasured_probe): every trial of probe 2, concurrency 4, failed")
		assert.Equal(t, "concurrency: 2 passed (one trial), nothing failed, 4 unmeasured (every trial failed)", out.Summary.Bracket.String(),
			"filtered %v", filtered)
	}
}
