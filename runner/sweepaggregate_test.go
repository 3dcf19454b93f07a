package runner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aiperf-go/aiperf/internal/plan"
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
