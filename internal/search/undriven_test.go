package search

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// DrivenBox finds, along each parameter, the range a load can be driven
// at: above a concurrency of 16 (16 requests) on an int axis, below a real
// rate, and the whole of an axis that does not decide.
func TestDrivenBox(t *testing.T) {
	space := Space{
		{Name: "concurrency", Lo: 1, Hi: 64, Kind: KindInt},
		{Name: "output_tokens_mean", Lo: 8, Hi: 512, Kind: KindInt},
		{Name: "request_count", Lo: 4, Hi: 40, Kind: KindInt},
	}
	driven := func(pt Point) bool { return pt[0] <= pt[2] } // at most request_count in flight
	box := space.DrivenBox(Point{8, 100, 16}, driven)
	assert.Equal(t, [2]float64{1, 16}, [2]float64{box[0].Lo, box[0].Hi})
	assert.Equal(t, [2]float64{8, 512}, [2]float64{box[1].Lo, box[1].Hi})
	assert.Equal(t, [2]float64{8, 40}, [2]float64{box[2].Lo, box[2].Hi}, "fewer requests than 8 cannot drive 8")

	rate := Space{{Name: "request_rate", Lo: 0.5, Hi: 100, Kind: KindReal}}
	box = rate.DrivenBox(Point{1}, func(pt Point) bool { return pt[0] <= 12.5 })
	assert.InDelta(t, 12.5, box[0].Hi, 1e-9)
	assert.Equal(t, 0.5, box[0].Lo)
}

// The answer of a search stopped short of its space names the loads it did
// not drive and why, and its grid covers the loads driven only.
func TestSummaryOfAnUndrivenSearch(t *testing.T) {
	s, err := New(Config{Planner: PlannerMonotonic, Space: Space{{Name: "concurrency", Lo: 1, Hi: 64, Kind: KindInt}},
		Filters: []Filter{{Metric: "time_to_first_token", Stat: "p95", Op: "lt", Threshold: 80}}})
	require.NoError(t, err)
	h := historyOf(probeAt{1, 10, 1}, probeAt{2, 10, 2}, probeAt{4, 10, 3}, probeAt{8, 10, 4}, probeAt{16, 10, 5})
	assert.Equal(t, "concurrency: 16 passed (one trial), nothing failed; 5 probes, 5 trials against 64 for a 64-cell grid",
		s.Summarize(h).String(), "before it is told")
	s.StopUndriven(Undriven{Next: Point{32}, Why: "--request-count 16 cannot drive them",
		Driven: Space{{Name: "concurrency", Lo: 1, Hi: 16, Kind: KindInt}}})
	sum := s.Summarize(h)
	assert.Equal(t, "concurrency: 16 passed (one trial), nothing failed; concurrency above 16 not driven: --request-count 16 cannot drive them; "+
		"5 probes, 5 trials against 16 for a 16-cell grid", sum.String())
	doc := s.Document(h, "undriven_load")
	assert.Equal(t, GridDoc{Cells: 16, Trials: 16}, doc.GridEquivalent)
	require.NotNil(t, doc.Undriven)
	assert.Equal(t, map[string]any{"concurrency": int64(32)}, doc.Undriven.Next)

	grid, err := New(Config{Planner: PlannerGrid, Space: Space{{Name: "concurrency", Lo: 1, Hi: 64, Kind: KindInt}},
		Grid: []Point{{1}, {8}, {32}, {64}}, Objective: Objective{Metric: "output_token_throughput", Stat: "avg", Direction: Maximize}})
	require.NoError(t, err)
	grid.StopUndriven(Undriven{Next: Point{32}, Why: "--request-count 16 cannot drive them",
		Driven: Space{{Name: "concurrency", Lo: 1, Hi: 16, Kind: KindInt}}})
	assert.Equal(t, 2, grid.Summarize(historyOf(probeAt{1, 10, 1}, probeAt{8, 10, 2})).GridCells, "the grid points it could drive")
}
