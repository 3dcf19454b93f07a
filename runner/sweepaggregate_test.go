package runner_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/metrics"
	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/runner"
)

// cellAgg is a cell's aggregate with one trial per value of means (keys
// "<metric>_<stat>"), none successful when means is nil.
func cellAgg(means map[string]float64, failed ...string) runner.Aggregate {
	a := runner.Aggregate{Metrics: map[string]runner.AggregateStat{}}
	for k, v := range means {
		a.Metrics[k] = runner.AggregateStat{Mean: &v, Unit: "u"}
	}
	if means != nil {
		a.Metadata.NumSuccessfulRuns = 1
	}
	for _, f := range failed {
		a.Metadata.FailedRuns = append(a.Metadata.FailedRuns, runner.FailedRun{Label: "run_0002", Error: f})
	}
	a.Metadata.NumProfileRuns = a.Metadata.NumSuccessfulRuns + len(failed)
	return a
}

func gridCell(label string, conc int, isl any) plan.Cell {
	return plan.Cell{Label: label, Params: []plan.Param{
		{Name: "phases.profiling.concurrency", Value: conc}, {Name: "datasets.default.prompts.isl", Value: isl}}}
}

// TestSweepAggregates: AIPerf's sweep analysis over the cells' aggregates:
// a failed cell is counted and listed but has no combination; the latency
// ranked is the request latency's when a cell has no TTFT; a cell another
// beats on both throughput and latency is off the Pareto front, which is
// ordered by parameters; the first of equal cells is the best; parameters
// are named by their last part.
func TestSweepAggregates(t *testing.T) {
	cells := []plan.Cell{gridCell("c4", 4, 64), gridCell("c1", 1, 64), gridCell("c2", 2, 64), gridCell("c8", 8, 64), gridCell("c9", 9, 128)}
	aggs := []runner.Aggregate{
		cellAgg(map[string]float64{"request_throughput_avg": 40, "request_latency_p99": 90, "time_to_first_token_p99": 9}),
		cellAgg(map[string]float64{"request_throughput_avg": 10, "request_latency_p99": 20}),
		cellAgg(map[string]float64{"request_throughput_avg": 10, "request_latency_p99": 30}, "boom"), // dominated by c1
		cellAgg(map[string]float64{"request_throughput_avg": 40, "request_latency_p99": 95}),         // ties c4's throughput
		cellAgg(nil, "down", "down"),
	}
	sa, ok := runner.SweepAggregates(cells, aggs)
	assert.True(t, ok)
	assert.Equal(t, "sweep", sa.AggregationType)
	assert.Equal(t, 7, sa.NumProfileRuns)
	assert.Equal(t, 4, sa.NumSuccessfulRuns)
	assert.Equal(t, []runner.FailedRun{{Label: "c2/run_0002", Error: "boom"}, {Label: "c9/run_0002", Error: "down"},
		{Label: "c9/run_0002", Error: "down"}}, sa.FailedRuns)
	assert.Equal(t, runner.SweepMetadata{NumCombinations: 5, SweepParameters: []runner.SweepParameter{
		{Name: "isl", Values: []any{64, 128}}, {Name: "concurrency", Values: []any{4, 1, 2, 8, 9}}}}, sa.Metadata)
	assert.Len(t, sa.PerCombinationMetrics, 4, "c9 had no successful trial")
	assert.Equal(t, map[string]any{"concurrency": 4, "isl": 64}, sa.PerCombinationMetrics[0].Parameters)
	assert.Equal(t, &runner.BestConfiguration{Parameters: map[string]any{"concurrency": 4, "isl": 64}, Metric: 40, Unit: "u"},
		sa.BestConfigurations.Throughput)
	assert.Equal(t, &runner.BestConfiguration{Parameters: map[string]any{"concurrency": 1, "isl": 64}, Metric: 20, Unit: "u"},
		sa.BestConfigurations.Latency, "request_latency_p99: not every cell has TTFT")
	assert.Equal(t, []map[string]any{{"concurrency": 1, "isl": 64}, {"concurrency": 4, "isl": 64}}, sa.ParetoOptimal)

	_, ok = runner.SweepAggregates(cells[4:], aggs[4:])
	assert.False(t, ok, "no cell with a successful trial: nothing to write")

	// Two parameters ending alike keep their whole names.
	twin := []plan.Cell{{Label: "a", Params: []plan.Param{{Name: "a.isl", Value: 1}, {Name: "b.isl", Value: 2}}}}
	sa, _ = runner.SweepAggregates(twin, aggs[:1])
	assert.Equal(t, map[string]any{"a.isl": 1, "b.isl": 2}, sa.PerCombinationMetrics[0].Parameters)
}

// trialRun is a complete trial of a cell with the given request
// throughput and TTFT p99, CLIENT-BOUND when bound.
func trialRun(trial int, rps, ttftP99 float64, bound bool) *result.Run {
	return &result.Run{Status: result.StatusComplete, Info: result.TrialInfo{Trial: trial}, Audit: result.Audit{ClientBound: bound},
		Profiling: metrics.Summary{Metrics: []metrics.Metric{
			{Tag: metrics.TagRequestThroughput, Unit: "requests/sec", Value: rps},
			{Tag: metrics.TagTTFT, Unit: "ms", Stats: &metrics.Stats{Avg: ttftP99 / 2, P99: ttftP99}},
		}}}
}

// TestSweepAggregateLeavesOutClientBoundCells: a cell with a CLIENT-BOUND
// trial (the client could not drive its load) had the highest throughput
// and was named best_throughput and Pareto-optimal, unflagged, where
// `aiperf compare --sweep` calls it client-bound. Its aggregate lists the
// trial, its combination is marked client_bound, and it is neither best nor
// on the front, which it no longer pushes another cell off.
func TestSweepAggregateLeavesOutClientBoundCells(t *testing.T) {
	cells := []plan.Cell{gridCell("c8", 8, 64), gridCell("c64", 64, 64), gridCell("c16", 16, 64)}
	aggs := []runner.Aggregate{
		runner.Aggregates(cells[0], []*result.Run{trialRun(1, 270, 26, false), trialRun(2, 271, 27, false)}, 2, 0.95),
		runner.Aggregates(cells[1], []*result.Run{trialRun(1, 775, 20, true), trialRun(2, 776, 21, false)}, 2, 0.95),
		runner.Aggregates(cells[2], []*result.Run{trialRun(1, 400, 40, false), trialRun(2, 401, 41, false)}, 2, 0.95),
	}
	assert.Equal(t, []string{"run_0001"}, aggs[1].Metadata.ClientBoundRuns)
	assert.Empty(t, aggs[0].Metadata.ClientBoundRuns)
	sa, ok := runner.SweepAggregates(cells, aggs)
	assert.True(t, ok)
	require.Len(t, sa.PerCombinationMetrics, 3, "a client-bound cell is still listed")
	assert.True(t, sa.PerCombinationMetrics[1].ClientBound)
	assert.False(t, sa.PerCombinationMetrics[0].ClientBound)
	require.NotNil(t, sa.BestConfigurations.Throughput)
	assert.Equal(t, map[string]any{"concurrency": 16, "isl": 64}, sa.BestConfigurations.Throughput.Parameters)
	require.NotNil(t, sa.BestConfigurations.Latency)
	assert.Equal(t, map[string]any{"concurrency": 8, "isl": 64}, sa.BestConfigurations.Latency.Parameters)
	assert.Equal(t, []map[string]any{{"concurrency": 8, "isl": 64}, {"concurrency": 16, "isl": 64}}, sa.ParetoOptimal,
		"c64 dominates both on paper, but its numbers are the client's")

	b, err := json.Marshal(sa.PerCombinationMetrics[1])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"client_bound":true`)

	// Every cell client-bound: nothing is best, the front is empty, the cells
	// are still written.
	sa, ok = runner.SweepAggregates(cells[1:2], aggs[1:2])
	assert.True(t, ok)
	assert.Nil(t, sa.BestConfigurations.Throughput)
	assert.Nil(t, sa.BestConfigurations.Latency)
	assert.Empty(t, sa.ParetoOptimal)
}
