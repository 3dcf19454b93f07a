package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aiperf-go/aiperf/internal/plan"
	"github.com/aiperf-go/aiperf/internal/result"
	"github.com/aiperf-go/aiperf/internal/search"
	"github.com/aiperf-go/aiperf/store"
)

// A search is a sweep of kind search whose cells are its probes: the
// stored probes and trials come back as the history the planner replays,
// in probe and trial order, failed trials without values and interrupted
// attempts left out; the history document and the answer are kept, and
// each probe's verdict with them.
func TestSearchHistoryRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := MustOpenDB(t)
	id, err := db.BeginSweep(ctx, store.SweepMeta{Name: "sla", PlanSHA256: "d1", Kind: store.KindSearch})
	require.NoError(t, err)
	grid, err := db.BeginSweep(ctx, store.SweepMeta{Name: "grid", Trials: 1})
	require.NoError(t, err)

	probe := func(i, c int) plan.Cell {
		cell := testCell("sla", c, i)
		cell.ID += "-" + string(rune('a'+i)) // two probes at one point are two cells
		require.NoError(t, db.AddSearchProbe(ctx, id, cell, []float64{float64(c)}, "why "+cell.Label))
		return cell
	}
	save := func(cell plan.Cell, trial int, status string, ttft float64) {
		_, err := db.SaveRun(ctx, newRun(runOpts{name: "sla", records: 4, ttftMs: ttft, sweepID: id, cell: &cell, trial: trial, status: status}), "")
		require.NoError(t, err)
	}
	first, second := probe(0, 1), probe(1, 2)
	require.NoError(t, db.AddSearchProbe(ctx, id, first, []float64{99}, "again"), "recording a probe again is a no-op")
	save(second, 1, result.StatusComplete, 40)
	save(first, 1, result.StatusComplete, 10)
	save(first, 2, result.StatusFailed, 0)
	save(second, 2, result.StatusInterrupted, 50)
	probe(2, 2)

	keys := []string{"time_to_first_token.p99", "output_token_throughput.avg", "goodput.avg"}
	h, err := db.SearchHistory(ctx, id, keys)
	require.NoError(t, err)
	require.Len(t, h.Probes, 3)
	assert.Equal(t, search.Point{1}, h.Probes[0].Point)
	assert.Equal(t, []search.Trial{
		{OK: true, Values: map[string]float64{"time_to_first_token.p99": 15, "output_token_throughput.avg": 50 * 64}},
		{OK: false},
	}, h.Probes[0].Trials)
	assert.Equal(t, []search.Trial{{OK: true, Values: map[string]float64{"time_to_first_token.p99": 60, "output_token_throughput.avg": 50 * 64}}},
		h.Probes[1].Trials, "the interrupted attempt is no trial")
	assert.Equal(t, search.Point{2}, h.Probes[2].Point)
	assert.Empty(t, h.Probes[2].Trials)

	_, _, err = db.SearchDoc(ctx, "sla")
	assert.ErrorIs(t, err, store.ErrNotFound, "no history stored yet")
	conf := 0.97
	doc := search.HistoryDoc{Iterations: []search.IterationDoc{
		{IterationIdx: 0, Verdict: search.Pass, Confidence: &conf},
		{IterationIdx: 1, Verdict: search.Fail},
		{IterationIdx: 2, Verdict: search.Pending}, // interrupted before its trial ended: no verdict yet
	}, TrialsSpent: 3}
	require.NoError(t, db.SaveSearchHistory(ctx, id, doc, "concurrency: 1 passed, 2 failed"))
	got, sw, err := db.SearchDoc(ctx, "sla")
	require.NoError(t, err)
	assert.Equal(t, id, sw.ID)
	assert.Equal(t, 3, got.TrialsSpent)
	assert.Equal(t, search.Fail, got.Iterations[1].Verdict)
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM search_probes WHERE sweep_id = ? AND verdict = 'pass' AND confidence = 0.97`, id))
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM search_probes WHERE sweep_id = ? AND idx = 2 AND verdict = ''`, id))
	assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM search_probes WHERE sweep_id = ? AND idx = 0 AND why = ?`, id, "why "+first.Label))

	_, _, err = db.SearchDoc(ctx, "grid")
	assert.ErrorContains(t, err, `sweep "grid" (id 2) is a sweep, not a search`)
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, db.SaveSearchHistory(ctx, grid, doc, ""), store.ErrNotFound, "a sweep keeps no search history")

	rows, err := db.ListSweeps(ctx, 0)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, store.KindSweep, rows[0].Kind)
	assert.Equal(t, store.KindSearch, rows[1].Kind)
	assert.Equal(t, "concurrency: 1 passed, 2 failed", rows[1].Answer)
	assert.Equal(t, 3, rows[1].Cells)
	assert.Equal(t, 4, rows[1].Runs)
	limited, err := db.ListSweeps(ctx, 1)
	require.NoError(t, err)
	assert.Len(t, limited, 1)
}

// The migration refuses a kind it does not know.
func TestSweepKindChecked(t *testing.T) {
	t.Parallel()
	_, err := MustOpenDB(t).BeginSweep(context.Background(), store.SweepMeta{Name: "x", Kind: "bogus"})
	assert.ErrorContains(t, err, "CHECK constraint failed")
}
