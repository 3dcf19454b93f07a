package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/runner"
)

// TestConvergedCellStopsAddingTrials: under a criterion a cell runs at
// least min(3, Trials) trials, stops once its statistic is stable, and its
// aggregate counts the trials that ran; a cell that never settles runs
// them all, and the outcome says on what it did not.
func TestConvergedCellStopsAddingTrials(t *testing.T) {
	sw := testSweep(6, 0, 1, 4)
	sw.Convergence = &search.Convergence{Metric: "time_to_first_token", Mode: search.ModeCV, Threshold: 0.05}
	ttft := map[int][]float64{1: {100, 101, 102, 103, 104, 105}, 4: {10, 20, 40, 10, 30, 50}}
	l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		c := *spec.Profile.Concurrency
		return completeRun(spec, ttft[c][spec.Info.Trial-1]), nil
	}}
	o, root := options(t, l, &fakeStore{})
	var progress strings.Builder
	o.Progress = &progress
	out, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, runner.Outcome{Total: 12, Completed: 9, Converged: 3, ConvergedCells: []string{
		"concurrency_1 after 3 of 6 trials (convergence: time_to_first_token.avg cv 0.0099 < 0.05 over 3 trials)"},
		Unconverged: []string{"concurrency_4 after 6 of 6 trials (convergence: time_to_first_token.avg cv 0.612 ≥ 0.05)"}}, out,
		"the cell that never settled says why, judged on all its trials")
	assert.Len(t, l.keys(), 9)
	assert.Contains(t, unfold(progress.String()), "not run: the cell converged after 3 trials (convergence: time_to_first_token.avg cv 0.0099 < 0.05 over 3 trials)")

	agg := readAggregate(t, filepath.Join(root, "scan", "concurrency_1", runner.AggregateFile))
	assert.Equal(t, 3, agg.Metadata.NumProfileRuns)
	assert.Equal(t, []string{"run_0001", "run_0002", "run_0003"}, agg.Metadata.RunLabels)
	agg = readAggregate(t, filepath.Join(root, "scan", "concurrency_4", runner.AggregateFile))
	assert.Equal(t, 6, agg.Metadata.NumProfileRuns)
}

// TestDistributionConvergenceReadsTheTrialsRecords: the latest trial's
// per-request values against the earlier trials', from each trial's
// profile_export.jsonl.
func TestDistributionConvergenceReadsTheTrialsRecords(t *testing.T) {
	sw := testSweep(5, 0, 1)
	sw.Convergence = &search.Convergence{Metric: "request_latency", Mode: search.ModeDistribution}
	var o runner.Options
	l := &fakeExecutor{respond: func(_ context.Context, _ int, spec runner.Spec) (*result.Run, error) {
		dir := o.TrialDir(sw.TrialList()[spec.Info.Trial-1])
		require.NoError(t, os.MkdirAll(dir, 0o755))
		var lines strings.Builder
		for i := range 30 {
			fmt.Fprintf(&lines, `{"metadata":{"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":%d,"unit":"ms"}}}`+"\n", 100+i)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "profile_export.jsonl"), []byte(lines.String()), 0o644))
		return completeRun(spec, 10), nil
	}}
	o, _ = options(t, l, &fakeStore{})
	var progress strings.Builder
	o.Progress = &progress
	out, err := runner.Run(context.Background(), sw, o)
	require.NoError(t, err)
	assert.Equal(t, 3, out.Completed)
	assert.Equal(t, 2, out.Converged)
	assert.Contains(t, unfold(progress.String()), "request_latency distribution KS p 1 > 0.05 (D 0, 30 against 60 requests)")
}

// unfold joins the progress lines report.Fit folded.
func unfold(s string) string { return strings.ReplaceAll(s, "\n  ", " ") }
