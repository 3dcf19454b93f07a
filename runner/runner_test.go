package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// launch is one call the fake launcher received.
type launch struct {
	key        string // plan.Trial key of the spec
	dir        string
	start, end time.Time
}

// fakeExecutor records its calls and answers each with respond (a complete
// run with the default).
type fakeExecutor struct {
	mu      sync.Mutex
	calls   []launch
	respond func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) // n counts from 0
}

func (f *fakeExecutor) Launch(ctx context.Context, spec runner.Spec, dir string) (*result.Run, error) {
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, launch{key: trialKey(spec.Info), dir: dir, start: time.Now()})
	f.mu.Unlock()
	var (
		run *result.Run
		err error
	)
	if f.respond != nil {
		run, err = f.respond(ctx, n, spec)
	} else {
		run = completeRun(spec, 10)
	}
	f.mu.Lock()
	f.calls[n].end = time.Now()
	f.mu.Unlock()
	return run, err
}

func (f *fakeExecutor) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.key)
	}
	return out
}

// fakeStore keeps saved runs in memory and answers CompletedTrialKeys from
// a fixed set.
type fakeStore struct {
	mu        sync.Mutex
	saved     []*result.Run
	dirs      []string
	completed map[string]bool
	resumeIDs []int64
	afterSave func() // called after each save, outside the lock
}

func (s *fakeStore) SaveRun(ctx context.Context, run *result.Run, dir string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.saved = append(s.saved, run)
	s.dirs = append(s.dirs, dir)
	n := len(s.saved)
	s.mu.Unlock()
	if s.afterSave != nil {
		s.afterSave()
	}
	return int64(n), nil
}

func (s *fakeStore) CompletedTrialKeys(_ context.Context, sweepID int64) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumeIDs = append(s.resumeIDs, sweepID)
	return s.completed, nil
}

func (s *fakeStore) runs() []*result.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*result.Run(nil), s.saved...)
}

func trialKey(info result.TrialInfo) string {
	return plan.Trial{Cell: plan.Cell{ID: info.CellID}, Number: info.Trial}.Key()
}

// completeRun is a finished trial whose TTFT avg is ttft ms.
func completeRun(spec runner.Spec, ttft float64) *result.Run {
	return &result.Run{
		Config: spec.Profile.Redacted(), Info: spec.Info, Name: spec.Name, Status: result.StatusComplete,
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: "time_to_first_token", Unit: "ms", Stats: &metrics.Stats{Avg: ttft, Min: ttft / 2, Max: ttft * 2, P50: ttft, P90: ttft, P95: ttft, P99: ttft * 2}},
			{Tag: "request_throughput", Unit: "requests/sec", Value: 100 / ttft},
		}},
	}
}

// testSweep has cells with the given concurrencies, trials each.
func testSweep(trials int, cooldown float64, concurrencies ...int) plan.Sweep {
	sw := plan.Sweep{Name: "scan", Trials: trials, CooldownSeconds: cooldown}
	for i, c := range concurrencies {
		p := plan.NewProfile()
		p.Model, p.URL = []string{"m"}, []string{"http://127.0.0.1:1"}
		p.Concurrency = plan.Ptr(c)
		p.APIKey = "sk-runner-secret"
		params := []plan.Param{{Name: "concurrency", Value: c}}
		sw.Cells = append(sw.Cells, plan.Cell{ID: plan.CellID(sw.Name, params), Label: plan.CellLabel(params),
			Index: i, Params: params, Profile: p})
	}
	return sw
}

func options(t *testing.T, l runner.Executor, s runner.Store) (runner.Options, string) {
	root := t.TempDir()
	return runner.Options{
		Executor:   l,
		Store:      s,
		SweepID:    7,
		SweepUUID:  "0b7c5e2a-9d41-4f6e-8a3b-2c1d0e9f8a7b",
		TrialDir:   func(tr plan.Trial) string { return filepath.Join(root, tr.Dir()) },
		CellDir:    func(c plan.Cell) string { return filepath.Join(root, "scan", c.Label) },
		Confidence: 0.95,
	}, root
}

// runWithin runs the sweep and fails the test if it does not return within a
// generous deadline (used where a wrong cooldown would block for an hour).
func runWithin(t *testing.T, ctx context.Context, sw plan.Sweep, o runner.Options) (runner.Outcome, error) {
	t.Helper()
	type ret struct {
		out runner.Outcome
		err error
	}
	ch := make(chan ret, 1)
	go func() {
		out, err := runner.Run(ctx, sw, o)
		ch <- ret{out, err}
	}()
	select {
	case r := <-ch:
		return r.out, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("runner.Run did not return: it is sleeping a cooldown it should not")
		return runner.Outcome{}, nil
	}
}

func TestRunsEveryTrialInOrder(t *testing.T) {
	sw := testSweep(2, 0, 1, 4, 16)
	l, s := &fakeExecutor{}, &fakeStore{}
	o, root := options(t, l, s)
	o.Name = "base"
	var progress bytes.Buffer
	o.Progress = &progress

	out, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, runner.Outcome{Total: 6, Completed: 6}, out)

	var want []string
	for _, tr := range sw.TrialList() {
		want = append(want, tr.Key())
	}
	assert.Equal(t, want, l.keys(), "cell by cell, each cell's trials back to back")
	require.Len(t, s.runs(), 6)
	for i, r := range s.runs() {
		tr := sw.TrialList()[i]
		assert.Equal(t, result.TrialInfo{Sweep: "scan", SweepID: 7, CellID: tr.Cell.ID, CellLabel: tr.Cell.Label,
			Params: tr.Cell.Params, Trial: tr.Number, SweepUUID: "0b7c5e2a-9d41-4f6e-8a3b-2c1d0e9f8a7b",
			Variation: i / 2}, r.Info, "the cell's index in the sweep is its variation")
		assert.Equal(t, "base", r.Name)
		assert.Equal(t, filepath.Join(root, tr.Dir()), s.dirs[i], "the store learns the trial's artifact dir")
		assert.Equal(t, filepath.Join(root, tr.Dir()), l.calls[i].dir)
	}
	assert.Contains(t, progress.String(), "[6/6] scan concurrency_16 trial 2: running\n[6/6] scan concurrency_16 trial 2: complete",
		"the trial running now is shown, then its result")
	for _, c := range sw.Cells {
		_, err := os.Stat(filepath.Join(root, "scan", c.Label, runner.AggregateFile))
		assert.NoError(t, err, "cell %s has its aggregate", c.Label)
	}
}

func TestCooldownOnlyBetweenTrials(t *testing.T) {
	t.Run("gap between consecutive trials", func(t *testing.T) {
		const cool = 0.05
		l := &fakeExecutor{}
		o, _ := options(t, l, &fakeStore{})
		_, err := runner.Run(context.Background(), testSweep(2, cool, 1, 2), o)
		require.NoError(t, err)
		require.Len(t, l.calls, 4)
		for i := 1; i < len(l.calls); i++ {
			gap := l.calls[i].start.Sub(l.calls[i-1].end)
			assert.GreaterOrEqual(t, gap, time.Duration(cool*float64(time.Second)), "cooldown before trial %d", i+1)
		}
	})
	t.Run("none before the first trial nor after the last", func(t *testing.T) {
		l, s := &fakeExecutor{}, &fakeStore{}
		o, _ := options(t, l, s)
		out, err := runWithin(t, context.Background(), testSweep(1, 3600, 1), o)
		require.NoError(t, err)
		assert.Equal(t, 1, out.Completed)
		assert.Len(t, l.calls, 1)
	})
	t.Run("cancelled while cooling down", func(t *testing.T) {
		l, s := &fakeExecutor{}, &fakeStore{}
		o, _ := options(t, l, s)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s.afterSave = cancel // Ctrl-C right after the first trial is stored
		out, err := runWithin(t, ctx, testSweep(3, 3600, 1), o)
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, out.Interrupted)
		assert.Len(t, l.calls, 1, "the second trial waits for the cooldown, which the cancellation cut short")
		assert.Len(t, s.runs(), 1)
	})
}

func TestFailedTrialIsStoredAndTheSweepContinues(t *testing.T) {
	sw := testSweep(2, 0, 1, 2)
	bad := sw.TrialList()[1].Key()
	l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		if trialKey(spec.Info) == bad {
			r := completeRun(spec, 10)
			r.Status, r.Error = result.StatusFailed, "every profiling request failed: 4 of 4"
			return r, errors.New("exit status 1")
		}
		return completeRun(spec, 10), nil
	}}
	s := &fakeStore{}
	o, root := options(t, l, s)

	out, err := runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, runner.ErrTrialsFailed)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "1 of 4 trials")
	assert.Equal(t, 4, out.Total)
	assert.Equal(t, 3, out.Completed)
	assert.Equal(t, 1, out.Failed)
	assert.False(t, out.Interrupted)
	assert.Equal(t, []string{"concurrency_1 trial 2: every profiling request failed: 4 of 4"}, out.Failures)
	assert.Len(t, l.calls, 4, "the trials after the failure still ran")

	runs := s.runs()
	require.Len(t, runs, 4)
	assert.Equal(t, result.StatusFailed, runs[1].Status)
	assert.Equal(t, "every profiling request failed: 4 of 4", runs[1].Error)
	assert.Equal(t, 2, runs[1].Info.Trial)

	agg := readAggregate(t, filepath.Join(root, "scan", sw.Cells[0].Label, runner.AggregateFile))
	assert.Equal(t, 2, agg.Metadata.NumProfileRuns)
	assert.Equal(t, 1, agg.Metadata.NumSuccessfulRuns, "the failed trial is left out of the aggregate")
	assert.Equal(t, []runner.FailedRun{{Label: "run_0002", Error: "every profiling request failed: 4 of 4"}}, agg.Metadata.FailedRuns)
	assert.Equal(t, []string{"run_0001"}, agg.Metadata.RunLabels)
}

func TestLaunchWithoutResultBecomesAFailedRun(t *testing.T) {
	sw := testSweep(1, 0, 1, 2)
	l := &fakeExecutor{respond: func(_ context.Context, n int, spec runner.Spec) (*result.Run, error) {
		if n == 0 {
			return nil, errors.New("trial process: signal: killed: panic: boom")
		}
		return completeRun(spec, 10), nil
	}}
	s := &fakeStore{}
	o, _ := options(t, l, s)
	o.Name = "group"

	out, err := runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, runner.ErrTrialsFailed)
	assert.Equal(t, 1, out.Failed)
	assert.Equal(t, 1, out.Completed)
	runs := s.runs()
	require.Len(t, runs, 2)
	r := runs[0]
	assert.Equal(t, result.StatusFailed, r.Status)
	assert.Equal(t, "trial process: signal: killed: panic: boom", r.Error)
	assert.Equal(t, sw.Cells[0].ID, r.Info.CellID)
	assert.Equal(t, 1, r.Info.Trial)
	assert.Equal(t, int64(7), r.Info.SweepID)
	assert.Equal(t, "group", r.Name, "the failed trial keeps its --name, so compare sees it left out")
	assert.Equal(t, []string{"m"}, r.Config.Model, "the failed run keeps the cell's configuration")
	assert.Equal(t, plan.Redacted, r.Config.APIKey, "secrets redacted")
	assert.False(t, r.StartTime.IsZero())
}

func TestCancellationStopsWithoutStoringTheInterruptedTrial(t *testing.T) {
	cases := []struct {
		name string
		// second answers the interrupted (second) launch.
		second func(ctx context.Context, spec runner.Spec) (*result.Run, error)
	}{
		{"child killed, no result", func(ctx context.Context, _ runner.Spec) (*result.Run, error) {
			return nil, fmt.Errorf("trial process: %w", ctx.Err())
		}},
		{"child stopped cleanly with an interrupted result", func(_ context.Context, spec runner.Spec) (*result.Run, error) {
			r := completeRun(spec, 10)
			r.Status, r.WasCancelled = result.StatusInterrupted, true
			return r, nil
		}},
		{"child finished anyway", func(_ context.Context, spec runner.Spec) (*result.Run, error) {
			return completeRun(spec, 10), nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l := &fakeExecutor{respond: func(ctx context.Context, n int, spec runner.Spec) (*result.Run, error) {
				if n == 1 {
					cancel() // Ctrl-C while the second trial runs
					return tc.second(ctx, spec)
				}
				return completeRun(spec, 10), nil
			}}
			s := &fakeStore{}
			o, root := options(t, l, s)
			sw := testSweep(2, 0, 1, 2)

			out, err := runner.Run(ctx, sw, o)
			require.ErrorIs(t, err, context.Canceled)
			assert.Contains(t, err.Error(), "--resume")
			assert.True(t, out.Interrupted)
			assert.Equal(t, 1, out.Completed)
			assert.Zero(t, out.Failed)
			assert.Len(t, l.calls, 2, "nothing launched after the interruption")
			runs := s.runs()
			require.Len(t, runs, 1, "the interrupted trial is not stored")
			assert.Equal(t, 1, runs[0].Info.Trial)
			_, err = os.Stat(filepath.Join(root, "scan", sw.Cells[0].Label, runner.AggregateFile))
			assert.True(t, os.IsNotExist(err), "no aggregate for a cell whose trials did not all run")
		})
	}
}

// TestATrialSignalledAloneStopsTheSweepAndSaysSo: a trial whose own
// process got a Ctrl-C (the sweep did not) stops the sweep as an
// interrupt, and the error names that trial and says why.
func TestATrialSignalledAloneStopsTheSweepAndSaysSo(t *testing.T) {
	l := &fakeExecutor{respond: func(_ context.Context, n int, spec runner.Spec) (*result.Run, error) {
		r := completeRun(spec, 10)
		if n == 1 {
			r.Status, r.WasCancelled = result.StatusInterrupted, true
		}
		return r, nil
	}}
	o, _ := options(t, l, &fakeStore{})
	sw := testSweep(2, 0, 1, 2)
	out, err := runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, sw.Cells[0].Label+" trial 2", out.TrialInterrupted)
	assert.Contains(t, err.Error(), "interrupted after 1 of 4 trials (rerun with --resume to finish): "+
		sw.Cells[0].Label+" trial 2 was interrupted by a signal to its own process, not to the sweep")
}

// writeResult writes a trial's result.json as a child would.
func writeResult(t *testing.T, dir string, run *result.Run) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	b, err := json.Marshal(run)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, runner.ResultFile), b, 0o644))
}

func TestResumeSkipsCompletedTrialsAndStillAggregatesThem(t *testing.T) {
	sw := testSweep(3, 0, 1, 2)
	trials := sw.TrialList()
	ttft := map[string]float64{}
	for i, tr := range trials {
		ttft[tr.Key()] = float64(10 * (i%3 + 1)) // 10, 20, 30 in each cell
	}
	l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		return completeRun(spec, ttft[trialKey(spec.Info)]), nil
	}}
	// Stored complete before: cell 0 trials 1 and 3, cell 1 trial 1.
	done := []plan.Trial{trials[0], trials[2], trials[3]}
	s := &fakeStore{completed: map[string]bool{}}
	o, root := options(t, l, s)
	o.Resume = true
	for _, tr := range done {
		s.completed[tr.Key()] = true
		spec := runner.Spec{Profile: tr.Cell.Profile, Info: result.TrialInfo{Sweep: "scan", SweepID: 7, SweepUUID: "0b7c5e2a-9d41-4f6e-8a3b-2c1d0e9f8a7b",
			CellID: tr.Cell.ID, CellLabel: tr.Cell.Label, Params: tr.Cell.Params, Trial: tr.Number}}
		writeResult(t, o.TrialDir(tr), completeRun(spec, ttft[tr.Key()]))
	}

	out, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, runner.Outcome{Total: 6, Skipped: 3, Completed: 3}, out)
	assert.Equal(t, []int64{7}, s.resumeIDs, "asks the store about this sweep")
	assert.Equal(t, []string{trials[1].Key(), trials[4].Key(), trials[5].Key()}, l.keys(), "only the missing trials run")
	require.Len(t, s.runs(), 3)

	for _, c := range sw.Cells {
		agg := readAggregate(t, filepath.Join(root, "scan", c.Label, runner.AggregateFile))
		assert.Equal(t, 3, agg.Metadata.NumSuccessfulRuns, "cell %s aggregates resumed and new trials", c.Label)
		st := agg.Metrics["time_to_first_token_avg"]
		require.NotNil(t, st.Mean, c.Label)
		assert.InDelta(t, 20, *st.Mean, 1e-9, c.Label)
		assert.InDelta(t, 10, *st.Std, 1e-9, c.Label)
	}
}

func TestResumeWithoutAnythingStoredRunsEverything(t *testing.T) {
	l := &fakeExecutor{}
	s := &fakeStore{completed: map[string]bool{}}
	o, _ := options(t, l, s)
	o.Resume = true
	out, err := runner.Run(context.Background(), testSweep(2, 0, 1), o)
	require.NoError(t, err)
	assert.Equal(t, 2, out.Completed)
	assert.Zero(t, out.Skipped)
}

func readAggregate(t *testing.T, path string) runner.Aggregate {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var agg runner.Aggregate
	require.NoError(t, json.Unmarshal(b, &agg))
	return agg
}

func TestAggregateOverCompleteTrials(t *testing.T) {
	sw := testSweep(4, 0, 1)
	ttfts := []float64{10, 20, 30, 0}
	l := &fakeExecutor{respond: func(_ context.Context, n int, spec runner.Spec) (*result.Run, error) {
		r := completeRun(spec, ttfts[n])
		if n == 3 { // a failed trial with wild numbers must not count
			r = completeRun(spec, 1000)
			r.Status, r.Error = result.StatusFailed, "boom"
		}
		return r, nil
	}}
	o, root := options(t, l, &fakeStore{})
	o.Confidence = 0.95
	_, err := runner.Run(context.Background(), sw, o)
	require.ErrorIs(t, err, runner.ErrTrialsFailed)

	agg := readAggregate(t, filepath.Join(root, "scan", "concurrency_1", runner.AggregateFile))
	assert.Equal(t, runner.AggregateSchemaVersion, agg.SchemaVersion)
	assert.Equal(t, "confidence", agg.Metadata.AggregationType)
	assert.Equal(t, "concurrency_1", agg.Metadata.Cell)
	assert.Equal(t, sw.Cells[0].ID, agg.Metadata.CellID)
	assert.Equal(t, 4, agg.Metadata.NumProfileRuns)
	assert.Equal(t, 3, agg.Metadata.NumSuccessfulRuns)
	assert.Equal(t, 0.95, agg.Metadata.ConfidenceLevel)

	// TTFT avg over 10, 20, 30: mean 20, sample std 10, se 10/√3,
	// t(0.975, df 2) = 4.302652729911275.
	const tCrit = 4.302652729911275
	se := 10 / math.Sqrt(3)
	st := agg.Metrics["time_to_first_token_avg"]
	assert.Equal(t, "ms", st.Unit)
	for name, c := range map[string]struct {
		got  *float64
		want float64
	}{
		"mean": {st.Mean, 20}, "std": {st.Std, 10}, "min": {st.Min, 10}, "max": {st.Max, 30}, "cv": {st.CV, 0.5},
		"se": {st.SE, se}, "t": {st.TCritical, tCrit}, "ci_low": {st.CILow, 20 - tCrit*se}, "ci_high": {st.CIHigh, 20 + tCrit*se},
	} {
		require.NotNil(t, c.got, name)
		assert.InDelta(t, c.want, *c.got, 1e-6, name)
	}
	p99 := agg.Metrics["time_to_first_token_p99"] // 2 × avg: 20, 40, 60
	require.NotNil(t, p99.Mean)
	assert.InDelta(t, 40, *p99.Mean, 1e-9)
	assert.InDelta(t, 20, *p99.Std, 1e-9)

	// A scalar metric aggregates its value under "avg": 100/10, 100/20, 100/30.
	thr := agg.Metrics["request_throughput_avg"]
	assert.Equal(t, "requests/sec", thr.Unit)
	require.NotNil(t, thr.Mean)
	assert.InDelta(t, (10+5+100.0/30)/3, *thr.Mean, 1e-9)
	assert.InDelta(t, 10, *thr.Max, 1e-9)
}

func TestAggregateOfOneTrialHasNullSpread(t *testing.T) {
	cell := testSweep(1, 0, 1).Cells[0]
	agg := runner.Aggregates(cell, []*result.Run{completeRun(runner.Spec{Profile: cell.Profile}, 12)}, 1, 0.95)
	st := agg.Metrics["time_to_first_token_avg"]
	require.NotNil(t, st.Mean)
	assert.Equal(t, 12.0, *st.Mean)
	assert.Nil(t, st.Std, "one trial has no spread")
	assert.Nil(t, st.CILow)
	assert.Nil(t, st.CIHigh)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"std":null`)
}

func TestNewSweepUUIDIsARandomVersion4UUID(t *testing.T) {
	a, b := runner.NewSweepUUID(), runner.NewSweepUUID()
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}

// TestAggregateLeavesOutInternalMetrics: AIPerf's INTERNAL metrics (the
// first request's and last response's timestamps) are not aggregated, as
// AIPerf's summaries leave them out.
func TestAggregateLeavesOutInternalMetrics(t *testing.T) {
	cell := testSweep(1, 0, 1).Cells[0]
	run := completeRun(runner.Spec{Profile: cell.Profile}, 12)
	run.Profiling.Metrics = append(run.Profiling.Metrics,
		metrics.Metric{Tag: metrics.TagMinRequestTimestamp, Unit: metrics.UnitNs, Value: 1.7e18},
		metrics.Metric{Tag: metrics.TagMaxResponseTimestamp, Unit: metrics.UnitNs, Value: 1.8e18})
	agg := runner.Aggregates(cell, []*result.Run{run}, 1, 0.95)
	assert.Contains(t, agg.Metrics, "request_throughput_avg")
	assert.NotContains(t, agg.Metrics, "min_request_timestamp_avg")
	assert.NotContains(t, agg.Metrics, "max_response_timestamp_avg")
}
